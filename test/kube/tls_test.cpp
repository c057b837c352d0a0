// HttpKubeApi over TLS against the in-test HTTPS server with a CA and certificates made
// by the openssl CLI: verification against the kubeconfig's CA (wrong CA fails, right CA
// works), insecure-skip-tls-verify, and client-certificate authentication.
#include <boost/test/unit_test.hpp>

#include <future>
#include <thread>

#include "runner/kube/http_kube_api.h"
#include "test/fakes/fake_clock.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

using namespace std::chrono_literals;

const kube::ResourceRef k_lease = kube::leases("locks", "envgate-gprd");

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_tls)

BOOST_AUTO_TEST_CASE(verifies_the_server_against_the_kubeconfig_ca) {
    // Given: an HTTPS server whose certificate the test CA signed.
    TestApiServer server(ServerTls{shared_pki().server_cert, shared_pki().server_key, {}});
    struct Case {
        std::string name;
        std::string ca;
        bool insecure;
        bool want_ok;
    };
    const std::vector<Case> cases = {
        {"right CA", TestPki::read(shared_pki().ca_cert), false, true},
        {"wrong CA", TestPki::read(shared_pki().other_ca_cert), false, false},
        {"wrong CA but insecure-skip-tls-verify", TestPki::read(shared_pki().other_ca_cert), true,
         true},
        {"no CA, insecure-skip-tls-verify", "", true, true},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            server.push_json(200, R"({"metadata":{"name":"envgate-gprd"}})");
            kube::RestConfig config;
            config.server = server.url();
            config.ca_pem = c.ca;
            config.insecure_skip_tls_verify = c.insecure;
            auto result = get_test_lease(config);
            BOOST_TEST(result.is_ok() == c.want_ok, why(result));
            if (!c.want_ok) {
                BOOST_TEST(result.status().code() == Code::failed);
                BOOST_TEST(result.status().message().find("GET leases/envgate-gprd: 127.0.0.1: ") ==
                           0u);
            }
        }
    }
    // Then: the server answered only the requests whose TLS handshake succeeded.
    BOOST_TEST(server.requests().size() == 3u);
}

BOOST_AUTO_TEST_CASE(presents_the_client_certificate_when_the_server_asks) {
    // Given: a server that requires a client certificate signed by the test CA.
    TestApiServer server(
        ServerTls{shared_pki().server_cert, shared_pki().server_key, shared_pki().ca_cert});
    server.push_json(200, R"({"metadata":{"name":"envgate-gprd"}})");
    kube::RestConfig config;
    config.server = server.url();
    config.ca_pem = TestPki::read(shared_pki().ca_cert);
    // When: first without, then with the certificate and key (as *-data fields give them).
    auto without = get_test_lease(config);
    config.client_cert_pem = TestPki::read(shared_pki().client_cert);
    config.client_key_pem = kube::SecretString(TestPki::read(shared_pki().client_key));
    auto with = get_test_lease(config);
    // Then: only the second gets through.
    BOOST_TEST(!without.is_ok());
    BOOST_TEST(with.is_ok(), why(with));
    BOOST_TEST(server.requests().size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_pem_data_is_a_configuration_error_without_the_key) {
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::RestConfig config;
    config.server = "https://127.0.0.1:1";
    config.source = "/home/ci/.kube/config";
    config.client_cert_pem = TestPki::read(shared_pki().client_cert);
    config.client_key_pem = kube::SecretString("-----BEGIN PRIVATE KEY-----\nnot-a-key\n");
    auto api = kube::HttpKubeApi::create(config, clock);
    BOOST_REQUIRE(!api.is_ok());
    BOOST_TEST(api.status().code() == Code::invalid);
    BOOST_TEST(api.status().message().find(
                   "/home/ci/.kube/config: cannot use the TLS certificates") == 0u);
    BOOST_TEST(api.status().message().find("not-a-key") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(cancel_watches_ends_a_silent_watch_from_another_thread) {
    // Given: plain and TLS servers whose watch sends one event and then stays silent.
    for (bool tls : {false, true}) {
        BOOST_TEST_CONTEXT((tls ? "https" : "http")) {
            std::optional<ServerTls> server_tls;
            if (tls) {
                server_tls = ServerTls{shared_pki().server_cert, shared_pki().server_key, {}};
            }
            TestApiServer server(server_tls);
            const std::string event = R"({"type":"ADDED","object":{"metadata":{"name":"j"}}})";
            server.push({200, "", {}, {event + "\n"}, true});
            FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
            kube::RestConfig config;
            config.server = server.url();
            config.ca_pem = TestPki::read(shared_pki().ca_cert);
            auto api = kube::HttpKubeApi::create(config, clock);
            BOOST_REQUIRE(api.is_ok());
            std::promise<void> first_event;
            auto watching = std::async(std::launch::async, [&] {
                return (*api)->watch(kube::jobs("gitlab"), {}, [&](const kube::WatchEvent&) {
                    first_event.set_value();
                    return kube::WatchNext::proceed;
                });
            });
            // When: the event arrived and another thread cancels.
            BOOST_REQUIRE(first_event.get_future().wait_for(std::chrono::seconds(20)) ==
                          std::future_status::ready);
            (*api)->cancel_watches();
            // Then: the watch returns Cancelled at once (generous bound), and so do new calls.
            BOOST_REQUIRE(watching.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
            Status status = watching.get();
            BOOST_TEST(status.code() == Code::cancelled, status.message());
            BOOST_TEST((*api)->get(k_lease).status().code() == Code::cancelled);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
