// Kubeconfig loading as kubectl does it: KUBECONFIG lists merged first-wins, explicit
// file and context, data vs file fields resolved against the file's directory,
// tokenFile, insecure-skip-tls-verify, exec plugins, in-cluster, and errors that name
// the file and the field.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include <Poco/Base64Encoder.h>
#include <Poco/TemporaryFile.h>

#include "runner/kube/exec_credential.h"
#include "runner/kube/kubeconfig.h"
#include "test/fakes/fake_clock.h"
#include "test/kube/temp_dir.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

namespace fs = std::filesystem;

std::string base64(const std::string& text) {
    std::ostringstream out;
    Poco::Base64Encoder encoder(out, Poco::BASE64_NO_PADDING);
    encoder << text;
    encoder.close();
    return out.str() + std::string((3 - text.size() % 3) % 3, '=');
}

// File A: current-context "a"; cluster "shared" at https://a.example.
const char* k_file_a = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: shared
  cluster: {server: "https://a.example:6443", certificate-authority: certs/ca.pem}
users:
- name: alice
  user: {token: alice-token}
contexts:
- name: a
  context: {cluster: shared, user: alice, namespace: apps}
)";

// File B: its own current-context and a "shared" cluster that file A shadows.
const char* k_file_b = R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster: {server: "https://b-shadowed.example"}
- name: other
  cluster: {server: "https://other.example", insecure-skip-tls-verify: true}
users:
- name: bob
  user: {tokenFile: bob.token}
contexts:
- name: b
  context: {cluster: other, user: bob}
- name: b-on-shared
  context: {cluster: shared, user: bob}
- name: gitlab-org/agents:gstg
  context: {cluster: other, user: bob, namespace: gitlab}
)";

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_kubeconfig)

BOOST_AUTO_TEST_CASE(merges_kubeconfig_list_first_file_wins) {
    // Given: KUBECONFIG=a:missing:b, a CA file next to a, a token file next to b.
    TempDir dir;
    const auto a = dir.write("one/config", k_file_a);
    dir.write("one/certs/ca.pem", "CA-PEM-A");
    const auto b = dir.write("two/config", k_file_b);
    dir.write("two/bob.token", "bob-token\n");
    struct Case {
        std::string name;
        std::optional<std::string> context;
        std::string server, ca, token, ns;
        bool insecure;
    };
    const std::vector<Case> cases = {
        {"current-context of the first file", std::nullopt, "https://a.example:6443", "CA-PEM-A",
         "alice-token", "apps", false},
        {"explicit context from the second file", "b", "https://other.example", "", "bob-token", "",
         true},
        {"second file's context on the first file's cluster", "b-on-shared",
         "https://a.example:6443", "CA-PEM-A", "bob-token", "", false},
        {"GitLab agent context name", "gitlab-org/agents:gstg", "https://other.example", "",
         "bob-token", "gitlab", true},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            kube::KubeconfigSources sources;
            sources.kubeconfig_env = a + ":" + dir.path + "/missing:" + b;
            sources.context = c.context;
            auto config = kube::load_rest_config(sources);
            BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
            BOOST_TEST(config->server == c.server);
            BOOST_TEST(config->ca_pem == c.ca);
            BOOST_TEST(config->bearer_token.reveal() == c.token);
            BOOST_TEST(config->namespace_name == c.ns);
            BOOST_TEST(config->insecure_skip_tls_verify == c.insecure);
        }
    }
}

BOOST_AUTO_TEST_CASE(explicit_path_wins_over_kubeconfig_env_and_home) {
    TempDir dir;
    const auto a = dir.write("a", k_file_a);
    const auto b = dir.write("b", k_file_b);
    dir.write("bob.token", "t");
    dir.write("home/.kube/config", k_file_a);
    dir.write("home/.kube/certs/ca.pem", "CA");
    kube::KubeconfigSources sources;
    sources.explicit_path = b;
    sources.kubeconfig_env = a;
    auto config = kube::load_rest_config(sources);
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_TEST(config->context_name == "b");
    // Without either: ~/.kube/config.
    kube::KubeconfigSources home_only;
    home_only.home = dir.path + "/home";
    auto from_home = kube::load_rest_config(home_only);
    BOOST_REQUIRE_MESSAGE(from_home.is_ok(), why(from_home));
    BOOST_TEST(from_home->context_name == "a");
}

BOOST_AUTO_TEST_CASE(data_fields_are_decoded_and_win_over_files) {
    // Given: *-data fields (base64) next to file fields that do not exist.
    TempDir dir;
    const std::string text =
        "clusters:\n- name: c\n  cluster:\n    server: https://c\n"
        "    certificate-authority: nope.pem\n"
        "    certificate-authority-data: " +
        base64("CA-DATA") +
        "\n"
        "users:\n- name: u\n  user:\n"
        "    client-certificate-data: " +
        base64("CERT-DATA") +
        "\n"
        "    client-key-data: " +
        base64("KEY-DATA") +
        "\n"
        "contexts:\n- name: x\n  context: {cluster: c, user: u}\n";
    const auto file = dir.write("config", text);
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_TEST(config->ca_pem == "CA-DATA");
    BOOST_TEST(config->client_cert_pem == "CERT-DATA");
    BOOST_TEST(config->client_key_pem.reveal() == "KEY-DATA");
    // And client-certificate/client-key files resolve against the kubeconfig's directory.
    dir.write("pki/user.crt", "CERT-FILE");
    dir.write("pki/user.key", "KEY-FILE");
    const auto with_files =
        dir.write("files-config",
                  "clusters:\n- name: c\n  cluster: {server: https://c}\nusers:\n- name: u\n"
                  "  user: {client-certificate: pki/user.crt, client-key: pki/user.key}\n"
                  "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
    auto from_files = kube::load_kubeconfig_files({with_files}, std::nullopt);
    BOOST_REQUIRE_MESSAGE(from_files.is_ok(), why(from_files));
    BOOST_TEST(from_files->client_cert_pem == "CERT-FILE");
    BOOST_TEST(from_files->client_key_pem.reveal() == "KEY-FILE");
}

BOOST_AUTO_TEST_CASE(errors_name_the_file_and_the_field) {
    TempDir dir;
    const auto broken = dir.write(
        "broken",
        "clusters:\n- name: c\n  cluster: {server: https://c}\n- name: noserver\n  cluster: {}\n"
        "- name: both\n  cluster: {server: https://b, insecure-skip-tls-verify: true, "
        "certificate-authority-data: Q0E=}\n"
        "users:\n- name: u\n  user: {token: t}\n- name: badexec\n  user:\n    exec: {apiVersion: "
        "client.authentication.k8s.io/v1alpha1, command: x}\n"
        "contexts:\n- name: no-user\n  context: {cluster: c, user: ghost}\n"
        "- name: no-cluster\n  context: {cluster: nowhere, user: u}\n"
        "- name: no-server\n  context: {cluster: noserver, user: u}\n"
        "- name: no-cluster-field\n  context: {user: u}\n"
        "- name: old-exec\n  context: {cluster: c, user: badexec}\n"
        "- name: insecure-with-ca\n  context: {cluster: both, user: u}\n");
    const auto syntax = dir.write("syntax", "clusters:\n  - name: [unclosed\n");
    struct Case {
        std::string name;
        std::string file;
        std::optional<std::string> context;
        std::string want;
    };
    const std::vector<Case> cases = {
        {"no current context", broken, std::nullopt,
         "kubeconfig " + broken + ": current-context: not set, and no context was chosen"},
        {"missing context", broken, "nope",
         "kubeconfig " + broken + ": contexts: context \"nope\" not found"},
        {"missing user", broken, "no-user",
         "kubeconfig " + broken +
             ": contexts[name=no-user].context.user: user \"ghost\" not found"},
        {"missing cluster", broken, "no-cluster",
         "kubeconfig " + broken +
             ": contexts[name=no-cluster].context.cluster: cluster \"nowhere\" not found"},
        {"missing server", broken, "no-server",
         "kubeconfig " + broken + ": clusters[name=noserver].cluster.server: missing"},
        {"missing cluster field", broken, "no-cluster-field",
         "kubeconfig " + broken + ": contexts[name=no-cluster-field].context.cluster: missing"},
        {"unsupported exec apiVersion", broken, "old-exec",
         "kubeconfig " + broken +
             ": users[name=badexec].user.exec.apiVersion: "
             "\"client.authentication.k8s.io/v1alpha1\" is not supported (want "
             "client.authentication.k8s.io/v1)"},
        {"insecure with a CA", broken, "insecure-with-ca",
         "kubeconfig " + broken +
             ": clusters[name=both].cluster.insecure-skip-tls-verify: "
             "cannot be combined with a certificate-authority"},
        {"YAML syntax", syntax, "x",
         "kubeconfig " + syntax + ":3:1: YAML syntax error: end of sequence flow not found"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto config = kube::load_kubeconfig_files({c.file}, c.context);
            BOOST_REQUIRE(!config.is_ok());
            BOOST_TEST(config.status().code() == Code::invalid);
            BOOST_TEST(config.status().message().rfind(c.want, 0) == 0u, config.status().message());
        }
    }
}

BOOST_AUTO_TEST_CASE(missing_token_file_names_the_field) {
    TempDir dir;
    const auto file = dir.write("config",
                                "clusters:\n- name: c\n  cluster: {server: https://c}\n"
                                "users:\n- name: u\n  user: {tokenFile: gone.token}\n"
                                "contexts:\n- name: x\n  context: {cluster: c, user: u}\n");
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE(!config.is_ok());
    BOOST_TEST(config.status().message().find("users[name=u].user.tokenFile") != std::string::npos);
    BOOST_TEST(config.status().message().find(dir.path + "/gone.token") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(exec_plugin_runs_with_args_and_env_and_is_cached_until_expiry) {
    // Given: a plugin script (relative to the kubeconfig) that prints a token built from
    // its argument and an env var, counting its runs in a file.
    TempDir dir;
    dir.write(
        "bin/plugin.sh",
        "#!/bin/sh\necho run >> \"$(dirname \"$0\")/runs\"\n"
        "case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) exit 3;; esac\n"
        "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        "\"status\":{\"token\":\"tok-%s-%s\",\"expirationTimestamp\":\"2023-11-14T22:20:00Z\"}}'"
        " \"$1\" \"$AGENT\"\n",
        true);
    const auto file = dir.write(
        "config",
        "clusters:\n- name: c\n  cluster: {server: https://c}\nusers:\n- name: u\n  user:\n"
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
        "      command: ./bin/plugin.sh\n      args: [gstg]\n"
        "      env: [{name: AGENT, value: kas}]\n"
        "contexts:\n- name: x\n  context: {cluster: c, user: u}\n");
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_REQUIRE(config->exec.has_value());
    BOOST_TEST(config->exec->command == dir.path + "/bin/plugin.sh");
    // When: credentials are asked for three times, the last after the expiry.
    FakeClock clock(*parse_rfc3339("2023-11-14T22:00:00Z"));
    kube::ExecCredentialProvider provider(*config->exec, clock);
    auto first = provider.get();
    BOOST_REQUIRE_MESSAGE(first.is_ok(), why(first));
    BOOST_TEST(first->token.reveal() == "tok-gstg-kas");
    BOOST_REQUIRE(provider.get().is_ok());
    BOOST_TEST(provider.runs() == 1);
    clock.advance(std::chrono::minutes(21));
    BOOST_REQUIRE(provider.get().is_ok());
    // Then: the plugin ran once per expiry.
    BOOST_TEST(provider.runs() == 2);
    std::ifstream runs(dir.path + "/bin/runs");
    int lines = 0;
    for (std::string line; std::getline(runs, line);) {
        ++lines;
    }
    BOOST_TEST(lines == 2);
}

BOOST_AUTO_TEST_CASE(exec_plugin_failure_is_unauthorized_without_its_output) {
    TempDir dir;
    const auto script =
        dir.write("fail.sh", "#!/bin/sh\necho '{\"secret\":\"leak-me\"}'\nexit 5\n", true);
    auto creds = kube::run_exec_plugin(
        {"client.authentication.k8s.io/v1", script, {}, {}, std::chrono::seconds(60)});
    BOOST_REQUIRE(!creds.is_ok());
    BOOST_TEST(creds.status().code() == Code::unauthorized);
    BOOST_TEST(creds.status().message() ==
               "exec credential plugin " + script + ": exited with status 5");
}

BOOST_AUTO_TEST_CASE(exec_credential_fields_of_the_wrong_type_are_refused_not_thrown) {
    // Given: plugins printing a null token (read as absent), a numeric token, a list key.
    TempDir dir;
    struct Case {
        const char* name;
        const char* status;
        const char* want;
    };
    const Case cases[] = {
        {"null token", R"({"token": null})", "ExecCredential has neither token nor certificate"},
        {"number token", R"({"token": 12345})", "status.token must be a string, not number"},
        {"list key", R"({"clientCertificateData": "x", "clientKeyData": []})",
         "status.clientKeyData must be a string, not array"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            const auto script = dir.write(
                "plugin.sh",
                std::string("#!/bin/sh\ncat <<'EOF'\n{\"apiVersion\": "
                            "\"client.authentication.k8s.io/v1\", \"kind\": \"ExecCredential\", "
                            "\"status\": ") +
                    c.status + "}\nEOF\n",
                true);
            auto creds = kube::run_exec_plugin(
                {"client.authentication.k8s.io/v1", script, {}, {}, std::chrono::seconds(60)});
            BOOST_REQUIRE(!creds.is_ok());
            BOOST_TEST(creds.status().code() == Code::unauthorized);
            BOOST_TEST(creds.status().message().find(c.want) != std::string::npos,
                       creds.status().message());
        }
    }
}

BOOST_AUTO_TEST_CASE(in_cluster_reads_the_service_account_directory) {
    // Given: no kubeconfig anywhere, the service env vars, and a service-account directory.
    TempDir dir;
    dir.write("sa/token", "sa-token\n");
    dir.write("sa/ca.crt", "SA-CA");
    dir.write("sa/namespace", "gitlab");
    kube::KubeconfigSources sources;
    sources.home = dir.path + "/nohome";
    sources.in_cluster_root = dir.path + "/sa";
    sources.service_host = "10.0.0.1";
    sources.service_port = "443";
    auto config = kube::load_rest_config(sources);
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_TEST(config->server == "https://10.0.0.1:443");
    BOOST_TEST(config->bearer_token.reveal() == "sa-token");
    BOOST_TEST(config->token_file == dir.path + "/sa/token");
    BOOST_TEST(config->ca_pem == "SA-CA");
    BOOST_TEST(config->namespace_name == "gitlab");
    // And an IPv6 service host is bracketed; without env vars, loading fails clearly.
    auto v6 = kube::load_in_cluster(dir.path + "/sa", "fd00::1", "443");
    BOOST_REQUIRE(v6.is_ok());
    BOOST_TEST(v6->server == "https://[fd00::1]:443");
    sources.service_host.clear();
    auto none = kube::load_rest_config(sources);
    BOOST_REQUIRE(!none.is_ok());
    BOOST_TEST(none.status().message().find("no kubeconfig found") == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
