// Given a failed run of a gate's Job, then the tail of that run's log is kept: the
// previous container for an in-place restart, the current one for a container that has
// not restarted (or a pod that failed as a whole), cut to 50 lines / 8 KB, masked, and
// printed in a collapsed section; a log that cannot be read is noted, never an error.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <sstream>

#include "runner/base/secrets.h"
#include "runner/gating/kept_logs.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"

using namespace envgate;

namespace {

const JobIdentity k_job{"migrate-1a2b3c4d", "gitlab", "uid-job"};

// A pod whose container `migrations` failed once and runs again (restarted = true), or
// failed and was not restarted yet.
gates::Pod failed_pod(bool restarted) {
    gates::Pod pod;
    pod.name = "migrate-1a2b3c4d-x7k2p";
    pod.namespace_ = "gitlab";
    pod.uid = "uid-pod";
    pod.phase = "Running";
    gates::ContainerStatus c;
    c.name = "migrations";
    gates::ContainerTerminated t{1, "Error", "PG::LockNotAvailable", std::nullopt};
    if (restarted) {
        c.restart_count = 1;
        c.state.running = true;
        c.last_state.terminated = t;
    } else {
        c.state.terminated = t;
    }
    pod.containers.push_back(c);
    return pod;
}

gates::Failure failure_of(const gates::Pod& pod) {
    return {pod.name, "migrations", gates::FailureKind::restart, "Error",
            1,        true,         "PG::LockNotAvailable",      std::nullopt};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kept_logs_suite)

BOOST_AUTO_TEST_CASE(tail_keeps_the_last_lines_within_the_byte_cap) {
    std::string hundred;
    for (int i = 1; i <= 100; ++i) {
        hundred += "line " + std::to_string(i) + "\n";
    }
    std::string tail = log_tail(hundred, 50, 8192);
    BOOST_TEST(tail.substr(0, 8) == "line 51\n");
    BOOST_TEST(tail.substr(tail.size() - 8) == "line 100");
    BOOST_TEST(log_tail("a\nb\n", 50, 8192) == "a\nb");
    // The byte cap cuts at the next line start ...
    BOOST_TEST(log_tail("aaaa\nbb\ncc\n", 50, 6) == "bb\ncc");
    // ... and inside one long line at a UTF-8 boundary (é is two bytes).
    BOOST_TEST(log_tail("x\xc3\xa9yz", 50, 3) == "yz");
    BOOST_TEST(log_tail("", 50, 8192) == "");
}

BOOST_AUTO_TEST_CASE(restarted_container_keeps_its_previous_run_masked) {
    test::FakeKubeApi api;
    gates::Pod pod = failed_pod(true);
    clear_secrets();
    add_secret("s3cr3t-password");
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", true,
                 "connecting with s3cr3t-password\nPG::LockNotAvailable\n");
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", false, "the new run\n");
    gates::Counts counts;
    counts.attempt = 1;
    counts.limit = 6;
    FailedRun run = keep_failed_run(api, k_job, {pod}, failure_of(pod), counts);
    clear_secrets();
    BOOST_TEST(run.log_tail == "connecting with [MASKED]\nPG::LockNotAvailable");
    BOOST_TEST(run.attempt == 1);
    BOOST_TEST(run.limit == 6);
    BOOST_TEST(run.log_command ==
               "kubectl -n gitlab logs pod/migrate-1a2b3c4d-x7k2p -c migrations --previous");
    BOOST_TEST(run.description.find("exited 1 (Error)") != std::string::npos, run.description);
}

BOOST_AUTO_TEST_CASE(container_not_restarted_keeps_its_current_run) {
    test::FakeKubeApi api;
    gates::Pod pod = failed_pod(false);
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", false, "the failed run\n");
    FailedRun run = keep_failed_run(api, k_job, {pod}, failure_of(pod), {});
    BOOST_TEST(run.log_tail == "the failed run");
    BOOST_TEST(run.log_command ==
               "kubectl -n gitlab logs pod/migrate-1a2b3c4d-x7k2p -c migrations");
}

// Given a pod that failed as a whole (restartPolicy Never: a pod per run), then the
// command names that pod: `logs job/...` would read whichever pod kubectl picks.
BOOST_AUTO_TEST_CASE(failed_pod_names_its_own_pod_in_the_command) {
    test::FakeKubeApi api;
    gates::Pod pod = failed_pod(false);
    pod.phase = "Failed";
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", false, "run 1\n");
    gates::Failure f = failure_of(pod);
    f.kind = gates::FailureKind::pod;
    FailedRun run = keep_failed_run(api, k_job, {pod}, f, {});
    BOOST_TEST(run.log_tail == "run 1");
    BOOST_TEST(run.log_command ==
               "kubectl -n gitlab logs pod/migrate-1a2b3c4d-x7k2p -c migrations");
}

BOOST_AUTO_TEST_CASE(unreadable_log_is_noted_not_an_error) {
    test::FakeKubeApi api;
    gates::Pod pod = failed_pod(true);
    FailedRun gone = keep_failed_run(api, k_job, {}, failure_of(pod), {});
    BOOST_TEST(gone.log_tail.empty());
    BOOST_TEST(gone.log_note.find("the pod was deleted before the gate could read it") !=
                   std::string::npos,
               gone.log_note);
    // kubectl logs would find no pod either: the pod's events are what still answers.
    BOOST_TEST(gone.log_command ==
               "kubectl -n gitlab get events --field-selector involvedObject.name=" + pod.name);
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", true, "boom\n");
    api.fail_next(Code::transient, "logs");
    FailedRun refused = keep_failed_run(api, k_job, {pod}, failure_of(pod), {});
    BOOST_TEST(refused.log_tail.empty());
    BOOST_TEST(refused.log_note.find("its log could not be read") != std::string::npos,
               refused.log_note);
}

// Given a container's failed runs as the kubelet shows them, then each is numbered as
// the run it was: the previous run of a running container is run restartCount, in
// back-off (waiting) or not restarted yet its last run is run restartCount + 1.
BOOST_AUTO_TEST_CASE(numbers_the_container_run_that_failed) {
    test::FakeKubeApi api;
    gates::Pod running = failed_pod(true);  // restartCount 1, running again
    BOOST_TEST(keep_failed_run(api, k_job, {running}, failure_of(running), {}).container_run == 1);
    gates::Pod waiting = failed_pod(true);
    waiting.containers[0].state = {};
    waiting.containers[0].state.waiting = gates::ContainerWaiting{"CrashLoopBackOff", ""};
    BOOST_TEST(keep_failed_run(api, k_job, {waiting}, failure_of(waiting), {}).container_run == 2);
    gates::Pod killed = failed_pod(true);  // the Job is failing: the next run was stopped
    killed.deletion_timestamp = *parse_rfc3339("2026-01-01T00:00:00Z");
    killed.containers[0].restart_count = 2;
    killed.containers[0].state = {};
    killed.containers[0].state.terminated = gates::ContainerTerminated{143, "Error", "", {}};
    BOOST_TEST(keep_failed_run(api, k_job, {killed}, failure_of(killed), {}).container_run == 2);
    BOOST_TEST(keep_failed_run(api, k_job, {}, failure_of(killed), {}).container_run == -1);
}

// A run a pass saw first: `pod`'s container run `number` (0: the pod as a whole).
gates::SeenRun seen_run(const gates::Pod& pod, int number) {
    gates::SeenRun run;
    run.key = pod.uid + "/migrations/" + std::to_string(number);
    run.number = number;
    run.failure = failure_of(pod);
    return run;
}

// Given a failed run a pass saw first, then it is kept once, in the step and the log (a
// collapsed section); the same run again keeps nothing.
BOOST_AUTO_TEST_CASE(new_run_is_kept_once_in_step_and_log) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    test::FakeKubeApi api;
    std::ostringstream out;
    LogSettings settings;
    settings.sections = true;
    JobLog log(out, clock, settings);
    gates::Pod pod = failed_pod(true);
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", true, "boom\n");
    StepReport step;
    step.name = "pre-migrations";
    keep_run(api, log, k_job, {pod}, seen_run(pod, 1), step);
    keep_run(api, log, k_job, {pod}, seen_run(pod, 1), step);
    BOOST_REQUIRE(step.failed_runs.size() == 1U);
    BOOST_TEST(step.failed_runs[0].log_tail == "boom");
    BOOST_TEST(step.failed_runs[0].key == "uid-pod/migrations/1");
    std::string text = out.str();
    BOOST_TEST(text.find("section_start:") != std::string::npos, text);
    BOOST_TEST(text.find(":pre-migrations-failed-run-1[collapsed=true]") != std::string::npos,
               text);
    BOOST_TEST(text.find("\n    boom\n") != std::string::npos, text);
    BOOST_TEST(text.find("section_end:") != std::string::npos, text);
    BOOST_TEST(step.failed_runs[0].run == 1);
}

// Given two runs of one container that failed alike (same exit code, reason, message),
// then they are two entries: a run is its (pod, container, number), not its words.
BOOST_AUTO_TEST_CASE(runs_that_fail_alike_are_kept_apart) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    test::FakeKubeApi api;
    std::ostringstream out;
    JobLog log(out, clock, {});
    gates::Pod pod = failed_pod(false);
    StepReport step;
    step.name = "pre-migrations";
    keep_run(api, log, k_job, {pod}, seen_run(pod, 1), step);
    pod.containers[0].restart_count = 1;  // restarted, and the next run failed alike
    keep_run(api, log, k_job, {pod}, seen_run(pod, 2), step);
    BOOST_REQUIRE(step.failed_runs.size() == 2U);
    BOOST_TEST(step.failed_runs[0].container_run == 1);
    BOOST_TEST(step.failed_runs[1].container_run == 2);
    BOOST_TEST(step.failed_runs[1].run == 2);
}

// Given a run whose end no pass saw (its container ran again first) and one a podFailure
// Policy ignores, then both are kept, saying so, and no log is read for the first.
BOOST_AUTO_TEST_CASE(unseen_and_ignored_runs_are_kept_saying_so) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    test::FakeKubeApi api;
    std::ostringstream out;
    JobLog log(out, clock, {});
    gates::Pod pod = failed_pod(true);
    StepReport step;
    step.name = "pre-migrations";
    gates::SeenRun unseen = seen_run(pod, 1);
    unseen.seen_end = false;
    unseen.message = "container migrations of pod P failed (its run 1)";
    keep_run(api, log, k_job, {pod}, unseen, step);
    gates::SeenRun ignored = seen_run(pod, 0);
    ignored.key = "uid-pod";
    ignored.counted = false;
    ignored.ignored_why = "podFailurePolicy rule 0 (Ignore) matches its condition DisruptionTarget";
    keep_run(api, log, k_job, {pod}, ignored, step);
    BOOST_REQUIRE(step.failed_runs.size() == 2U);
    BOOST_TEST(step.failed_runs[0].log_note.find("its end was not seen") != std::string::npos);
    BOOST_TEST(!step.failed_runs[1].counted);
    BOOST_TEST(step.failed_runs[1].description.find("(not counted: podFailurePolicy rule 0") !=
                   std::string::npos,
               step.failed_runs[1].description);
    auto log_reads = std::count_if(api.calls_made.begin(), api.calls_made.end(),
                                   [](const std::string& c) { return c.rfind("logs ", 0) == 0; });
    BOOST_TEST(log_reads == 1);
}

// Given a snapshot showing run 1 of a container failed and not restarted yet, and the
// kubelet restarting it before the gate reads the log (the API's pod now shows run 2
// running), then the kept tail is run 1's (read with --previous), not run 2's, and the
// command names the pod with --previous. (Found on the real kubelet: run 2's log kept
// as run 1's.)
BOOST_AUTO_TEST_CASE(a_restart_before_the_read_keeps_the_failed_run_not_the_next) {
    test::FakeKubeApi api;
    gates::Pod pod = failed_pod(false);
    api.seed(kube::pods("gitlab", pod.name), nlohmann::json::parse(R"({
        "metadata": {"name": "migrate-1a2b3c4d-x7k2p", "namespace": "gitlab", "uid": "uid-pod"},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "migrations", "restartCount": 1,
            "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}})"));
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", false, "run 2: migrating\n");
    api.set_logs(kube::pods("gitlab", pod.name), "migrations", true, "run 1: migrating\n");
    FailedRun run = keep_failed_run(api, k_job, {pod}, failure_of(pod), {});
    BOOST_TEST(run.container_run == 1);
    BOOST_TEST(run.log_tail == "run 1: migrating");
    BOOST_TEST(run.log_command ==
               "kubectl -n gitlab logs pod/migrate-1a2b3c4d-x7k2p -c migrations --previous");
}

// Given kept failed runs and the pods of a later pass, then each run's command is the one
// that shows it then: --previous once its container restarted, none once a later run
// replaced it, its pod is gone or finished, which its note says.
BOOST_AUTO_TEST_CASE(kept_commands_follow_the_pods_until_they_no_longer_work) {
    const std::string cmd = "kubectl -n gitlab logs pod/migrate-1a2b3c4d-x7k2p -c migrations";
    StepReport step;
    FailedRun one;
    one.pod = "migrate-1a2b3c4d-x7k2p";
    one.container = "migrations";
    one.container_run = 1;
    one.log_command = cmd;
    one.log_note = "the last lines of its log";
    step.failed_runs = {one};
    gates::Pod pod = failed_pod(true);  // run 1 is the lastState, run 2 runs
    refresh_log_commands(k_job, {pod}, step);
    BOOST_TEST(step.failed_runs[0].log_command == cmd + " --previous");
    pod.containers[0].restart_count = 2;  // run 2 failed too and run 3 runs
    refresh_log_commands(k_job, {pod}, step);
    BOOST_TEST(step.failed_runs[0].log_command.empty());
    BOOST_TEST(step.failed_runs[0].log_note ==
               "the last lines of its log; kubectl logs no longer shows it: later runs of "
               "container migrations replaced it");
    step.failed_runs = {one};
    refresh_log_commands(k_job, {}, step);
    BOOST_TEST(step.failed_runs[0].log_command.empty());
    BOOST_TEST(step.failed_runs[0].log_note ==
               "the last lines of its log; kubectl logs no longer shows it: pod "
               "migrate-1a2b3c4d-x7k2p is gone");
    // The pod finished (run 2 passed): a real node keeps the last run's log only.
    step.failed_runs = {one};
    pod = failed_pod(true);
    pod.phase = "Succeeded";
    refresh_log_commands(k_job, {pod}, step);
    BOOST_TEST(step.failed_runs[0].log_command.empty());
    BOOST_TEST(step.failed_runs[0].log_note ==
               "the last lines of its log; kubectl logs no longer shows it once pod "
               "migrate-1a2b3c4d-x7k2p finished: its node keeps only the last run's log");
}

// Given a container run read as it ended (read_ended_runs), when later runs replaced
// its log before a pass keeps it, then the kept tail is the one read then, without
// another read. A run not restarted yet in a pod that goes on is read once the pod shows
// the restart (with --previous: before, the kubelet may already serve the next run's log
// as the current one); in a pod being deleted it is read at once. A run read once is not
// read again; a run its pod's deletion killed is not read at all (not a failed run).
BOOST_AUTO_TEST_CASE(a_run_read_as_it_ended_keeps_that_read) {
    test::FakeClock clock(*parse_rfc3339("2026-01-01T00:00:00Z"));
    test::FakeKubeApi api;
    std::ostringstream out;
    JobLog log(out, clock, {});
    auto log_reads = [&] {
        return std::count_if(api.calls_made.begin(), api.calls_made.end(),
                             [](const std::string& c) { return c.rfind("logs ", 0) == 0; });
    };
    gates::Pod ended = failed_pod(false);  // run 1 failed, not restarted yet
    const kube::ResourceRef ref = kube::pods("gitlab", ended.name);
    api.set_logs(ref, "migrations", false, "run 1\n");
    EarlyReads reads;
    read_ended_runs(api, k_job, {ended}, reads);
    BOOST_TEST(reads.empty());
    BOOST_TEST(log_reads() == 0);
    gates::Pod restarted = failed_pod(true);  // run 2 runs: --previous shows run 1
    api.set_logs(ref, "migrations", true, "run 1\n");
    api.set_logs(ref, "migrations", false, "run 2\n");
    read_ended_runs(api, k_job, {restarted}, reads);
    read_ended_runs(api, k_job, {restarted}, reads);
    BOOST_REQUIRE(reads.count("uid-pod/migrations/1") == 1U);
    BOOST_TEST(reads.at("uid-pod/migrations/1").tail == "run 1");
    BOOST_TEST(log_reads() == 1);
    // Runs 2 and 3 ran since: the API's logs show them, and no longer run 1.
    api.set_logs(ref, "migrations", false, "run 3\n");
    api.set_logs(ref, "migrations", true, "run 2\n");
    StepReport step;
    step.name = "pre-migrations";
    keep_run(api, log, k_job, {ended}, seen_run(ended, 1), step, &reads);
    BOOST_REQUIRE(step.failed_runs.size() == 1U);
    BOOST_TEST(step.failed_runs[0].log_tail == "run 1");
    BOOST_TEST(log_reads() == 1);
    // A pod being deleted runs nothing more: its failed current run is read at once.
    gates::Pod deleting = failed_pod(false);
    deleting.uid = "uid-deleting";
    deleting.deletion_timestamp = *parse_rfc3339("2026-01-01T00:00:00Z");
    read_ended_runs(api, k_job, {deleting}, reads);
    BOOST_TEST(reads.count("uid-deleting/migrations/1") == 1U);
    BOOST_TEST(log_reads() == 2);
    gates::Pod killed = deleting;
    killed.uid = "uid-killed";
    killed.containers[0].state.terminated = gates::ContainerTerminated{143, "Error", "", {}};
    read_ended_runs(api, k_job, {killed}, reads);
    BOOST_TEST(log_reads() == 2);
}

BOOST_AUTO_TEST_SUITE_END()
