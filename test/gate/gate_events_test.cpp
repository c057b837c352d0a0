// Given an API that refuses every Event (403 without RBAC, 500), then recording a
// gate's events never fails: the first refusal logs one warning with the cause,
// later ones are silent, and an accepted Event is created as usual.
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "runner/gating/gate_events.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"

using namespace envgate;

BOOST_AUTO_TEST_SUITE(gate_events_suite)

BOOST_AUTO_TEST_CASE(refused_events_warn_once_and_never_fail) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    test::FakeKubeApi api(&clock);
    std::ostringstream out;
    JobLog log(out, clock, {});
    GateEventRecorder events(api, log);
    JobIdentity job{"migrate-1a2b3c4d", "gitlab", "uid-1"};
    api.fail_next(Code::forbidden, "create");
    api.fail_next(Code::transient, "create");
    for (int i = 1; i <= 3; ++i) {
        events.record(job, {"Warning", "MigrationsRetrying", "attempt " + std::to_string(i)},
                      "uid-1/migrations/" + std::to_string(i), "envgate-test", clock.now());
    }
    BOOST_TEST(events.refused() == 2);
    std::string text = out.str();
    BOOST_TEST(text.find("Events cannot be recorded") != std::string::npos, text);
    BOOST_TEST(text.find("Events cannot be recorded") == text.rfind("Events cannot be recorded"));
    auto recorded = api.list({"events.k8s.io/v1", "events", "gitlab", ""}, {});
    BOOST_REQUIRE(recorded.is_ok());
    BOOST_TEST(recorded->items.size() == 1U);  // the third, once the API accepted it
}

// Given a gate's event, then its two Event bodies are these bytes: events.k8s.io/v1
// (note cut to 1 kB) and core v1, each with what both APIs say alike.
BOOST_AUTO_TEST_CASE(event_bodies_are_pinned_to_the_byte) {
    const JobIdentity job{"migrate-1a2b3c4d", "gitlab", "uid-1"};
    const gates::Event event{"Warning", "MigrationsRetrying", "attempt 2 of 6 failed"};
    const TimePoint now = *parse_rfc3339("2026-01-01T00:00:00.25Z");
    BOOST_TEST(
        events_v1_event(job, event, "migrate-1a2b3c4d.envgate-0", "ci-1", now).dump() ==
        R"({"action":"Gate","apiVersion":"events.k8s.io/v1","eventTime":"2026-01-01T00:00:00.250000Z",)"
        R"("kind":"Event","metadata":{"name":"migrate-1a2b3c4d.envgate-0",)"
        R"("namespace":"gitlab"},"note":"attempt 2 of 6 failed","reason":"MigrationsRetrying",)"
        R"("regarding":{"apiVersion":"batch/v1","kind":"Job","name":"migrate-1a2b3c4d",)"
        R"("namespace":"gitlab","uid":"uid-1"},"reportingController":"envgate",)"
        R"("reportingInstance":"ci-1","type":"Warning"})");
    BOOST_TEST(
        core_v1_event(job, event, "migrate-1a2b3c4d.envgate-0", "ci-1", now).dump() ==
        R"({"apiVersion":"v1","count":1,"firstTimestamp":"2026-01-01T00:00:00Z",)"
        R"("involvedObject":{"apiVersion":"batch/v1","kind":"Job","name":"migrate-1a2b3c4d",)"
        R"("namespace":"gitlab","uid":"uid-1"},"kind":"Event","lastTimestamp":"2026-01-01T00:00:00Z",)"
        R"("message":"attempt 2 of 6 failed","metadata":{"name":"migrate-1a2b3c4d.envgate-0",)"
        R"("namespace":"gitlab"},"reason":"MigrationsRetrying","reportingComponent":"envgate",)"
        R"("reportingInstance":"ci-1","source":{"component":"envgate"},)"
        R"("type":"Warning"})");
}

BOOST_AUTO_TEST_SUITE_END()
