// The Reflector (list, then watch from the list's resourceVersion) against the in-test
// HTTP server speaking chunked watch streams: resume after a normal end from the last RV
// (bookmarks included), re-list on a 410 ERROR event, fall back to polling after
// repeated watch failures; and, over the fake, stop at the deadline.
#include <boost/test/unit_test.hpp>

#include <set>

#include "runner/kube/http_kube_api.h"
#include "runner/kube/reflector.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"
#include "test/kube/test_api_server.h"

namespace envgate::test {
namespace {

using namespace std::chrono_literals;
using kube::EventType;
using kube::WatchNext;

nlohmann::json job(const std::string& name, const std::string& rv, const std::string& phase = "") {
    return {{"kind", "Job"},
            {"metadata", {{"name", name}, {"namespace", "gitlab"}, {"resourceVersion", rv}}},
            {"status", {{"phase", phase}}}};
}

std::string event_line(const std::string& type, const nlohmann::json& object) {
    return nlohmann::json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::string list_body(const std::string& rv, const std::vector<nlohmann::json>& items) {
    return nlohmann::json{
        {"kind", "JobList"}, {"metadata", {{"resourceVersion", rv}}}, {"items", items}}
        .dump();
}

struct Seen {
    EventType type;
    std::string name;
    std::string rv;
};

struct ReflectorFixture {
    TestApiServer server;
    FakeClock clock{TimePoint(std::chrono::seconds(1'700'000'000))};
    std::unique_ptr<kube::HttpKubeApi> api;
    kube::Random random{42};
    std::vector<Seen> seen;

    ReflectorFixture() {
        kube::RestConfig config;
        config.server = server.url();
        auto created = kube::HttpKubeApi::create(config, clock, {{}, 5s, 1});
        BOOST_REQUIRE(created.is_ok());
        api = std::move(created).value();
    }

    // Records every change; stops once `stop_at` ("MODIFIED name@rv") is seen.
    kube::ChangeCallback recorder(const std::string& stop_at) {
        return [this, stop_at](EventType type, const nlohmann::json& object) {
            const auto& meta = object["metadata"];
            seen.push_back({type, meta["name"], meta["resourceVersion"]});
            const std::string here = std::string(kube::event_type_name(type)) + " " +
                                     meta["name"].get<std::string>() + "@" +
                                     meta["resourceVersion"].get<std::string>();
            return here == stop_at ? WatchNext::stop : WatchNext::proceed;
        };
    }
};

std::string describe(const std::vector<Seen>& seen) {
    std::string out;
    for (const auto& s : seen) {
        out += std::string(kube::event_type_name(s.type)) + " " + s.name + "@" + s.rv + "; ";
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kube_reflector)

BOOST_AUTO_TEST_CASE(resumes_from_last_resource_version_after_a_normal_stream_end) {
    // Given: a list at RV 10, a chunked watch stream ADDED/MODIFIED/BOOKMARK that then
    // closes, and a second watch that brings the change the caller waits for.
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {job("migrate", "10")}));
    fx.server.push(
        {200,
         "",
         {},
         {event_line("MODIFIED", job("migrate", "11", "Running")),
          event_line("ADDED", job("other", "12")),
          event_line("BOOKMARK", {{"kind", "Job"}, {"metadata", {{"resourceVersion", "15"}}}})}});
    fx.server.push({200, "", {}, {event_line("MODIFIED", job("migrate", "16", "Complete"))}});
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), {}, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED migrate@16"));
    // Then: every change arrived once, bookmarks were not delivered, and the second watch
    // started from the bookmark's RV.
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(describe(fx.seen) ==
               "ADDED migrate@10; MODIFIED migrate@11; ADDED other@12; MODIFIED migrate@16; ");
    const auto requests = fx.server.requests();
    BOOST_REQUIRE(requests.size() == 3u);
    BOOST_TEST(requests[0].uri == "/apis/batch/v1/namespaces/gitlab/jobs");
    BOOST_TEST(
        requests[1].uri.find("/apis/batch/v1/namespaces/gitlab/jobs?watch=1&resourceVersion=10"
                             "&allowWatchBookmarks=true&timeoutSeconds=") == 0u);
    BOOST_TEST(requests[2].uri.find("resourceVersion=15&") != std::string::npos);
    BOOST_TEST(reflector.stats().lists == 1);
    BOOST_TEST(reflector.resource_version() == "16");
}

BOOST_AUTO_TEST_CASE(a_known_first_list_is_taken_without_a_request_and_watched_from) {
    // Given: the caller knows the collection at RV 10 (a Job it has just created), and
    // the API answers only a watch, which brings the next change.
    ReflectorFixture fx;
    fx.server.push({200, "", {}, {event_line("MODIFIED", job("migrate", "11", "Running"))}});
    kube::ReflectorOptions options;
    options.known = kube::ObjectList{{job("migrate", "10")}, "10"};
    std::vector<std::string> progress;
    options.on_progress = [&](const std::string& rv, bool listed) {
        progress.push_back((listed ? "list " : "") + rv);
    };
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), options, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED migrate@11"));
    // Then: the known object came first, as a list's would; the one request was a watch
    // from RV 10, and no list was made.
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(describe(fx.seen) == "ADDED migrate@10; MODIFIED migrate@11; ");
    const auto requests = fx.server.requests();
    BOOST_REQUIRE(requests.size() == 1u);
    BOOST_TEST(requests[0].uri.find(
                   "/apis/batch/v1/namespaces/gitlab/jobs?watch=1&resourceVersion=10&") == 0u);
    BOOST_TEST(reflector.stats().lists == 0);
    BOOST_TEST(progress == (std::vector<std::string>{"list 10"}));
}

BOOST_AUTO_TEST_CASE(a_known_first_list_is_listed_again_after_410_gone) {
    // Given: a known list at RV 10 that the server has compacted past.
    ReflectorFixture fx;
    fx.server.push_json(410, status_body(410, "Gone", "too old resource version"));
    fx.server.push_json(200, list_body("31", {job("a", "31")}));
    kube::ReflectorOptions options;
    options.known = kube::ObjectList{{job("a", "10")}, "10"};
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), options, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED a@31"));
    // Then: the API's list replaces it, as after any 410.
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(describe(fx.seen) == "ADDED a@10; MODIFIED a@31; ");
    BOOST_TEST(reflector.stats().lists == 1);
    BOOST_TEST(reflector.stats().relists_after_gone == 1);
}

BOOST_AUTO_TEST_CASE(each_watch_asks_for_a_jittered_timeout_between_one_and_two_times_the_base) {
    // Given: a list and six watch streams of one change each, and a progress hook.
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {job("migrate", "10")}));
    for (int i = 1; i <= 6; ++i) {
        fx.server.push(
            {200, "", {}, {event_line("MODIFIED", job("migrate", std::to_string(10 + i)))}});
    }
    kube::ReflectorOptions options;
    std::vector<std::string> progress;
    options.on_progress = [&](const std::string& rv, bool listed) {
        progress.push_back((listed ? "list " : "") + rv);
    };
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), options, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED migrate@16"));
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    // Then: every watch asked for 300 to 599 seconds, not all the same (client-go's 5-10
    // min), and the hook heard the list's RV and each delivered change's but the last.
    std::set<int> timeouts;
    for (const auto& r : fx.server.requests()) {
        auto at = r.uri.find("timeoutSeconds=");
        if (at != std::string::npos) {
            int t = std::stoi(r.uri.substr(at + 15));
            BOOST_TEST((t >= 300 && t < 600), "timeout " << t);
            timeouts.insert(t);
        }
    }
    BOOST_TEST(timeouts.size() > 1u);
    BOOST_TEST(progress == (std::vector<std::string>{"list 10", "11", "12", "13", "14", "15"}));
}

BOOST_AUTO_TEST_CASE(relists_after_a_410_error_event_and_reports_the_difference) {
    // Given: a watch stream that answers with ERROR 410 Expired (as the watch cache does),
    // and a second list in which one Job changed, one is new and one was deleted.
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {job("a", "10"), job("b", "10")}));
    const nlohmann::json expired = {
        {"kind", "Status"},    {"apiVersion", "v1"},
        {"status", "Failure"}, {"message", "too old resource version: 10 (20)"},
        {"reason", "Expired"}, {"code", 410}};
    fx.server.push({200, "", {}, {event_line("ERROR", expired)}});
    fx.server.push_json(200, list_body("30", {job("a", "25"), job("c", "28")}));
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), {}, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("DELETED b@10"));
    // Then: the re-list delivers MODIFIED a, ADDED c and DELETED b (its last known state).
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(describe(fx.seen) ==
               "ADDED a@10; ADDED b@10; MODIFIED a@25; ADDED c@28; DELETED b@10; ");
    BOOST_TEST(reflector.stats().relists_after_gone == 1);
    BOOST_TEST(reflector.stats().lists == 2);
}

BOOST_AUTO_TEST_CASE(relists_after_a_plain_410_on_the_watch_request) {
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {job("a", "10")}));
    fx.server.push_json(410, status_body(410, "Gone", "too old resource version"));
    fx.server.push_json(200, list_body("31", {job("a", "31")}));
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), {}, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED a@31"));
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(reflector.stats().relists_after_gone == 1);
}

BOOST_AUTO_TEST_CASE(falls_back_to_polling_when_watching_keeps_failing) {
    // Given: every watch fails with 500; the third failure switches to polling.
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {job("a", "10")}));
    for (int i = 0; i < 3; ++i) {
        fx.server.push_json(500, status_body(500, "InternalError", "watch broken"));
    }
    fx.server.push_json(200, list_body("10", {job("a", "10")}));
    fx.server.push_json(200, list_body("12", {job("a", "12", "Complete")}));
    kube::ReflectorOptions options;
    options.selectors.field_selector = "metadata.name=a";
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), options, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("MODIFIED a@12"));
    // Then: two back-offs between watches, then lists every poll_interval (5 s) with the
    // selector, and the change arrives from a poll.
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST(describe(fx.seen) == "ADDED a@10; MODIFIED a@12; ");
    BOOST_TEST(reflector.stats().polling);
    BOOST_TEST(reflector.stats().watch_failures == 3);
    const auto& sleeps = fx.clock.sleeps();
    BOOST_REQUIRE(sleeps.size() == 4u);
    BOOST_TEST(sleeps[0].count() >= Duration(1s).count());
    BOOST_TEST(sleeps[1].count() >= Duration(2s).count());
    BOOST_TEST(sleeps[2].count() == Duration(5s).count());
    BOOST_TEST(sleeps[3].count() == Duration(5s).count());
    const auto requests = fx.server.requests();
    BOOST_REQUIRE(requests.size() == 6u);
    BOOST_TEST(requests[5].uri ==
               "/apis/batch/v1/namespaces/gitlab/jobs?fieldSelector=metadata.name%3Da");
}

BOOST_AUTO_TEST_CASE(forbidden_watch_ends_the_run) {
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {}));
    fx.server.push_json(403, status_body(403, "Forbidden", "jobs is forbidden"));
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), {}, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("never"));
    BOOST_TEST(status.code() == Code::forbidden);
    BOOST_TEST(status.message() == "WATCH jobs: 403 Forbidden: jobs is forbidden");
}

BOOST_AUTO_TEST_CASE(stop_request_seen_on_a_bookmark_cancels_the_run) {
    // Given: a watch that only sends bookmarks, and a stop requested after the first.
    ReflectorFixture fx;
    fx.server.push_json(200, list_body("10", {}));
    const nlohmann::json bookmark = {{"kind", "Job"}, {"metadata", {{"resourceVersion", "11"}}}};
    fx.server.push(
        {200, "", {}, {event_line("BOOKMARK", bookmark), event_line("BOOKMARK", bookmark)}});
    int asked = 0;
    kube::ReflectorOptions options;
    options.stop_requested = [&] { return ++asked >= 2; };
    kube::Reflector reflector(*fx.api, fx.clock, kube::jobs("gitlab"), options, fx.random);
    Status status = reflector.run(fx.clock.now() + 1h, fx.recorder("never"));
    // Then: cancelled without a second watch and without any change delivered.
    BOOST_TEST(status.code() == Code::cancelled);
    BOOST_TEST(status.message() == "watching jobs: stopped");
    BOOST_TEST(fx.seen.empty());
    BOOST_TEST(fx.server.requests().size() == 2u);
}

BOOST_AUTO_TEST_CASE(deadline_passes_while_nothing_changes) {
    // Given: the fake, whose watches end at once with nothing new.
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    FakeKubeApi api(&clock);
    api.seed(kube::jobs("gitlab", "migrate"), job("migrate", ""));
    int changes = 0;
    Status status = kube::watch_until(api, clock, kube::jobs("gitlab"), {}, clock.now() + 10s,
                                      [&](EventType, const nlohmann::json&) {
                                          ++changes;
                                          return WatchNext::proceed;
                                      });
    // Then: Timeout after about ten idle re-watches, one second apart.
    BOOST_TEST(status.code() == Code::timeout);
    BOOST_TEST(status.message() == "watching jobs: the deadline passed");
    BOOST_TEST(changes == 1);
    BOOST_TEST(clock.sleeps().size() == 10u);
}

BOOST_AUTO_TEST_CASE(follows_changes_made_while_watching_the_fake) {
    // Given: a fake whose "controller" completes the Job once the watch is idle.
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    FakeKubeApi api(&clock);
    const auto ref = kube::jobs("gitlab", "migrate");
    api.seed(ref, job("migrate", ""));
    int step = 0;
    api.set_watch_idle_hook([&] {
        return ++step <= 2 && api.mutate(ref, [&](nlohmann::json& j) {
            j["status"]["phase"] = step == 1 ? "Running" : "Complete";
        });
    });
    std::vector<std::string> phases;
    Status status = kube::watch_until(api, clock, kube::jobs("gitlab"), {}, clock.now() + 1h,
                                      [&](EventType, const nlohmann::json& object) {
                                          phases.push_back(object["status"]["phase"]);
                                          return phases.back() == "Complete" ? WatchNext::stop
                                                                             : WatchNext::proceed;
                                      });
    BOOST_REQUIRE_MESSAGE(status.is_ok(), status.message());
    BOOST_TEST((phases == std::vector<std::string>{"", "Running", "Complete"}));
    BOOST_TEST((api.calls_made == std::vector<std::string>{"list jobs", "watch jobs"}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate::test
