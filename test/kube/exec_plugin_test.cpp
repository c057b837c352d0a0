// kubeconfig exec credential plugins beyond running one: provideClusterInfo (the
// cluster handed over in KUBERNETES_EXEC_INFO's spec.cluster, with the field names of
// client.authentication.k8s.io/v1 Cluster and the cluster's exec extension as
// spec.cluster.config) and installHint (shown when the command is not there), with
// errors that name the file and the field; one plugin run per credential for all the
// connections of a session, also after a 401. The re-run after a 401 is also in
// http_kube_api_test.cpp and, against kubesim, test/e2e/exec_plugin_e2e.sh.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runner/kube/exec_credential.h"
#include "runner/kube/http_kube_api.h"
#include "runner/kube/kubeconfig.h"
#include "test/fakes/fake_clock.h"
#include "test/kube/temp_dir.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A CA's PEM, "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n", as
// base64 (-w0), worked out apart from the code under test: the plugin gets the same.
const std::string k_ca_base64 =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

// A kubeconfig whose context "x" has cluster body `cluster` and user exec body `exec`
// (block YAML, indented under their keys).
std::string kubeconfig(const std::string& cluster, const std::string& exec) {
    return "clusters:\n- name: c\n  cluster:\n" + cluster + "users:\n- name: u\n  user:\n" +
           "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n" + exec +
           "contexts:\n- name: x\n  context: {cluster: c, user: u}\n";
}

const std::string k_full_cluster =
    "    server: https://kube.example:6443\n"
    "    certificate-authority-data: " +
    k_ca_base64 +
    "\n"
    "    tls-server-name: api.internal\n"
    "    proxy-url: http://proxy.example:3128\n"
    "    extensions:\n"
    "    - name: other.example.com/thing\n"
    "      extension: {ignored: true}\n"
    "    - name: client.authentication.k8s.io/exec\n"
    "      extension:\n"
    "        audience: envgate\n"
    "        replicas: 3\n"
    "        quoted: \"yes\"\n"
    "        scopes: [read, write]\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_exec_plugin)

BOOST_AUTO_TEST_CASE(provide_cluster_info_hands_the_resolved_cluster_to_the_plugin) {
    // Given: a plugin that saves KUBERNETES_EXEC_INFO, under provideClusterInfo: true.
    TempDir dir;
    dir.write("plugin.sh",
              "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/info\"\n"
              "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":"
              "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"t\"}}'\n",
              true);
    const auto file =
        dir.write("config",
                  kubeconfig(k_full_cluster,
                             "      command: ./plugin.sh\n      provideClusterInfo: true\n"
                             "      interactiveMode: Never\n"),
                  false);
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    BOOST_REQUIRE(config->exec && config->exec->cluster);
    // When: it runs.
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::ExecCredentialProvider provider(*config->exec, clock);
    auto creds = provider.get();
    BOOST_REQUIRE_MESSAGE(creds.is_ok(), why(creds));
    // Then: it saw the cluster with client-go's field names, the CA base64-encoded, the
    // exec extension's YAML as JSON (typed as kubectl reads it), no other extension.
    std::ifstream in(dir.path + "/info");
    const json seen = json::parse(in);
    const json want = {{"apiVersion", "client.authentication.k8s.io/v1"},
                       {"kind", "ExecCredential"},
                       {"spec",
                        {{"interactive", false},
                         {"cluster",
                          {{"server", "https://kube.example:6443"},
                           {"certificate-authority-data", k_ca_base64},
                           {"tls-server-name", "api.internal"},
                           {"proxy-url", "http://proxy.example:3128"},
                           {"config",
                            {{"audience", "envgate"},
                             {"replicas", 3},
                             {"quoted", "yes"},
                             {"scopes", {"read", "write"}}}}}}}}};
    BOOST_CHECK_MESSAGE(seen == want, seen.dump() << " != " << want.dump());
}

BOOST_AUTO_TEST_CASE(without_provide_cluster_info_the_plugin_gets_no_cluster) {
    // Given: the same cluster, provideClusterInfo false (and, in a second user, absent).
    TempDir dir;
    for (const std::string provide : {"      provideClusterInfo: false\n", ""}) {
        BOOST_TEST_CONTEXT("exec: " << provide) {
            const auto file = dir.write(
                "config", kubeconfig(k_full_cluster, "      command: plugin\n" + provide), false);
            auto config = kube::load_kubeconfig_files({file}, "x");
            BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
            // Then: the exec info has the spec client-go sends without it.
            BOOST_TEST(!config->exec->cluster);
            BOOST_TEST(json::parse(kube::exec_info_json(*config->exec)) ==
                       json::parse(R"({"apiVersion":"client.authentication.k8s.io/v1",
                           "kind":"ExecCredential","spec":{"interactive":false}})"));
        }
    }
}

BOOST_AUTO_TEST_CASE(insecure_cluster_and_disable_compression_are_sent_as_set) {
    TempDir dir;
    const auto file =
        dir.write("config",
                  kubeconfig("    server: https://10.0.0.1\n    insecure-skip-tls-verify: true\n"
                             "    disable-compression: true\n",
                             "      command: plugin\n      provideClusterInfo: true\n"),
                  false);
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    const json spec = json::parse(kube::exec_info_json(*config->exec))["spec"];
    BOOST_TEST(spec["cluster"] == json::parse(R"({"server":"https://10.0.0.1",
        "insecure-skip-tls-verify":true,"disable-compression":true})"));
}

BOOST_AUTO_TEST_CASE(a_missing_plugin_names_its_field_and_prints_the_install_hint) {
    // Given: commands that are not there: a name not on PATH, a path to nothing, a file
    // that is not executable; each user with an installHint.
    TempDir dir;
    dir.write("not-executable.sh", "#!/bin/sh\nexit 0\n", false);
    struct Case {
        std::string command, resolved, what;
    };
    const Case cases[] = {
        {"envgate-test-no-such-plugin", "envgate-test-no-such-plugin", "not found on PATH"},
        {"./bin/missing", dir.path + "/./bin/missing", "no such executable file"},
        {"./not-executable.sh", dir.path + "/./not-executable.sh", "no such executable file"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.command) {
            const auto file =
                dir.write("config",
                          kubeconfig("    server: https://c\n",
                                     "      command: " + c.command +
                                         "\n      installHint: |\n        Install it with:\n"
                                         "          apt-get install example-auth-plugin\n"),
                          false);
            auto config = kube::load_kubeconfig_files({file}, "x");
            BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
            BOOST_REQUIRE(config->exec);
            // When: credentials are asked for.
            FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
            kube::ExecCredentialProvider provider(*config->exec, clock);
            auto creds = provider.get();
            // Then: unauthorized, naming the command and its field, then the hint.
            BOOST_REQUIRE(!creds.is_ok());
            BOOST_TEST(creds.status().code() == Code::unauthorized);
            BOOST_TEST(creds.status().message() ==
                       "exec credential plugin " +
                           fs::path(c.resolved).lexically_normal().string() + ": " + c.what +
                           " (kubeconfig " + file +
                           ": users[name=u].user.exec.command)\n\nInstall it with:\n"
                           "  apt-get install example-auth-plugin");
        }
    }
}

BOOST_AUTO_TEST_CASE(bad_exec_cluster_fields_name_the_file_and_the_field) {
    TempDir dir;
    struct Case {
        std::string name, cluster, exec, want;
    };
    const Case cases[] = {
        {"provideClusterInfo not a boolean", "    server: https://c\n",
         "      command: p\n      provideClusterInfo: maybe\n",
         ": users[name=u].user.exec.provideClusterInfo: must be true or false"},
        {"extensions not a list", "    server: https://c\n    extensions: {a: b}\n",
         "      command: p\n      provideClusterInfo: true\n",
         ": clusters[name=c].cluster.extensions: must be a list"},
        {"disable-compression not a boolean",
         "    server: https://c\n    disable-compression: [x]\n",
         "      command: p\n      provideClusterInfo: true\n",
         ": clusters[name=c].cluster.disable-compression: must be true or false"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            const auto file = dir.write("config", kubeconfig(c.cluster, c.exec), false);
            auto config = kube::load_kubeconfig_files({file}, "x");
            BOOST_REQUIRE(!config.is_ok());
            BOOST_TEST(config.status().message() == "kubeconfig " + file + c.want);
        }
    }
}

BOOST_AUTO_TEST_CASE(connections_of_one_session_share_one_plugin_run_per_credential) {
    // Given: two connections sharing one provider, the plugin handing out token-N on its
    // Nth run; the server rejects the first request of the second connection (401).
    TempDir dir;
    const auto script =
        dir.write("plugin.sh",
                  "#!/bin/sh\necho x >> \"$(dirname \"$0\")/runs\"\n"
                  "n=$(wc -l < \"$(dirname \"$0\")/runs\")\n"
                  "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
                  "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"token-%s\"}}' $n\n",
                  true);
    TestApiServer server;
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::RestConfig config;
    config.server = server.url();
    config.exec = kube::ExecConfig{};
    config.exec->api_version = "client.authentication.k8s.io/v1";
    config.exec->command = script;
    kube::HttpOptions options;
    options.exec_credentials = std::make_shared<kube::ExecCredentialProvider>(*config.exec, clock);
    auto first = kube::HttpKubeApi::create(config, clock, options);
    auto second = kube::HttpKubeApi::create(config, clock, options);
    BOOST_REQUIRE(first.is_ok() && second.is_ok());
    const auto lease = kube::leases("locks", "envgate-gprd");
    server.push_json(200, "{}");
    server.push_json(401, status_body(401, "Unauthorized", "token expired"));
    server.push_json(200, "{}");
    server.push_json(200, "{}");
    // When: a read on each connection, then one more on the first.
    BOOST_TEST((*first)->get(lease).is_ok());
    BOOST_TEST((*second)->get(lease).is_ok());
    BOOST_TEST((*first)->get(lease).is_ok());
    // Then: one run for both connections, one more after the 401, whose token the first
    // connection then uses without a run of its own.
    BOOST_TEST(options.exec_credentials->runs() == 2);
    const auto seen = server.requests();
    BOOST_REQUIRE(seen.size() == 4u);
    BOOST_TEST(seen[0].authorization == "Bearer token-1");
    BOOST_TEST(seen[1].authorization == "Bearer token-1");
    BOOST_TEST(seen[2].authorization == "Bearer token-2");
    BOOST_TEST(seen[3].authorization == "Bearer token-2");
}

BOOST_AUTO_TEST_CASE(a_late_401_for_replaced_credentials_runs_the_plugin_no_more) {
    // Given: credentials of run 1, replaced by run 2 after a 401.
    TempDir dir;
    const auto script =
        dir.write("plugin.sh",
                  "#!/bin/sh\necho '{\"kind\":\"ExecCredential\",\"apiVersion\":"
                  "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"t\"}}'\n",
                  true);
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::ExecConfig exec;
    exec.api_version = "client.authentication.k8s.io/v1";
    exec.command = script;
    kube::ExecCredentialProvider provider(exec, clock);
    auto run1 = provider.get();
    BOOST_REQUIRE_MESSAGE(run1.is_ok(), why(run1));
    provider.invalidate(run1->generation);
    auto run2 = provider.get();
    BOOST_REQUIRE_MESSAGE(run2.is_ok(), why(run2));
    BOOST_TEST(run2->generation != run1->generation);
    // When: another connection reports a 401 for run 1's credentials.
    provider.invalidate(run1->generation);
    auto again = provider.get();
    // Then: run 2's credentials stay; the plugin ran twice in all.
    BOOST_REQUIRE(again.is_ok());
    BOOST_TEST(again->generation == run2->generation);
    BOOST_TEST(provider.runs() == 2);
}

BOOST_AUTO_TEST_CASE(a_plugin_flooding_stderr_is_read_to_the_end_and_shown_capped) {
    // Given: a plugin that writes 1 MiB to stderr (16 times a pipe's buffer) before its
    // credential, then a last line.
    TempDir dir;
    dir.write("plugin.sh",
              "#!/bin/sh\nhead -c 1048576 /dev/zero | tr '\\0' x >&2\necho ' the end' >&2\n"
              "echo '{\"kind\":\"ExecCredential\",\"apiVersion\":"
              "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"t\"}}'\n",
              true);
    const auto file = dir.write(
        "config",
        kubeconfig("    server: https://kube.example:6443\n", "      command: ./plugin.sh\n"),
        false);
    auto config = kube::load_kubeconfig_files({file}, "x");
    BOOST_REQUIRE_MESSAGE(config.is_ok(), why(config));
    std::ostringstream shown;
    std::streambuf* before = std::cerr.rdbuf(shown.rdbuf());
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::ExecCredentialProvider provider(*config->exec, clock);
    auto creds = provider.get();
    std::cerr.rdbuf(before);
    // Then: the credential arrives (the plugin was never blocked on a full pipe), and
    // what reaches our stderr is the last 64 KiB and a line saying how much was dropped.
    BOOST_REQUIRE_MESSAGE(creds.is_ok(), why(creds));
    const std::string text = shown.str();
    BOOST_TEST(text.size() < 65 * 1024u);
    BOOST_TEST(
        text.find("bytes of its stderr dropped, the last 64 KiB follow") != std::string::npos,
        text.substr(0, 200));
    BOOST_TEST(text.ends_with("xxxx the end\n"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
