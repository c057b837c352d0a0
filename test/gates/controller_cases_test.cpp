// Given snapshots where a verdict must follow the Job controller's own rules (issue 11:
// OnFailure pods failing as a whole, Jobs deleted after failing, deleted pods' failure
// time, FailJob rules, suspension, first-run logs, Indexed Jobs with
// backoffLimitPerIndex, managedBy), then the gate counts, names and reports as the
// controller decides. Controller facts: gates/README.md.
#include <boost/test/unit_test.hpp>

#include "gates/evaluate.h"
#include "test/gates/builders.h"

using namespace envgate::gates;
using namespace envgate::gates::test;

namespace {

Verdict eval(const std::optional<Job>& j, const std::vector<Pod>& pods,
             const GateMemory& memory = {}, envgate::TimePoint now = k_now) {
    return evaluate(Gate::pre_migrations, j, pods, memory, now);
}

// An OnFailure pod the kubelet evicted: phase Failed, not deleted, container 137.
Pod evicted_on_failure(const std::string& name, int restarts = 0) {
    Pod p = with_containers(
        pod(name, "Failed"),
        {terminated("migrations", term(137, "ContainerStatusUnknown", ""), restarts)});
    p.reason = "Evicted";
    return disrupted(p, "TerminationByKubelet", "The node was low on resource: memory.");
}

Job suspended(Job j, const char* status, const char* at_time) {
    j.suspend = std::string(status) == "True";
    Condition c = cond("Suspended", j.suspend ? "JobSuspended" : "JobResumed",
                       j.suspend ? "Job suspended" : "Job resumed", status);
    c.last_transition_time = at(at_time);
    return with_condition(std::move(j), c);
}

Pod indexed(Pod p, int index, int failures) {
    p.completion_index = index;
    p.index_failure_count = failures;
    return p;
}

Job per_index(int limit_per_index) {
    Job j = job("Never", std::nullopt);
    j.indexed = true;
    j.completions = 4;
    j.backoff_limit_per_index = limit_per_index;
    return j;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(controller_cases_suite)

// Defect 2. Given an OnFailure pod evicted while running, then it is one failed pod, no
// container run besides, one event; after the controller counted it nothing changes.
BOOST_AUTO_TEST_CASE(an_evicted_on_failure_pod_is_one_failure) {
    Verdict v = eval(job(), {evicted_on_failure("p")});
    BOOST_TEST(v.counts.failed_pods == 1);
    BOOST_TEST(v.counts.restarts == 0);
    BOOST_TEST(v.memory.observed_failures == 1);
    BOOST_TEST(v.memory.failed_runs.empty());
    BOOST_REQUIRE(event_of(v));
    BOOST_TEST(event_of(v)->reason == "MigrationsRetrying");
    Job counted = job();
    counted.failed = 1;
    Pod gone_finalizer = evicted_on_failure("p");
    gone_finalizer.finalizers.clear();
    Verdict after = eval(counted, {gone_finalizer}, v.memory);
    BOOST_TEST(!event_of(after));
    BOOST_TEST(after.memory.observed_failures == 1);
}

// Defect 2. Given a container that crashed twice (3 failed runs) and then an eviction of
// its pod, then the eviction adds exactly one failure.
BOOST_AUTO_TEST_CASE(an_eviction_after_a_crash_loop_adds_one_failure) {
    Verdict crashed = eval(job(), {with_containers(pod("p"), {crashloop("migrations", 2)})});
    BOOST_TEST(crashed.memory.observed_failures == 3);
    Verdict v = eval(job(), {evicted_on_failure("p", 2)}, crashed.memory);
    BOOST_TEST(v.memory.observed_failures == 4);
    BOOST_REQUIRE(event_of(v));
}

// Defect 3. Given a Job seen failing (FailureTarget), then deleted, then the verdict is
// still the gate's failure with that condition and the last failure, recorded once.
BOOST_AUTO_TEST_CASE(a_job_deleted_after_failing_stays_failed) {
    Job failing = with_condition(job(), cond("FailureTarget", "BackoffLimitExceeded",
                                             "Job has reached the specified backoff limit"));
    Verdict seen = eval(failing, {with_containers(pod("p"), {crashloop("migrations", 5)})});
    Verdict gone = eval(std::nullopt, {}, seen.memory);
    BOOST_TEST(state_name(gone.state) == "failed");
    BOOST_TEST(gone.progressing.reason == "MigrationsJobFailed");
    BOOST_TEST(gone.progressing.message.find(
                   "BackoffLimitExceeded: Job has reached the specified backoff limit") !=
               std::string::npos);
    BOOST_TEST(gone.progressing.message.find("exited 1 (Error): boom") != std::string::npos);
    BOOST_TEST(gone.progressing.message.find("creates the Job again") == std::string::npos);
    BOOST_REQUIRE(gone.event);
    BOOST_TEST(gone.event->reason == "MigrationsFailed");
    BOOST_TEST(!eval(std::nullopt, {}, gone.memory).event);
    Verdict batched =
        evaluate(Gate::batched_migrations_check, std::nullopt, {}, seen.memory, k_now);
    BOOST_TEST(batched.progressing.reason == "BatchedMigrationsCheckFailed");
}

// Defect 4. Given a pod deleted by hand at 08:00:00 with 30 s grace (deletionTimestamp
// 08:00:30) and its replacement failing at 08:00:10, then the replacement's error is the
// last failure: the deleted pod failed when it was deleted.
BOOST_AUTO_TEST_CASE(a_deleted_pod_failed_when_it_was_deleted) {
    Pod by_hand = with_containers(pod("a"), {running("migrations")});
    by_hand.deletion_timestamp = at("2025-05-29T08:00:30Z");
    by_hand.deletion_grace_period_seconds = 30;
    Pod replacement = with_containers(
        pod("b", "Failed"),
        {terminated("migrations", term(1, "Error", "PG::DuplicateTable", "2025-05-29T08:00:10Z"))});
    Verdict v = eval(job("Never"), {by_hand, replacement}, {}, at("2025-05-29T08:00:12Z"));
    BOOST_TEST(v.counts.failed_pods == 2);
    BOOST_REQUIRE(v.last_failure);
    BOOST_TEST(v.last_failure->pod == "b");
    Verdict alone = eval(job("Never"), {by_hand}, {}, at("2025-05-29T08:00:01Z"));
    BOOST_REQUIRE(alone.last_failure);
    BOOST_TEST((alone.last_failure->at == at("2025-05-29T08:00:00Z")));
}

// Defect 5. Given a failed pod matching a FailJob rule before FailureTarget is written,
// then the gate is failing at once, names the rule, and records no retry event.
BOOST_AUTO_TEST_CASE(a_pod_matching_a_fail_job_rule_is_failing_at_once) {
    Job j = job("Never");
    j.pod_replacement_policy = "Failed";
    j.pod_failure_policy =
        std::vector<PodFailureRule>{{"Ignore", std::nullopt, {{"DisruptionTarget", "True"}}},
                                    {"FailJob", ExitCodeRule{"migrations", "In", {42}}, {}}};
    Pod p = with_containers(pod("p", "Failed"), {terminated("migrations", term(42))});
    Verdict v = eval(j, {p});
    BOOST_TEST(state_name(v.state) == "failing");
    BOOST_TEST(!v.event);
    BOOST_TEST(v.progressing.reason == "RunningPreMigrations");
    BOOST_TEST(v.progressing.message.find("PodFailurePolicy: Container migrations for pod "
                                          "gitlab/p failed with exit code 42 matching FailJob "
                                          "rule at index 1") != std::string::npos,
               v.progressing.message);
    BOOST_TEST(v.progressing.message.find(" left") == std::string::npos, v.progressing.message);
    Pod other = with_containers(pod("p", "Failed"), {terminated("migrations", term(1))});
    BOOST_TEST(state_name(eval(j, {other}).state) == "retrying");
}

// Defect 6. Given a suspended Job whose pod the suspension deleted, then the gate is
// suspended with the condition's reason and for how long, counts and names nothing,
// points at `describe job`; resumed, it runs again with no failure either.
BOOST_AUTO_TEST_CASE(a_suspended_job_is_its_own_state) {
    Pod stopped =
        with_containers(pod("p", "Failed"), {terminated("migrations", term(143, "Error", ""))});
    stopped.finalizers.clear();
    stopped.deletion_timestamp = at("2025-05-29T07:50:30Z");
    stopped.deletion_grace_period_seconds = 30;
    Verdict v = eval(suspended(job(), "True", "2025-05-29T07:50:00Z"), {stopped});
    BOOST_TEST(state_name(v.state) == "suspended");
    BOOST_TEST(v.progressing.reason == "JobSuspended");
    BOOST_TEST(v.progressing.message.find("for 10m") != std::string::npos, v.progressing.message);
    BOOST_TEST(!v.last_failure);
    BOOST_TEST(!v.event);
    // `describe job` shows Suspend: true and the controller's Suspended event.
    BOOST_TEST(v.command.value_or("") == "kubectl -n gitlab describe job/mig");
    Verdict resumed = eval(suspended(job(), "False", "2025-05-29T08:01:00Z"),
                           {stopped, with_containers(pod("q"), {running("migrations")})}, v.memory,
                           at("2025-05-29T08:01:05Z"));
    BOOST_TEST(state_name(resumed.state) == "running");
    BOOST_TEST(!resumed.last_failure);
    // A pod deleted by hand after the resume is a failure again.
    Pod later = deleting(with_containers(pod("r"), {running("migrations")}));
    later.deletion_timestamp = at("2025-05-29T08:02:00Z");
    Verdict after = eval(suspended(job("Never"), "False", "2025-05-29T08:01:00Z"), {later});
    BOOST_REQUIRE(after.last_failure);
    BOOST_TEST(after.last_failure->pod == "r");
}

// Defect 8. Given the first failure of an OnFailure container before its restart, then
// the logs command has no --previous (there is no previous container yet); in back-off
// (lastState) it has.
BOOST_AUTO_TEST_CASE(logs_of_a_run_not_restarted_yet_are_the_current_ones) {
    Verdict first = eval(job(), {with_containers(pod("p"), {terminated("migrations", term(1))})});
    BOOST_TEST(first.command.value_or("") == "kubectl -n gitlab logs pod/p -c migrations");
    Verdict backoff = eval(job(), {with_containers(pod("p"), {crashloop("migrations", 0)})});
    BOOST_TEST(backoff.command.value_or("") ==
               "kubectl -n gitlab logs pod/p -c migrations --previous");
}

// Issue 23. Given a failed run, then its command names its pod (`logs job/...` reads
// the newest run of whichever pod kubectl picks, and waits for one once the pod is
// gone); once the pod is being deleted, the line says it is gone and where its log's
// tail is kept, and names `describe job`; a pod killed as a whole names `describe pod`.
BOOST_AUTO_TEST_CASE(commands_name_the_pod_of_the_run_while_it_shows_it) {
    Verdict running_again = eval(job(), {with_containers(pod("p"), {running("migrations", 1)})});
    BOOST_TEST(running_again.command.value_or("") ==
               "kubectl -n gitlab logs pod/p -c migrations --previous");
    Verdict gone = eval(job(), {deleting(with_containers(pod("p"), {crashloop("migrations", 0)}))});
    BOOST_TEST(gone.command.value_or("") == "kubectl -n gitlab describe job/mig");
    BOOST_TEST(gone.progressing.message.find("; pod p is gone: the last lines of its log") !=
                   std::string::npos,
               gone.progressing.message);
    BOOST_REQUIRE(event_of(gone));
    BOOST_TEST(event_of(gone)->message == gone.progressing.message);
}

// Defect 7. Given an Indexed Job with backoffLimitPerIndex 2 and no backoffLimit, then
// the backoffLimit is the API's MaxInt32, counts are per index, and failed indexes show.
BOOST_AUTO_TEST_CASE(indexed_jobs_count_per_index) {
    Pod failed =
        indexed(with_containers(pod("p3", "Failed"), {terminated("migrations", term(1))}), 3, 1);
    Pod running0 = indexed(with_containers(pod("p0"), {running("migrations")}), 0, 0);
    Job j = per_index(2);
    j.failed = 1;
    Verdict v = eval(j, {running0, failed});
    BOOST_TEST(v.counts.failed_pod_limit == 2147483647);
    BOOST_REQUIRE(v.counts.index);
    BOOST_TEST(*v.counts.index == 3);
    BOOST_TEST(v.progressing.message.find("index 3: attempt 2 of 3 failed, 1 left") == 0u,
               v.progressing.message);
    j.failed_indexes = "3";
    j.max_failed_indexes = 1;
    Verdict noted = eval(j, {running0, failed});
    BOOST_TEST(noted.progressing.message.find("failed indexes: 3 (maxFailedIndexes 1)") !=
               std::string::npos);
    BOOST_TEST(eval(job("Never", std::nullopt), {}).counts.failed_pod_limit == 7);
}

// Defect 9. Given a Job managed by MultiKueue with a stray local failed pod, then the
// counts come from the Job's status and the message says who manages it.
BOOST_AUTO_TEST_CASE(a_job_managed_elsewhere_is_counted_from_its_status) {
    Job j = job("Never");
    j.managed_by = "kueue.x-k8s.io/multikueue";
    j.failed = 2;
    Pod local = with_containers(pod("local", "Failed"), {terminated("migrations", term(1))});
    Verdict v = eval(j, {local});
    BOOST_TEST(v.counts.failed_pods == 2);
    BOOST_TEST(!v.last_failure);
    BOOST_TEST(v.progressing.message.find("managed by kueue.x-k8s.io/multikueue") !=
               std::string::npos);
    BOOST_TEST(v.command.value_or("") == "kubectl -n gitlab describe job/mig");
    j.managed_by = "kubernetes.io/job-controller";
    BOOST_TEST(eval(j, {local}).counts.failed_pods == 3);
}

BOOST_AUTO_TEST_SUITE_END()
