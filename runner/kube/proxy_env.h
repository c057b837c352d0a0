// The proxy for a cluster when its kubeconfig names none: HTTPS_PROXY (https servers)
// or HTTP_PROXY (http servers), lower-case names too, minus the hosts NO_PROXY lists,
// as kubectl (Go's http.ProxyFromEnvironment) reads them. Pure.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runner/base/vocab/status.h"

namespace envgate::kube {

using GetEnv = std::function<std::optional<std::string>(const std::string&)>;

// The proxy URL ("http://host:port", a scheme added when the variable has none) for
// `server_url`, or "" for a direct connection: no variable set, the host is in
// NO_PROXY, or it is localhost or a loopback address (never proxied, as in Go).
// Code::invalid when the variable names a proxy other than http:// (its value, which
// may hold a password, is not echoed).
Result<std::string> proxy_from_environment(const std::string& server_url, const GetEnv& getenv);

// Whether NO_PROXY `list` (comma-separated: "*", host names matching themselves and
// their subdomains, ".domain", IP addresses, IPv4 CIDRs, each with an optional :port)
// exempts `host`:`port`.
bool no_proxy_matches(const std::string& list, const std::string& host, unsigned port);

// The password in a proxy URL's user info ("" if none), so that logs can mask it.
std::string proxy_password(const std::string& proxy_url);

}  // namespace envgate::kube
