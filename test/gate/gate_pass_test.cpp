// Given a pass evaluated from the watch caches alone, then it stands only when it
// concludes what the last pass did: the same counts, the same state, the same memory,
// no event and no end; otherwise the gate reads a fresh snapshot.
#include <boost/test/unit_test.hpp>

#include "runner/gating/gate_pass.h"

using namespace envgate;

namespace {

gates::Verdict verdict(gates::State state, int failed_pods) {
    gates::Verdict v;
    v.state = state;
    v.counts.failed_pods = failed_pods;
    v.counts.failed_pod_limit = 5;
    v.counts.attempt = failed_pods;
    v.counts.limit = 5;
    v.counts.left = 5 - failed_pods;
    v.counts.nearer = gates::FailureKind::pod;
    v.memory.job_uid = "uid-1";
    return v;
}

gates::Job on_failure_job(int backoff_limit) {
    gates::Job job;
    job.restart_policy = "OnFailure";
    job.backoff_limit = backoff_limit;
    return job;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_pass_suite)

BOOST_AUTO_TEST_CASE(a_cached_pass_that_concludes_what_the_last_did_stands) {
    gates::Verdict v = verdict(gates::State::retrying, 1);
    BOOST_TEST(cached_pass_stands(v, true, v.memory, LastPass{v.counts, gates::State::retrying}));
}

// Found on the real control plane (1 run in 15): between two retries the pod cache had
// the failed pod without its tracking finalizer while the Job cache did not count it
// yet; the cached pass said "running", and the next pass reported the retry again.
BOOST_AUTO_TEST_CASE(a_cached_pass_with_a_state_of_its_own_does_not_stand) {
    gates::Verdict v = verdict(gates::State::running, 1);
    BOOST_TEST(!cached_pass_stands(v, true, v.memory, LastPass{v.counts, gates::State::retrying}));
}

BOOST_AUTO_TEST_CASE(a_first_cached_pass_stands_only_running_with_nothing_failed) {
    gates::Verdict running = verdict(gates::State::running, 0);
    BOOST_TEST(cached_pass_stands(running, true, running.memory, std::nullopt));
    gates::Verdict suspended = verdict(gates::State::suspended, 0);
    BOOST_TEST(!cached_pass_stands(suspended, true, suspended.memory, std::nullopt));
    gates::Verdict retrying = verdict(gates::State::retrying, 1);
    BOOST_TEST(!cached_pass_stands(retrying, true, retrying.memory, std::nullopt));
}

BOOST_AUTO_TEST_CASE(a_cached_pass_that_changes_counts_or_ends_does_not_stand) {
    gates::Verdict v = verdict(gates::State::retrying, 2);
    BOOST_TEST(!cached_pass_stands(
        v, true, v.memory,
        LastPass{verdict(gates::State::retrying, 1).counts, gates::State::retrying}));
    gates::Verdict failed = verdict(gates::State::failed, 1);
    BOOST_TEST(!cached_pass_stands(failed, true, failed.memory,
                                   LastPass{failed.counts, gates::State::failed}));
    BOOST_TEST(!cached_pass_stands(v, false, v.memory, LastPass{v.counts, v.state}));
}

// Given a pass whose memory differs from the Job's annotations only in what the Job's
// own conditions show (failing, failed, completed) or in the recorded *Failed event,
// then that memory is not written: one write fewer at the end of every gate.
BOOST_AUTO_TEST_CASE(a_memory_that_only_says_what_the_job_shows_is_not_written) {
    gates::GateMemory saved;
    saved.job_uid = "uid-1";
    saved.observed_failures = 6;
    saved.attempts = 6;
    gates::GateMemory now = saved;
    BOOST_TEST(only_what_the_job_shows(now, saved));
    now.ended = gates::EndedBy{"FailureTarget", "BackoffLimitExceeded", "limit"};
    BOOST_TEST(only_what_the_job_shows(now, saved));
    now.ended->type = "Failed";
    now.failure_recorded = true;
    BOOST_TEST(only_what_the_job_shows(now, saved));
    now.observed_failures = 7;  // a count is the gate's own: written
    BOOST_TEST(!only_what_the_job_shows(now, saved));
    now = saved;
    now.last_failure = gates::Failure{};
    BOOST_TEST(!only_what_the_job_shows(now, saved));

    // No annotations yet: a Job seen completed at once needs none.
    gates::GateMemory done;
    done.job_uid = "uid-1";
    done.completed = true;
    BOOST_TEST(only_what_the_job_shows(done, gates::GateMemory{}));
    done.attempts = 1;
    BOOST_TEST(!only_what_the_job_shows(done, gates::GateMemory{}));
}

// Given the Job cached up to a revision, then a write by the Job controller is expected
// for a pod that ended (Succeeded or Failed) after that revision, or whose readiness
// the Job's status.ready no longer counts; not for one that ended before it (the
// controller's answer is in the cache), a running one whose readiness is counted, or
// a Job another controller manages.
BOOST_AUTO_TEST_CASE(a_job_write_is_expected_for_a_pod_that_ended_after_the_cached_job) {
    auto pod_at = [](const std::string& phase, int version) {
        return nlohmann::json{{"metadata", {{"resourceVersion", std::to_string(version)}}},
                              {"status", {{"phase", phase}}}};
    };
    nlohmann::json job = {{"spec", {{"backoffLimit", 4}}}};
    BOOST_TEST(job_write_expected(job, {pod_at("Running", 12), pod_at("Failed", 11)}, 10));
    BOOST_TEST(job_write_expected(job, {pod_at("Succeeded", 11)}, 10));
    BOOST_TEST(!job_write_expected(job, {pod_at("Failed", 9)}, 10));
    BOOST_TEST(!job_write_expected(job, {pod_at("Running", 12), pod_at("Pending", 13)}, 10));
    BOOST_TEST(!job_write_expected(job, {}, 10));
    nlohmann::json other = job;
    other["spec"]["managedBy"] = "example.com/queue";
    BOOST_TEST(!job_write_expected(other, {pod_at("Failed", 11)}, 10));
    other["spec"]["managedBy"] = "kubernetes.io/job-controller";
    BOOST_TEST(job_write_expected(other, {pod_at("Failed", 11)}, 10));

    // A crashed OnFailure container makes its pod not ready: the controller rewrites
    // status.ready. Once it has, or for a change older than the cached Job, nothing.
    auto ready_pod = [&](bool ready, int version) {
        auto p = pod_at("Running", version);
        p["status"]["conditions"] = {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}};
        return p;
    };
    nlohmann::json counting = job;
    counting["status"]["ready"] = 1;
    BOOST_TEST(job_write_expected(counting, {ready_pod(false, 11)}, 10));
    BOOST_TEST(!job_write_expected(counting, {ready_pod(true, 11)}, 10));
    BOOST_TEST(!job_write_expected(counting, {ready_pod(false, 9)}, 10));
    counting["status"]["ready"] = 0;
    BOOST_TEST(!job_write_expected(counting, {ready_pod(false, 11)}, 10));
    BOOST_TEST(job_write_expected(counting, {ready_pod(true, 11)}, 10));
}

// Given the Job cached up to a revision, then a pod that failed on its own after it
// (phase Failed, not being deleted) is evidence to read at once: not one that failed
// before it, one that is being deleted (its count is the controller's), nor one that
// ended well or still runs.
BOOST_AUTO_TEST_CASE(a_pod_failed_on_its_own_after_the_cached_job_is_read_at_once) {
    auto pod_at = [](const std::string& phase, int version) {
        return nlohmann::json{{"metadata", {{"resourceVersion", std::to_string(version)}}},
                              {"status", {{"phase", phase}}}};
    };
    BOOST_TEST(pod_failed_after({pod_at("Running", 12), pod_at("Failed", 11)}, 10));
    BOOST_TEST(!pod_failed_after({pod_at("Failed", 9), pod_at("Running", 12)}, 10));
    BOOST_TEST(!pod_failed_after({pod_at("Failed", 10)}, 10));
    BOOST_TEST(!pod_failed_after({pod_at("Succeeded", 11), pod_at("Pending", 12)}, 10));
    BOOST_TEST(!pod_failed_after({}, 10));
    auto deleted = pod_at("Failed", 11);
    deleted["metadata"]["deletionTimestamp"] = "2026-12-01T10:00:05Z";
    BOOST_TEST(!pod_failed_after({deleted}, 10));
}

// Given a Job of the Job controller's, then its memory may wait on the pods only for
// restartPolicy Never and while the gate has not ended; OnFailure restarts, and a Job
// another controller manages, are written as they come.
BOOST_AUTO_TEST_CASE(only_a_running_never_job_s_pods_keep_the_memory) {
    gates::Job never;
    never.restart_policy = "Never";
    for (auto state : {gates::State::running, gates::State::retrying, gates::State::failing,
                       gates::State::suspended}) {
        BOOST_TEST(memory_kept_by_pods(never, state));
    }
    BOOST_TEST(!memory_kept_by_pods(never, gates::State::failed));
    BOOST_TEST(!memory_kept_by_pods(never, gates::State::succeeded));
    BOOST_TEST(!memory_kept_by_pods(on_failure_job(4), gates::State::retrying));
    gates::Job elsewhere = never;
    elsewhere.managed_by = "example.com/queue";
    BOOST_TEST(!memory_kept_by_pods(elsewhere, gates::State::retrying));
}

// Given two verdicts in a row, then the second says the same as the first only with the
// same state, reason and words; the command each ends with may differ.
BOOST_AUTO_TEST_CASE(a_verdict_differing_only_by_its_command_says_the_same) {
    const std::string words =
        "Job gitlab/m is failing: BackoffLimitExceeded: Job has reached the specified "
        "backoff limit. Details: ";
    const std::string logs = "kubectl -n gitlab logs job/m -c migrations --previous";
    const std::string describe = "kubectl -n gitlab describe job/m";
    VerdictChange last{{}, "failing", "RunningPreMigrations", words + describe, describe, 5, 5};
    VerdictChange next = last;
    next.message = words + logs;
    next.command = logs;
    BOOST_TEST(says_the_same(last, next));
    next.message = "Job gitlab/m is failing: DeadlineExceeded. Details: " + logs;
    BOOST_TEST(!says_the_same(last, next));
    next = last;
    next.state = "failed";
    BOOST_TEST(!says_the_same(last, next));
    next = last;
    next.command.reset();  // no command: the whole message counts
    BOOST_TEST(!says_the_same(last, next));
    last.command.reset();
    BOOST_TEST(says_the_same(last, next));
}

BOOST_AUTO_TEST_SUITE_END()
