#include "runner/base/base64.h"

#include <exception>
#include <iterator>
#include <sstream>

#include <Poco/Base64Decoder.h>

namespace envgate {

std::optional<std::string> decode_base64(std::string_view encoded) {
    try {
        std::istringstream in{std::string(encoded)};
        Poco::Base64Decoder decoder(in);
        return std::string((std::istreambuf_iterator<char>(decoder)),
                           std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace envgate
