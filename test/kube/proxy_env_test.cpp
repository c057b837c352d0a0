// HTTPS_PROXY / HTTP_PROXY / NO_PROXY as kubectl (Go's ProxyFromEnvironment) reads them:
// the variable by the server's scheme, upper case first, a missing scheme meaning
// http://, loopback hosts never proxied, NO_PROXY entries by host, domain, IP, CIDR
// and port; a proxy other than http:// is refused without echoing its value.
#include <boost/test/unit_test.hpp>

#include <map>

#include "runner/kube/proxy_env.h"

namespace envgate::test {
namespace {

kube::GetEnv env(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional(it->second);
    };
}

std::string proxy_for(const std::string& server, std::map<std::string, std::string> vars) {
    auto r = kube::proxy_from_environment(server, env(std::move(vars)));
    return r.is_ok() ? *r : "error: " + r.status().message();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(proxy_env_suite)

BOOST_AUTO_TEST_CASE(picks_the_variable_of_the_servers_scheme) {
    const std::string p = "http://proxy.corp:3128";
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"HTTPS_PROXY", p}}) == p);
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"https_proxy", p}}) == p);
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"HTTP_PROXY", p}}) == "");
    BOOST_TEST(proxy_for("http://k8s.corp:8080", {{"HTTP_PROXY", p}}) == p);
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {}) == "");
    BOOST_TEST(proxy_for("https://k8s.corp", {{"HTTPS_PROXY", "proxy.corp:3128"}}) == p);
    BOOST_TEST(proxy_for("https://k8s.corp", {{"HTTPS_PROXY", p}, {"https_proxy", "http://x:1"}}) ==
               p);
}

BOOST_AUTO_TEST_CASE(loopback_and_no_proxy_hosts_go_direct) {
    const std::string p = "http://proxy.corp:3128";
    BOOST_TEST(proxy_for("https://127.0.0.1:6443", {{"HTTPS_PROXY", p}}) == "");
    BOOST_TEST(proxy_for("https://localhost:6443", {{"HTTPS_PROXY", p}}) == "");
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"HTTPS_PROXY", p}, {"NO_PROXY", "k8s.corp"}}) ==
               "");
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"HTTPS_PROXY", p}, {"no_proxy", "*"}}) == "");
    BOOST_TEST(proxy_for("https://k8s.corp:6443", {{"HTTPS_PROXY", p}, {"NO_PROXY", "other"}}) ==
               p);
}

BOOST_AUTO_TEST_CASE(no_proxy_entries) {
    struct Case {
        std::string list, host;
        unsigned port;
        bool want;
    };
    const std::vector<Case> cases = {
        {"example.com", "example.com", 443, true},
        {"example.com", "api.example.com", 443, true},
        {"example.com", "badexample.com", 443, false},
        {".example.com", "api.example.com", 443, true},
        {".example.com", "example.com", 443, true},
        {"*.example.com", "api.example.com", 443, true},
        {"EXAMPLE.com", "Api.Example.COM", 443, true},
        {"example.com:6443", "example.com", 6443, true},
        {"example.com:6443", "example.com", 443, false},
        {"10.0.0.0/8", "10.20.30.40", 443, true},
        {"10.0.0.0/8", "11.0.0.1", 443, false},
        {"192.168.1.5", "192.168.1.5", 6443, true},
        {"a.corp, b.corp ,c.corp", "b.corp", 443, true},
        {"", "example.com", 443, false},
        {"10.0.0.0/8", "example.com", 443, false},
    };
    for (const auto& c : cases) {
        BOOST_TEST(kube::no_proxy_matches(c.list, c.host, c.port) == c.want,
                   "NO_PROXY \"" << c.list << "\" for " << c.host << ":" << c.port);
    }
}

BOOST_AUTO_TEST_CASE(only_http_proxies_and_no_secret_in_the_error) {
    std::string got = proxy_for("https://k8s.corp", {{"HTTPS_PROXY", "socks5://u:s3cr3t@p:1080"}});
    BOOST_TEST(got ==
               "error: HTTPS_PROXY: only an http:// proxy is supported (got scheme \"socks5\")");
    BOOST_TEST(kube::proxy_password("http://ops:p%40ss@proxy:3128") == "p@ss");
    BOOST_TEST(kube::proxy_password("http://proxy:3128") == "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
