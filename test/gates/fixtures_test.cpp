// Given the fixtures F1–F4 of spec/kubernetes-jobs.md §2.4 as real Kubernetes JSON
// (test/fixtures/README.md says where each shape comes from), then the gate verdicts
// are exactly the ones the spec writes down.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "gates/decode.h"
#include "gates/evaluate.h"
#include "gates/memory_json.h"
#include "test/gates/builders.h"

using namespace envgate;
using namespace envgate::gates;
using envgate::gates::test::event_of;

namespace {

std::string read_fixture(const std::string& name) {
    std::ifstream in(std::string(ENVGATE_FIXTURES) + "/" + name);
    BOOST_REQUIRE_MESSAGE(in, "cannot open fixture " + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

Job load_job(const std::string& name) {
    auto r = decode_job(read_fixture(name), name);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    return *r;
}

std::vector<Pod> load_pods(const std::string& name) {
    auto r = decode_pods(read_fixture(name), name);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    return *r;
}

GateMemory load_memory(const std::string& name) {
    auto r = decode_memory(read_fixture(name), name);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    return *r;
}

Verdict eval(const std::string& job, const std::string& pods, const GateMemory& memory = {}) {
    return evaluate(Gate::pre_migrations, load_job(job), load_pods(pods), memory, test::k_now);
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

const char* k_f1_logs =
    "kubectl -n gitlab logs pod/gitlab-migrations-3f2a1-pre-x7k2p -c migrations --previous";
const char* k_f2_describe = "kubectl -n gitlab describe job/gitlab-migrations-3f2a1-pre";

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_fixtures_suite)

BOOST_AUTO_TEST_CASE(f1_crash_loop_is_attempt_2_of_6_with_logs_previous) {
    Verdict v = eval("f1-crashloop-job.json", "f1-crashloop-pods.json");
    BOOST_TEST(state_name(v.state) == "retrying");
    BOOST_TEST(phase_name(v.phase) == "Upgrading");
    BOOST_TEST(v.progressing.reason == "RetryingPreMigrations");
    BOOST_TEST((v.counts == Counts{2, 6, 0, 7, 2, 6, 4, FailureKind::restart, std::nullopt}));
    BOOST_TEST(v.progressing.message.starts_with(
        "attempt 2 of 6 failed, 4 left: container migrations exited 1 (Error): "
        "PG::ConnectionBad: could not connect to server"));
    BOOST_REQUIRE(v.last_failure);
    BOOST_TEST(v.last_failure->pod == "gitlab-migrations-3f2a1-pre-x7k2p");
    BOOST_TEST(v.last_failure->container.value_or("") == "migrations");
    BOOST_TEST((v.last_failure->kind == FailureKind::restart));
    BOOST_TEST(v.last_failure->reason == "Error");
    BOOST_TEST(v.last_failure->exit_code.value_or(-1) == 1);
    BOOST_TEST(v.last_failure->message == "PG::ConnectionBad: could not connect to server");
    BOOST_TEST(v.command.value_or("") == k_f1_logs);
    BOOST_REQUIRE(event_of(v));
    BOOST_TEST(event_of(v)->reason == "MigrationsRetrying");
}

BOOST_AUTO_TEST_CASE(f1_with_empty_termination_message_says_so) {
    Verdict v = eval("f1-crashloop-job.json", "f1-empty-message-pods.json");
    BOOST_TEST(v.counts.attempt == 2);
    BOOST_TEST(has(v.progressing.message, "exited 1 (Error), no termination message"));
    BOOST_TEST(v.last_failure->message == "");
}

BOOST_AUTO_TEST_CASE(f2_is_failing_then_failed_with_the_remembered_failure) {
    GateMemory f1_style = load_memory("f2-memory.json");
    Verdict a = eval("f2a-failing-job.json", "f2a-failing-pods.json", f1_style);
    BOOST_TEST(state_name(a.state) == "failing");
    BOOST_TEST(phase_name(a.phase) == "Upgrading");
    BOOST_TEST(a.progressing.status);
    BOOST_TEST(a.progressing.reason == "RunningPreMigrations");
    BOOST_TEST(
        has(a.progressing.message,
            "is failing: BackoffLimitExceeded: Job has reached the specified backoff limit"));
    BOOST_TEST(!event_of(a));
    BOOST_TEST(a.counts.attempt == 6);
    BOOST_TEST(a.counts.left == 0);

    Verdict b = eval("f2b-failed-job.json", "f2b-failed-pods.json", a.memory);
    BOOST_TEST(state_name(b.state) == "failed");
    BOOST_TEST(phase_name(b.phase) == "Failed");
    BOOST_TEST(!b.progressing.status);
    BOOST_TEST(b.progressing.reason == "MigrationsJobFailed");
    BOOST_REQUIRE(b.last_failure);
    BOOST_TEST(b.last_failure->message ==
               "PG::LockNotAvailable: ERROR:  canceling statement due to lock timeout");
    BOOST_TEST(format_rfc3339(*b.last_failure->at) == "2025-05-29T07:16:38Z");
    for (const char* part : {"failed: BackoffLimitExceeded: Job has reached the specified backoff",
                             "PG::LockNotAvailable", k_f2_describe,
                             "A change to the Job spec reruns the gate with a new Job."}) {
        BOOST_TEST_CONTEXT(part) {
            BOOST_TEST(has(b.progressing.message, part));
        }
    }
    BOOST_TEST(b.command.value_or("") == k_f2_describe);
    BOOST_REQUIRE(b.event);
    BOOST_TEST(b.event->reason == "MigrationsFailed");
    Verdict again = eval("f2b-failed-job.json", "f2b-failed-pods.json", b.memory);
    BOOST_TEST(!event_of(again));
}

BOOST_AUTO_TEST_CASE(f1_then_f2_keeps_the_last_failure_seen_before_the_pod_went) {
    Verdict f1 = eval("f1-crashloop-job.json", "f1-crashloop-pods.json");
    Verdict a = eval("f2a-failing-job.json", "f2a-failing-pods.json", f1.memory);
    Verdict b = eval("f2b-failed-job.json", "f2b-failed-pods.json", a.memory);
    BOOST_REQUIRE(b.last_failure);
    BOOST_TEST(b.last_failure->exit_code.value_or(-1) == 1);
    BOOST_TEST(format_rfc3339(*b.last_failure->at) == "2025-05-29T07:16:38Z");
    BOOST_TEST(b.counts.restarts == 6);
    BOOST_TEST(b.event->reason == "MigrationsFailed");
}

BOOST_AUTO_TEST_CASE(f2_before_1_31_fails_without_failure_target) {
    Verdict v = eval("f2-pre131-failed-job.json", "f2a-failing-pods.json");
    BOOST_TEST(state_name(v.state) == "failed");
    BOOST_TEST(v.progressing.reason == "MigrationsJobFailed");
    BOOST_TEST(v.event->reason == "MigrationsFailed");
    BOOST_TEST(has(v.progressing.message, "exited 1 (Error), no termination message"));
}

BOOST_AUTO_TEST_CASE(f3_evicted_pod_is_pod_retry_1_of_7) {
    for (const char* pods : {"f3-evicted-pods.json", "f3-evicted-noreason-pods.json"}) {
        BOOST_TEST_CONTEXT(pods) {
            Verdict v = eval("f3-evicted-job.json", pods);
            BOOST_TEST(state_name(v.state) == "retrying");
            BOOST_TEST((v.counts == Counts{0, 6, 1, 7, 1, 7, 6, FailureKind::pod, std::nullopt}));
            BOOST_REQUIRE(v.last_failure);
            BOOST_TEST((v.last_failure->kind == FailureKind::pod));
            BOOST_TEST(v.last_failure->reason == "TerminationByKubelet");
            BOOST_TEST(v.last_failure->exit_code.value_or(-1) == 137);
            BOOST_TEST(!v.last_failure->exit_code_trusted);
            BOOST_TEST(v.last_failure->message.starts_with(
                "The node was low on resource: ephemeral-storage."));
            BOOST_TEST(has(v.progressing.message, "pod 1 of 7 failed, 6 left"));
            // Its container was killed: its status and events say why, not a log.
            BOOST_TEST(v.command.value_or("") ==
                       "kubectl -n gitlab describe pod/gitlab-migrations-3f2a1-l9q4m");
            BOOST_TEST(event_of(v).value_or(Event{}).reason == "MigrationsRetrying");
        }
    }
}

BOOST_AUTO_TEST_CASE(f4_preempted_pod_makes_the_job_failing) {
    Verdict v = eval("f4-preempted-job.json", "f4-preempted-pods.json");
    BOOST_TEST(state_name(v.state) == "failing");
    BOOST_TEST(v.progressing.reason == "RunningPreMigrations");
    BOOST_TEST((v.counts == Counts{0, 1, 1, 1, 1, 1, 0, FailureKind::pod, std::nullopt}));
    BOOST_REQUIRE(v.last_failure);
    BOOST_TEST(v.last_failure->reason == "PreemptionByScheduler");
    BOOST_TEST(v.last_failure->message ==
               "default-scheduler: preempting to accommodate a higher priority pod");
    BOOST_TEST(!v.last_failure->container);
    BOOST_TEST(!v.last_failure->exit_code);
    BOOST_TEST(!event_of(v));
    BOOST_TEST(v.command.value_or("") == "kubectl -n gitlab describe job/gitlab-migrations-3f2a1");
}

BOOST_AUTO_TEST_SUITE_END()
