#include "runner/kube/proxy_env.h"

#include <Poco/Exception.h>
#include <Poco/Net/IPAddress.h>
#include <Poco/String.h>
#include <Poco/URI.h>

#include <sstream>

namespace envgate::kube {
namespace {

std::optional<std::string> first_set(const GetEnv& getenv, const std::string& upper,
                                     const std::string& lower) {
    for (const auto& name : {upper, lower}) {
        if (auto v = getenv(name); v && !v->empty()) {
            return v;
        }
    }
    return std::nullopt;
}

bool is_loopback(const std::string& host) {
    if (Poco::icompare(host, "localhost") == 0) {
        return true;
    }
    Poco::Net::IPAddress ip;
    return Poco::Net::IPAddress::tryParse(host, ip) && ip.isLoopback();
}

// "10.0.0.0/8" contains `host` (IPv4 only, as most NO_PROXY CIDRs are).
bool cidr_contains(const std::string& cidr, const std::string& host) {
    const auto slash = cidr.find('/');
    Poco::Net::IPAddress net;
    Poco::Net::IPAddress ip;
    if (!Poco::Net::IPAddress::tryParse(cidr.substr(0, slash), net) ||
        !Poco::Net::IPAddress::tryParse(host, ip) || net.family() != ip.family()) {
        return false;
    }
    try {
        const unsigned bits = static_cast<unsigned>(std::stoul(cidr.substr(slash + 1)));
        Poco::Net::IPAddress mask(bits, net.family());
        return (ip & mask) == (net & mask);
    } catch (const std::exception&) {
        return false;
    }
}

bool entry_matches(std::string entry, const std::string& host, unsigned port) {
    if (entry == "*") {
        return true;
    }
    // An optional ":port" (not inside an IPv6 address or a CIDR).
    if (auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon &&
                                       entry.find('/') == std::string::npos) {
        if (entry.substr(colon + 1) != std::to_string(port)) {
            return false;
        }
        entry.resize(colon);
    }
    if (entry.find('/') != std::string::npos) {
        return cidr_contains(entry, host);
    }
    if (entry.rfind("*.", 0) == 0) {
        entry.erase(0, 1);
    }
    const std::string h = Poco::toLower(host);
    entry = Poco::toLower(entry);
    if (entry.front() == '.') {  // ".example.com": its subdomains, and example.com itself
        return h.ends_with(entry) || h == entry.substr(1);
    }
    return h == entry || h.ends_with("." + entry);
}

}  // namespace

bool no_proxy_matches(const std::string& list, const std::string& host, unsigned port) {
    std::istringstream in(list);
    std::string entry;
    while (std::getline(in, entry, ',')) {
        Poco::trimInPlace(entry);
        if (!entry.empty() && entry_matches(entry, host, port)) {
            return true;
        }
    }
    return false;
}

std::string proxy_password(const std::string& proxy_url) {
    try {
        const std::string info = Poco::URI(proxy_url).getUserInfo();
        const auto colon = info.find(':');
        std::string password;
        if (colon != std::string::npos) {
            Poco::URI::decode(info.substr(colon + 1), password);
        }
        return password;
    } catch (const Poco::Exception&) {
        return "";
    }
}

Result<std::string> proxy_from_environment(const std::string& server_url, const GetEnv& getenv) {
    Poco::URI server;
    try {
        server = Poco::URI(server_url);
    } catch (const Poco::Exception&) {
        return std::string();  // the transport reports the bad server URL
    }
    const bool https = server.getScheme() == "https";
    const std::string var = https ? "HTTPS_PROXY" : "HTTP_PROXY";
    auto proxy = first_set(getenv, var, Poco::toLower(var));
    if (!proxy || is_loopback(server.getHost())) {
        return std::string();
    }
    if (auto no_proxy = first_set(getenv, "NO_PROXY", "no_proxy");
        no_proxy && no_proxy_matches(*no_proxy, server.getHost(), server.getPort())) {
        return std::string();
    }
    std::string url = proxy->find("://") == std::string::npos ? "http://" + *proxy : *proxy;
    try {
        Poco::URI uri(url);
        if (uri.getScheme() != "http" || uri.getHost().empty()) {
            return Status(Code::invalid, var +
                                             ": only an http:// proxy is supported (got scheme \"" +
                                             uri.getScheme() + "\")");
        }
    } catch (const Poco::Exception&) {
        return Status(Code::invalid, var + ": is not a URL");
    }
    return url;
}

}  // namespace envgate::kube
