// HttpKubeApi against an in-test HTTP server: typed errors from metav1.Status bodies,
// retries of transient failures (Retry-After honoured, deadline respected, sleeps read
// from FakeClock), request shapes of each verb, and a bearer token that never leaks.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include <Poco/TemporaryFile.h>

#include "runner/kube/errors.h"
#include "runner/kube/http_kube_api.h"
#include "test/fakes/fake_clock.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

using namespace std::chrono_literals;
using kube::HttpKubeApi;

constexpr const char* k_token = "planted-s3cr3t-token-6d1f";

struct ApiFixture {
    TestApiServer server;
    FakeClock clock{TimePoint(std::chrono::seconds(1'700'000'000))};
    std::unique_ptr<HttpKubeApi> api;

    explicit ApiFixture(kube::RetryPolicy retry = {}) {
        kube::RestConfig config;
        config.server = server.url();
        config.bearer_token = kube::SecretString(k_token);
        kube::HttpOptions options;
        options.retry = retry;
        options.seed = 7;
        auto created = HttpKubeApi::create(config, clock, options);
        BOOST_REQUIRE_MESSAGE(created.is_ok(), why(created));
        api = std::move(created).value();
    }
};

const kube::ResourceRef k_lease = kube::leases("locks", "envgate-gprd");

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_http_api)

// Given a token that is a part of "[redacted]" itself (a one-letter token), then
// redaction still ends, with every occurrence in the text replaced once.
BOOST_AUTO_TEST_CASE(redacts_a_token_found_in_the_redaction_mark) {
    BOOST_TEST(envgate::kube::redact("GET leases/envgate-gstg", "t") ==
               "GET leases/envga[redacted]e-gs[redacted]g");
    BOOST_TEST(envgate::kube::redact("abcabc", "abc") == "[redacted][redacted]");
    BOOST_TEST(envgate::kube::redact("x", "") == "x");
}

BOOST_AUTO_TEST_CASE(maps_error_statuses_to_typed_codes_with_messages) {
    // Given: one canned failure per case. Then: each call fails with its code and message.
    struct Case {
        int http;
        std::string reason;
        Code want;
        std::string want_message;
    };
    const std::vector<Case> cases = {
        {404, "NotFound", Code::not_found, "PUT leases/envgate-gprd: 404 NotFound: m404"},
        {409, "Conflict", Code::conflict, "PUT leases/envgate-gprd: 409 Conflict: m409"},
        {409, "AlreadyExists", Code::already_exists,
         "PUT leases/envgate-gprd: 409 AlreadyExists: m409"},
        {410, "Gone", Code::gone, "PUT leases/envgate-gprd: 410 Gone: m410"},
        {401, "Unauthorized", Code::unauthorized,
         "PUT leases/envgate-gprd: 401 Unauthorized: m401"},
        {403, "Forbidden", Code::forbidden, "PUT leases/envgate-gprd: 403 Forbidden: m403"},
        {422, "Invalid", Code::invalid, "PUT leases/envgate-gprd: 422 Invalid: m422"},
    };
    ApiFixture fx(kube::RetryPolicy{1ms, 1ms, 2.0, 0.0, 1s, 1});
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.http << " " << c.reason) {
            fx.server.push_json(c.http,
                                status_body(c.http, c.reason, "m" + std::to_string(c.http)));
            auto result = fx.api->update(k_lease, {{"metadata", {{"resourceVersion", "5"}}}});
            BOOST_REQUIRE(!result.is_ok());
            BOOST_TEST(code_name(result.status().code()) == code_name(c.want));
            BOOST_TEST(result.status().message() == c.want_message);
        }
    }
}

BOOST_AUTO_TEST_CASE(server_error_is_transient_and_names_the_attempts) {
    // Given: a 500 and a policy of one attempt. Then: Transient, no sleep.
    ApiFixture fx(kube::RetryPolicy{1ms, 1ms, 2.0, 0.0, 1s, 1});
    fx.server.push_json(500, status_body(500, "InternalError", "etcd is sad"));
    auto result = fx.api->get(k_lease);
    BOOST_REQUIRE(!result.is_ok());
    BOOST_TEST(result.status().code() == Code::transient);
    BOOST_TEST(result.status().message() ==
               "GET leases/envgate-gprd: 500 InternalError: etcd is sad (gave up after 1 attempt)");
    BOOST_TEST(fx.clock.sleeps().empty());
}

BOOST_AUTO_TEST_CASE(retries_500_503_429_honouring_retry_after) {
    // Given: 500, 503 (Retry-After: 7), 429 (Retry-After: 2), then the object.
    ApiFixture fx;
    fx.server.push_json(500, status_body(500, "InternalError", "x"));
    fx.server.push({503, status_body(503, "ServiceUnavailable", "x"), {{"Retry-After", "7"}}, {}});
    fx.server.push({429, status_body(429, "TooManyRequests", "x"), {{"Retry-After", "2"}}, {}});
    fx.server.push_json(200, R"({"metadata":{"name":"envgate-gprd","resourceVersion":"9"}})");
    auto result = fx.api->get(k_lease);
    // Then: it succeeds after a jittered first back-off and exactly the asked-for waits.
    BOOST_REQUIRE_MESSAGE(result.is_ok(), why(result));
    BOOST_TEST((*result)["metadata"]["resourceVersion"] == "9");
    const auto& sleeps = fx.clock.sleeps();
    BOOST_REQUIRE(sleeps.size() == 3u);
    BOOST_TEST(sleeps[0].count() >= Duration(250ms).count());
    BOOST_TEST(sleeps[0].count() < Duration(375ms).count());
    BOOST_TEST(sleeps[1].count() == Duration(7s).count());
    BOOST_TEST(sleeps[2].count() == Duration(2s).count());
    BOOST_TEST(fx.server.requests().size() == 4u);
}

BOOST_AUTO_TEST_CASE(deadline_stops_retrying) {
    // Given: the server answers 503 Retry-After: 2 forever; 5 s of retrying allowed.
    ApiFixture fx(kube::RetryPolicy{250ms, 8s, 2.0, 0.5, 5s, 100});
    for (int i = 0; i < 10; ++i) {
        fx.server.push(
            {503, status_body(503, "ServiceUnavailable", "busy"), {{"Retry-After", "2"}}, {}});
    }
    auto result = fx.api->get(k_lease);
    // Then: attempts at 0 s, 2 s, 4 s; the next would wake after the deadline.
    BOOST_REQUIRE(!result.is_ok());
    BOOST_TEST(result.status().code() == Code::transient);
    BOOST_TEST(result.status().message().find("gave up after 3 attempts") != std::string::npos);
    BOOST_TEST(fx.clock.sleeps().size() == 2u);
    BOOST_TEST(fx.server.requests().size() == 3u);
}

BOOST_AUTO_TEST_CASE(an_absurd_retry_after_gives_up_instead_of_overflowing) {
    // Given: 503s asking for more seconds than a clock can add (and one past a long).
    for (const char* asked : {"9223372036854775807", "99999999999999999999", "86400000"}) {
        BOOST_TEST_CONTEXT("Retry-After: " << asked) {
            ApiFixture fx;
            fx.server.push({503,
                            status_body(503, "ServiceUnavailable", "busy"),
                            {{"Retry-After", asked}},
                            {}});
            auto result = fx.api->get(k_lease);
            // Then: the wait is read as a day, past the retry deadline: one attempt, no sleep.
            BOOST_REQUIRE(!result.is_ok());
            BOOST_TEST(result.status().code() == Code::transient);
            BOOST_TEST(result.status().message().find("gave up after 1 attempt") !=
                       std::string::npos);
            BOOST_TEST(fx.clock.sleeps().empty());
        }
    }
}

BOOST_AUTO_TEST_CASE(connection_refused_is_transient) {
    // Given: a server URL nobody listens on (a server that was stopped).
    std::string url;
    {
        TestApiServer gone;
        url = gone.url();
    }
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::RestConfig config;
    config.server = url;
    auto api =
        HttpKubeApi::create(config, clock, {kube::RetryPolicy{1s, 1s, 2.0, 0.0, 10s, 3}, 5s, 1});
    BOOST_REQUIRE(api.is_ok());
    auto result = (*api)->get(k_lease);
    // Then: transient, retried up to the attempt budget.
    BOOST_REQUIRE(!result.is_ok());
    BOOST_TEST(result.status().code() == Code::transient);
    BOOST_TEST(result.status().message().find("GET leases/envgate-gprd: 127.0.0.1") == 0u);
    BOOST_TEST(clock.sleeps().size() == 2u);
}

BOOST_AUTO_TEST_CASE(verbs_send_the_right_requests_over_one_connection) {
    // Given: canned successes for each verb.
    ApiFixture fx;
    fx.server.push_json(201, R"({"metadata":{"name":"envgate-gprd","resourceVersion":"1"}})");
    fx.server.push_json(200, R"({"metadata":{"name":"envgate-gprd","resourceVersion":"2"}})");
    fx.server.push_json(200, R"({"metadata":{"name":"envgate-gprd","resourceVersion":"3"}})");
    fx.server.push_json(200, R"({"metadata":{"resourceVersion":"77"},"items":[{"a":1},{"b":2}]})");
    fx.server.push_json(200, R"({"kind":"Status","status":"Success"})");
    fx.server.push_json(200, "line one\nline two\n");
    nlohmann::json lease = {{"metadata", {{"name", "envgate-gprd"}}},
                            {"spec", {{"holderIdentity", "a"}}}};
    BOOST_REQUIRE(fx.api->create(kube::leases("locks"), lease).is_ok());
    BOOST_REQUIRE(fx.api->update(k_lease, lease).is_ok());
    BOOST_REQUIRE(fx.api->patch(k_lease, {{"metadata", {{"annotations", {{"a", "b"}}}}}}).is_ok());
    auto list = fx.api->list(kube::pods("gitlab"), {"batch.kubernetes.io/controller-uid=u1", ""});
    BOOST_REQUIRE(list.is_ok());
    BOOST_TEST(list->resource_version == "77");
    BOOST_TEST(list->items.size() == 2u);
    BOOST_REQUIRE(
        fx.api->remove(kube::jobs("gitlab", "migrate"), kube::Propagation::background).is_ok());
    auto logs = fx.api->logs(kube::pods("gitlab", "migrate-x"), {"migrations", true, std::nullopt});
    BOOST_REQUIRE(logs.is_ok());
    BOOST_TEST(*logs == "line one\nline two\n");
    // Then: methods, paths, queries and content types are those of the Kubernetes API.
    const auto seen = fx.server.requests();
    BOOST_REQUIRE(seen.size() == 6u);
    BOOST_TEST(seen[0].method == "POST");
    BOOST_TEST(seen[0].uri == "/apis/coordination.k8s.io/v1/namespaces/locks/leases");
    BOOST_TEST(seen[1].method == "PUT");
    BOOST_TEST(seen[1].uri == "/apis/coordination.k8s.io/v1/namespaces/locks/leases/envgate-gprd");
    BOOST_TEST(seen[2].method == "PATCH");
    BOOST_TEST(seen[2].content_type == "application/merge-patch+json");
    BOOST_TEST(
        seen[3].uri ==
        "/api/v1/namespaces/gitlab/pods?labelSelector=batch.kubernetes.io%2Fcontroller-uid%3Du1");
    BOOST_TEST(seen[4].method == "DELETE");
    BOOST_TEST(nlohmann::json::parse(seen[4].body)["propagationPolicy"] == "Background");
    BOOST_TEST(seen[5].uri ==
               "/api/v1/namespaces/gitlab/pods/migrate-x/log?container=migrations&previous=true");
    for (const auto& request : seen) {
        BOOST_TEST(request.authorization == std::string("Bearer ") + k_token);
        BOOST_TEST(request.client_port == seen[0].client_port);  // keep-alive
    }
    BOOST_TEST(fx.api->connections_opened() == 1);
}

BOOST_AUTO_TEST_CASE(a_delete_with_preconditions_sends_them_and_a_409_is_a_conflict) {
    // Given: the API server's answer to a DELETE whose resourceVersion precondition no
    // longer holds (its body as kube-apiserver v1.37.2 sends it), then a Success.
    ApiFixture fx;
    fx.server.push_json(
        409, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
             R"("message":"Operation cannot be fulfilled on Lease.coordination.k8s.io \"w\": )"
             R"(the ResourceVersion in the precondition (212) does not match the )"
             R"(ResourceVersion in record (213). The object might have been modified",)"
             R"("reason":"Conflict","details":{"name":"w","group":"coordination.k8s.io",)"
             R"("kind":"Lease"},"code":409})");
    fx.server.push_json(200, R"({"kind":"Status","status":"Success"})");
    kube::Preconditions only;
    only.resource_version = "212";
    Status stale = fx.api->remove(kube::leases("locks", "w"), kube::Propagation::background, only);
    BOOST_TEST((stale.code() == Code::conflict));
    BOOST_TEST(stale.message().find("does not match the ResourceVersion in record (213)") !=
               std::string::npos);
    BOOST_TEST(fx.api->remove(kube::leases("locks", "w"), kube::Propagation::background).is_ok());
    // Then: the first DELETE's DeleteOptions carry the precondition; the second, none.
    const auto seen = fx.server.requests();
    BOOST_REQUIRE(seen.size() == 2u);
    nlohmann::json first = nlohmann::json::parse(seen[0].body);
    BOOST_TEST(first["kind"] == "DeleteOptions");
    BOOST_TEST(first["preconditions"] == (nlohmann::json{{"resourceVersion", "212"}}));
    BOOST_TEST(!nlohmann::json::parse(seen[1].body).contains("preconditions"));
}

BOOST_AUTO_TEST_CASE(event_and_annotation_text_that_is_not_utf8_is_sent_as_valid_json) {
    // Given: an Event whose message quotes a migration log's \377\376, and a patch of an
    // annotation holding the same bytes.
    ApiFixture fx;
    fx.server.push_json(201, R"({"metadata":{"name":"e1","resourceVersion":"1"}})");
    fx.server.push_json(200, R"({"metadata":{"name":"migrate","resourceVersion":"2"}})");
    nlohmann::json event = {{"metadata", {{"name", "e1"}}}, {"message", "log: \377\376 end"}};
    BOOST_REQUIRE(fx.api->create(kube::core_events("gitlab"), event).is_ok());
    BOOST_REQUIRE(fx.api
                      ->patch(kube::jobs("gitlab", "migrate"),
                              {{"metadata", {{"annotations", {{"a", "\377"}}}}}})
                      .is_ok());
    // Then: both bodies are JSON (the API takes UTF-8 only) with U+FFFD for the bytes.
    const auto seen = fx.server.requests();
    BOOST_REQUIRE(seen.size() == 2u);
    BOOST_TEST(nlohmann::json::parse(seen[0].body)["message"] == "log: \uFFFD\uFFFD end");
    BOOST_TEST(nlohmann::json::parse(seen[1].body)["metadata"]["annotations"]["a"] == "\uFFFD");
}

BOOST_AUTO_TEST_CASE(server_path_prefix_is_kept) {
    // Given: a server URL with a path, as the GitLab agent's KAS proxy uses.
    TestApiServer server;
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::RestConfig config;
    config.server = server.url() + "/k8s-proxy/";
    auto api = HttpKubeApi::create(config, clock);
    BOOST_REQUIRE(api.is_ok());
    server.push_json(200, "{}");
    BOOST_REQUIRE((*api)->get(k_lease).is_ok());
    BOOST_TEST(server.requests().at(0).uri ==
               "/k8s-proxy/apis/coordination.k8s.io/v1/namespaces/locks/leases/envgate-gprd");
}

BOOST_AUTO_TEST_CASE(bearer_token_never_appears_in_messages) {
    // Given: servers that echo the token back in their error bodies, in every shape.
    ApiFixture fx(kube::RetryPolicy{1ms, 1ms, 2.0, 0.0, 1s, 1});
    const std::string echoed = std::string("you sent Bearer ") + k_token;
    std::vector<std::string> messages;
    for (int code : {400, 401, 403, 404, 409, 410, 422, 429, 500, 503}) {
        fx.server.push_json(code, status_body(code, "Whatever", echoed));
        auto result = fx.api->get(k_lease);
        BOOST_REQUIRE(!result.is_ok());
        messages.push_back(result.status().message());
    }
    fx.server.push_json(502, "<html>bad gateway for " + echoed + "</html>");
    messages.push_back(fx.api->get(k_lease).status().message());
    fx.server.push_json(403, status_body(403, "Forbidden", echoed));
    messages.push_back(fx.api
                           ->watch(kube::jobs("gitlab"), {},
                                   [](const kube::WatchEvent&) { return kube::WatchNext::proceed; })
                           .message());
    // Then: the token was sent, and no message holds it (they say [redacted] instead).
    BOOST_TEST(fx.server.requests().at(0).authorization == std::string("Bearer ") + k_token);
    for (const auto& message : messages) {
        BOOST_TEST_CONTEXT(message) {
            BOOST_TEST(message.find(k_token) == std::string::npos);
            BOOST_TEST(message.find("[redacted]") != std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(exec_credentials_are_refreshed_once_after_a_401) {
    // Given: an exec plugin that hands out token-1, then token-2; the server rejects the first.
    const std::string dir = Poco::TemporaryFile::tempName() + "-exec";
    std::filesystem::create_directories(dir);
    const std::string script = dir + "/plugin.sh";
    std::ofstream(script)
        << "#!/bin/sh\necho x >> " << dir << "/runs\n"
        << "n=$(wc -l < " << dir << "/runs)\n"
        << "printf '{\"kind\":\"ExecCredential\",\"apiVersion\":"
           "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"token-%s\"}}' $n\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    TestApiServer server;
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::RestConfig config;
    config.server = server.url();
    config.exec = kube::ExecConfig{
        "client.authentication.k8s.io/v1", script, {}, {}, std::chrono::seconds(60)};
    auto api = HttpKubeApi::create(config, clock);
    BOOST_REQUIRE(api.is_ok());
    server.push_json(401, status_body(401, "Unauthorized", "token expired"));
    server.push_json(200, "{}");
    server.push_json(200, "{}");
    // When: two reads.
    BOOST_TEST((*api)->get(k_lease).is_ok());
    BOOST_TEST((*api)->get(k_lease).is_ok());
    // Then: the 401 made the plugin run again, and the new token was cached.
    const auto seen = server.requests();
    BOOST_REQUIRE(seen.size() == 3u);
    BOOST_TEST(seen[0].authorization == "Bearer token-1");
    BOOST_TEST(seen[1].authorization == "Bearer token-2");
    BOOST_TEST(seen[2].authorization == "Bearer token-2");
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
