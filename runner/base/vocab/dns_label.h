// The Kubernetes DNS-1123 label rule, shared by every layer that names something in a
// cluster: environment and namespace names in envgate.yml, lock names (files, Leases).
#pragma once

#include <string_view>

namespace envgate {

// True for a Kubernetes DNS-1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends.
bool is_dns1123_label(std::string_view s);

}  // namespace envgate
