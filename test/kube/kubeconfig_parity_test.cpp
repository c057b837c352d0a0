// kubeconfig options that clusters behind proxies and shared CI identities use, as
// kubectl reads them: cluster tls-server-name (verified against a certificate issued
// for another name than the host connected to) and proxy-url (http:// only), user
// as / as-uid / as-groups (sent as Impersonate-* headers, seen by the server); and
// errors that name the file and the field (a missing context lists those there are).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include <Poco/String.h>
#include <Poco/TemporaryFile.h>

#include "runner/kube/kubeconfig.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

namespace fs = std::filesystem;

struct KubeconfigFile {
    std::string path = Poco::TemporaryFile::tempName() + "-kubeconfig";
    explicit KubeconfigFile(const std::string& text) { std::ofstream(path) << text; }
    ~KubeconfigFile() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
};

// One context "x" of cluster `cluster` (a flow mapping body) and user `user`.
std::string kubeconfig(const std::string& cluster, const std::string& user) {
    return "clusters:\n- name: c\n  cluster: " + cluster + "\nusers:\n- name: u\n  user: " + user +
           "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n";
}

std::vector<std::string> header_values(const SeenRequest& request, const std::string& name) {
    std::vector<std::string> out;
    for (const auto& [key, value] : request.headers) {
        if (Poco::icompare(key, name) == 0) {
            out.push_back(value);
        }
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubeconfig_parity)

BOOST_AUTO_TEST_CASE(reads_tls_server_name_proxy_url_and_impersonation) {
    KubeconfigFile file(kubeconfig(
        "{server: \"https://10.0.0.1:6443\", tls-server-name: kube.internal, "
        "proxy-url: \"http://proxy.example:3128\"}",
        "{token: t, as: deployer, as-uid: \"42\", as-groups: [sre, \"system:authenticated\"]}"));
    auto config = kube::load_kubeconfig_files({file.path}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_TEST(config->tls_server_name == "kube.internal");
    BOOST_TEST(config->proxy_url == "http://proxy.example:3128");
    BOOST_TEST(config->impersonate_user == "deployer");
    BOOST_TEST(config->impersonate_uid == "42");
    BOOST_TEST(
        (config->impersonate_groups == std::vector<std::string>{"sre", "system:authenticated"}));
}

BOOST_AUTO_TEST_CASE(bad_options_name_the_file_and_the_field) {
    struct Case {
        std::string name, cluster, user, want;
    };
    const std::vector<Case> cases = {
        {"groups without a user", "{server: https://c}", "{as-groups: [sre]}",
         ": users[name=u].user.as: missing; as-groups and as-uid impersonate a user named by `as`"},
        {"groups not a list", "{server: https://c}", "{as: d, as-groups: sre}",
         ": users[name=u].user.as-groups: must be a list of strings"},
        {"socks proxy", "{server: https://c, proxy-url: \"socks5://p:1080\"}", "{token: t}",
         ": clusters[name=c].cluster.proxy-url: scheme \"socks5\" is not supported; use an "
         "http:// proxy"},
        {"tls-server-name not a string", "{server: https://c, tls-server-name: [a]}", "{token: t}",
         ": clusters[name=c].cluster.tls-server-name: must be a string"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            KubeconfigFile file(kubeconfig(c.cluster, c.user));
            auto config = kube::load_kubeconfig_files({file.path}, "x");
            BOOST_REQUIRE(!config.is_ok());
            BOOST_TEST(config.status().message() == "kubeconfig " + file.path + c.want);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_missing_context_lists_the_available_ones) {
    KubeconfigFile file(kubeconfig("{server: https://c}", "{token: t}") +
                        "- name: \"acme/agents:prod\"\n  context: {cluster: c, user: u}\n");
    auto config = kube::load_kubeconfig_files({file.path}, "acme/agents:staging");
    BOOST_REQUIRE(!config.is_ok());
    BOOST_TEST(config.status().message() ==
               "kubeconfig " + file.path +
                   ": contexts: context \"acme/agents:staging\" not found; the contexts are: "
                   "acme/agents:prod, x");
}

BOOST_AUTO_TEST_CASE(a_proxy_password_never_reaches_the_message) {
    KubeconfigFile file(
        kubeconfig("{server: https://c, proxy-url: \"ftp://ops:s3cr3t@p:21\"}", "{token: t}"));
    auto config = kube::load_kubeconfig_files({file.path}, "x");
    BOOST_REQUIRE(!config.is_ok());
    BOOST_TEST(config.status().message().find("s3cr3t") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(impersonation_headers_reach_the_server) {
    // Given: a server, and a config that impersonates a user with two groups.
    TestApiServer server;
    server.push_json(200, R"({"metadata":{"name":"envgate-gprd"}})");
    server.push_json(200, R"({"metadata":{"name":"envgate-gprd"}})");
    kube::RestConfig config;
    config.server = server.url();
    config.bearer_token = kube::SecretString("t0ken");
    config.impersonate_user = "deployer";
    config.impersonate_uid = "42";
    config.impersonate_groups = {"sre", "system:authenticated"};
    // When: one request with, one without impersonation.
    auto with = get_test_lease(config);
    config.impersonate_user.clear();
    config.impersonate_uid.clear();
    config.impersonate_groups.clear();
    auto without = get_test_lease(config);
    // Then: the first carried Impersonate-User, -Uid and one -Group header per group.
    BOOST_REQUIRE(with.is_ok());
    BOOST_REQUIRE(without.is_ok());
    auto seen = server.requests();
    BOOST_REQUIRE_EQUAL(seen.size(), 2u);
    BOOST_TEST(
        (header_values(seen[0], "Impersonate-User") == std::vector<std::string>{"deployer"}));
    BOOST_TEST((header_values(seen[0], "Impersonate-Uid") == std::vector<std::string>{"42"}));
    BOOST_TEST((header_values(seen[0], "Impersonate-Group") ==
                std::vector<std::string>{"sre", "system:authenticated"}));
    BOOST_TEST(seen[0].authorization == "Bearer t0ken");
    BOOST_TEST(header_values(seen[1], "Impersonate-User").empty());
    BOOST_TEST(header_values(seen[1], "Impersonate-Group").empty());
}

BOOST_AUTO_TEST_CASE(tls_server_name_verifies_a_certificate_issued_for_another_name) {
    // Given: an HTTPS server on 127.0.0.1 whose certificate names only kube.internal.
    TestApiServer server(ServerTls{shared_pki().named_cert, shared_pki().named_key, {}});
    struct Case {
        std::string name, server_name;
        bool want_ok;
    };
    const std::vector<Case> cases = {
        {"the host connected to", "", false},
        {"tls-server-name kube.internal", "kube.internal", true},
        {"tls-server-name of another host", "other.internal", false},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            server.push_json(200, R"({"metadata":{"name":"envgate-gprd"}})");
            kube::RestConfig config;
            config.server = server.url();
            config.ca_pem = TestPki::read(shared_pki().ca_cert);
            config.tls_server_name = c.server_name;
            auto result = get_test_lease(config);
            BOOST_TEST(result.is_ok() == c.want_ok, why(result));
            if (!c.want_ok) {
                BOOST_TEST(result.status().code() == Code::failed);
            }
        }
    }
    // Then: only the handshake that verified kube.internal reached the server.
    BOOST_TEST(server.requests().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
