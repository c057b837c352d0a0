// Base64 decoding (RFC 4648, standard alphabet), the one place envgate decodes it:
// kubeconfig's *-data fields, and JWT segments once turned from base64url.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace envgate {

// The bytes `encoded` stands for; nullopt when it is not valid base64.
std::optional<std::string> decode_base64(std::string_view encoded);

}  // namespace envgate
