// Given one snapshot of a Job, its pods and the gate's memory, then the verdict follows
// spec/gates.md: state and reason per gate, counts against the controller's limits, the
// last failure, the kubectl command and at most one event. One named case per rule.
#include <boost/test/unit_test.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gates/evaluate.h"
#include "test/gates/builders.h"

using namespace envgate::gates;
using namespace envgate::gates::test;

namespace {

struct Input {
    Gate gate = Gate::pre_migrations;
    std::optional<Job> job = {};
    std::vector<Pod> pods = {};
    GateMemory memory = {};
};

struct Want {
    State state;
    std::string reason;  // Progressing reason
    std::optional<int> restarts = {};
    std::optional<int> failed_pods = {};
    std::optional<int> attempt = {};
    std::optional<int> limit = {};
    std::optional<int> left = {};
    std::optional<std::string> event = {};    // event reason; "" means no event
    std::optional<std::string> command = {};  // exact command; "" means null
    std::string message_has = {};             // substring of the Progressing message
    std::string failure_reason = {};          // last failure reason; "" means none
};

struct Case {
    const char* name;
    Input input;
    Want want;
};

Pod crashing(const std::string& name, int restarts) {
    return with_containers(pod(name), {crashloop("migrations", restarts)});
}

Pod evicted(const std::string& name) {
    Pod p = with_containers(pod(name, "Failed"),
                            {terminated("migrations", term(137, "ContainerStatusUnknown", ""))});
    p.reason = "Evicted";
    p.message = "The node was low on resource: memory.";
    return disrupted(p, "TerminationByKubelet", "The node was low on resource: memory.");
}

Job with_failed(Job j, int failed) {
    j.failed = failed;
    return j;
}

Job failed_job(Job j, const char* reason = "BackoffLimitExceeded",
               const char* message = "Job has reached the specified backoff limit") {
    return with_condition(std::move(j), cond("Failed", reason, message));
}

GateMemory remembered(int runs) {
    GateMemory m;
    m.job_uid = "job-uid";
    m.job_namespace = "gitlab";
    m.job_name = "mig";
    m.observed_failures = runs;
    m.restarts = runs;
    m.failed_runs = {{"p-uid/migrations", runs}};
    return m;
}

Job with_policy(Job j, std::vector<PodFailureRule> rules) {
    j.pod_failure_policy = std::move(rules);
    j.pod_replacement_policy = "Failed";
    return j;
}

const char* k_logs = "kubectl -n gitlab logs pod/p -c migrations --previous";
const char* k_describe = "kubectl -n gitlab describe job/mig";
// The cause of a waiting pod is in its status and events, which `describe job` omits.
const char* k_describe_pod = "kubectl -n gitlab describe pod/p";
const char* k_events = "kubectl -n gitlab get events --field-selector involvedObject.name=mig";

Job ttl(Job j, int seconds) {
    j.ttl_seconds_after_finished = seconds;
    return j;
}

// Two runs failed on pod p, which is gone since.
GateMemory failed_on_gone_pod() {
    GateMemory m = remembered(2);
    Failure f;
    f.pod = "p";
    f.container = "migrations";
    f.reason = "Error";
    m.last_failure = f;
    return m;
}

std::vector<Case> cases() {
    const Job on_failure = job();
    const Job never = job("Never");
    PodFailureRule ignore_disruption{"Ignore", std::nullopt, {{"DisruptionTarget", "True"}}};
    PodFailureRule ignore_137{"Ignore", ExitCodeRule{"migrations", "In", {137}}, {}};
    Pod other_job = crashing("other", 3);
    other_job.labels["batch.kubernetes.io/controller-uid"] = "older-job-uid";
    other_job.owner_uid = "older-job-uid";
    Pod other_ns = crashing("p", 3);
    other_ns.namespace_ = "elsewhere";
    Job odd = on_failure;
    odd.namespace_ = "Team_A";
    odd.name = "mig'1";
    Pod odd_pod = with_containers(pod("p"), {crashloop("Migrate DB", 0)});
    odd_pod.namespace_ = "Team_A";
    Job no_selector = on_failure;
    no_selector.selector.clear();
    Job uncounted = never;
    uncounted.failed = 1;
    uncounted.uncounted_failed = {"p2-uid"};
    Pod pending_unschedulable = pod("p", "Pending");
    pending_unschedulable.conditions.push_back(cond(
        "PodScheduled", "Unschedulable", "0/3 nodes are available: 3 Insufficient cpu.", "False"));
    GateMemory completed;
    completed.completed = true;
    completed.job_namespace = "gitlab";
    completed.job_name = "mig";
    GateMemory recorded = remembered(2);
    recorded.failure_recorded = true;
    Job failed_once = never;
    failed_once.failed = 6;
    return {
        {"running_while_pod_runs_without_failure",
         {.job = on_failure, .pods = {with_containers(pod("p"), {running("migrations")})}},
         {.state = State::running,
          .reason = "RunningPreMigrations",
          .restarts = 0,
          .attempt = 0,
          .left = 6,
          .event = "",
          .command = ""}},
        {"running_names_image_pull_backoff",
         {.job = on_failure,
          .pods = {with_containers(pod("p", "Pending"),
                                   {waiting("migrations", "ImagePullBackOff",
                                            "Back-off pulling image \"toolbox:v0\"")})}},
         {.state = State::running,
          .reason = "RunningPreMigrations",
          .command = k_describe_pod,
          .message_has = "ImagePullBackOff: Back-off pulling image"}},
        {"running_names_create_container_config_error",
         {.job = on_failure,
          .pods = {with_containers(
              pod("p", "Pending"),
              {waiting("migrations", "CreateContainerConfigError", "secret \"db\" not found")})}},
         {.state = State::running,
          .reason = "RunningPreMigrations",
          .command = k_describe_pod,
          .message_has = "CreateContainerConfigError: secret \"db\" not found"}},
        {"running_names_unschedulable_pending_pod",
         {.job = on_failure, .pods = {pending_unschedulable}},
         {.state = State::running,
          .reason = "RunningPreMigrations",
          .command = k_describe_pod,
          .message_has = "not scheduled: Unschedulable: 0/3 nodes are available: 3 Insufficient "
                         "cpu. Details: kubectl -n gitlab describe pod/p"}},
        {"running_without_pods_points_at_failed_create_events",
         {.job = on_failure},
         {.state = State::running, .reason = "RunningPreMigrations", .message_has = "no pod yet"}},
        {"counts_crash_loop_one_ahead_of_the_controller",
         {.job = on_failure, .pods = {crashing("p", 1)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 2,
          .attempt = 2,
          .limit = 6,
          .left = 4,
          .event = "MigrationsRetrying",
          .command = k_logs,
          .message_has = "attempt 2 of 6 failed, 4 left: container migrations exited 1 (Error): "
                         "boom",
          .failure_reason = "Error"}},
        {"counts_running_restarted_container_without_extra_run",
         {.job = on_failure, .pods = {with_containers(pod("p"), {running("migrations", 2)})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 2,
          .event = "MigrationsRetrying",
          .command = k_logs}},
        // Not restarted yet: its logs are the current container's (no --previous).
        {"counts_terminated_nonzero_run_before_its_restart",
         {.job = on_failure,
          .pods = {with_containers(pod("p"), {terminated("migrations", term(2))})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 1,
          .event = "MigrationsRetrying",
          .command = "kubectl -n gitlab logs pod/p -c migrations"}},
        {"counts_init_container_crash_loop",
         {.job = on_failure,
          .pods = {with_containers(pod("p", "Pending"),
                                   {waiting("migrations", "PodInitializing", "")},
                                   {crashloop("configure", 1)})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 2,
          .event = "MigrationsRetrying",
          .command = "kubectl -n gitlab logs pod/p -c configure --previous"}},
        {"counts_sidecar_restarts_like_init_containers",
         {.job = on_failure,
          .pods = {with_containers(pod("p"), {running("migrations")}, {running("proxy", 3)})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 3,
          .command = "kubectl -n gitlab logs pod/p -c proxy --previous"}},
        {"ignores_restarts_under_never_and_counts_the_failed_pod",
         {.job = never,
          .pods = {with_containers(pod("p", "Failed"), {terminated("migrations", term(1))})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 0,
          .failed_pods = 1,
          .attempt = 1,
          .limit = 7,
          .left = 6,
          .event = "MigrationsRetrying",
          // The pod of a run under Never keeps its container's one run: its log.
          .command = "kubectl -n gitlab logs pod/p -c migrations",
          .message_has = "pod 1 of 7 failed, 6 left: pod p failed (Error)",
          .failure_reason = "Error"}},
        {"missing_backoff_limit_means_six",
         {.job = job("OnFailure", std::nullopt), .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 1,
          .attempt = 1,
          .limit = 6,
          .left = 5,
          .event = "MigrationsRetrying"}},
        {"backoff_limit_zero_allows_one_failed_run",
         {.job = job("OnFailure", 0), .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 1,
          .attempt = 1,
          .limit = 1,
          .left = 0,
          .event = "MigrationsRetrying",
          .command = k_logs}},
        {"backoff_limit_one_budgets_restarts_like_zero",
         {.job = job("OnFailure", 1), .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 1,
          .attempt = 1,
          .limit = 1,
          .left = 0}},
        {"failed_pods_nearer_their_limit_are_reported",
         {.job =
              [&] {
                  Job j = on_failure;
                  j.failed = 6;
                  return j;
              }(),
          .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 1,
          .failed_pods = 6,
          .attempt = 6,
          .limit = 7,
          .left = 1}},
        {"evicted_pod_is_a_pod_retry_with_untrusted_exit_code",
         {.job = never, .pods = {evicted("p")}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 1,
          .attempt = 1,
          .limit = 7,
          .left = 6,
          .event = "MigrationsRetrying",
          // A killed container's log is not the failure's: the pod's status and events.
          .command = k_describe_pod,
          .message_has = "exit code 137 comes from the kill, not from the migration",
          .failure_reason = "TerminationByKubelet"}},
        {"evicted_pod_without_status_reason_is_classified_by_its_condition",
         {.job = never, .pods = {[] {
                            Pod p = evicted("p");
                            p.reason.clear();
                            return p;
                        }()}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 1,
          .message_has = "was evicted by the kubelet (TerminationByKubelet)",
          .failure_reason = "TerminationByKubelet"}},
        {"deleted_pod_with_finalizer_counts_at_once",
         {.job = never,
          .pods = {disrupted(deleting(with_containers(pod("p"), {running("migrations")})),
                             "EvictionByEvictionAPI", "Eviction API: evicting")}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 1,
          .event = "MigrationsRetrying",
          .command = k_describe,
          .message_has = "was evicted through the Eviction API",
          .failure_reason = "EvictionByEvictionAPI"}},
        {"deleted_pod_without_disruption_condition_is_reported_deleted",
         {.job = never, .pods = {deleting(with_containers(pod("p"), {running("migrations")}))}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 1,
          .message_has = "pod p was deleted (Deleted)",
          .failure_reason = "Deleted"}},
        {"uncounted_failed_pods_count_once",
         {.job = uncounted,
          .pods = {with_containers(pod("p2", "Failed"), {terminated("migrations", term(1))})}},
         {.state = State::retrying, .reason = "RetryingPreMigrations", .failed_pods = 2}},
        {"failed_pod_without_finalizer_is_already_in_status_failed",
         {.job =
              [&] {
                  Job j = never;
                  j.failed = 1;
                  return j;
              }(),
          .pods = {[] {
              Pod p = with_containers(pod("p", "Failed"), {terminated("migrations", term(1))});
              p.finalizers.clear();
              return p;
          }()}},
         {.state = State::retrying, .reason = "RetryingPreMigrations", .failed_pods = 1}},
        {"pod_failure_policy_ignore_on_disruption_leaves_pod_out",
         {.job = with_policy(never, {ignore_disruption}), .pods = {evicted("p")}},
         {.state = State::running, .reason = "RunningPreMigrations", .failed_pods = 0}},
        {"pod_failure_policy_ignore_on_exit_code_leaves_pod_out",
         {.job = with_policy(never, {ignore_137}),
          .pods = {with_containers(pod("p", "Failed"), {terminated("migrations", term(137))})}},
         {.state = State::running, .reason = "RunningPreMigrations", .failed_pods = 0}},
        {"pod_failure_policy_counts_failures_no_rule_ignores",
         {.job = with_policy(never, {ignore_137}),
          .pods = {with_containers(pod("p", "Failed"), {terminated("migrations", term(1))})}},
         {.state = State::retrying, .reason = "RetryingPreMigrations", .failed_pods = 1}},
        {"pod_failure_policy_counts_terminating_pod_only_once_failed",
         {.job = with_policy(never, {ignore_137}),
          .pods = {deleting(with_containers(pod("p"), {running("migrations")}))}},
         {.state = State::running, .reason = "RunningPreMigrations", .failed_pods = 0}},
        {"fail_job_rule_ends_through_failure_target",
         {.job = with_condition(with_policy(never, {}),
                                cond("FailureTarget", "PodFailurePolicy",
                                     "Container migrations for pod gitlab/p failed with exit "
                                     "code 42 matching FailJob rule at index 0")),
          .pods = {with_containers(pod("p", "Failed"), {terminated("migrations", term(42))})}},
         {.state = State::failing,
          .reason = "RunningPreMigrations",
          .event = "",
          .command = k_describe,
          .message_has = "is failing: PodFailurePolicy: Container migrations for pod gitlab/p"}},
        {"failure_target_is_failing_and_records_no_event",
         {.job = with_condition(on_failure, cond("FailureTarget", "BackoffLimitExceeded",
                                                 "Job has reached the specified backoff limit")),
          .pods = {deleting(with_containers(pod("p"), {running("migrations", 6)}))}},
         {.state = State::failing,
          .reason = "RunningPreMigrations",
          .restarts = 6,
          .attempt = 6,
          .left = 0,
          // The controller is deleting the pod: `kubectl logs` would soon find none.
          .command = k_describe,
          .message_has = "; pod p is gone: the last lines of its log, read when the gate saw "
                         "the failure, are in this job log and the reports. Details: " +
                         std::string(k_describe),
          .failure_reason = "Error"}},
        // Found by the e2e secrets test: the controller failed the Job at restartCount 1
        // and deleted the pod before any pass saw it running again; the pass sees it only
        // as the watch delivered its deletion (Failed, its runs on it). The restarts that
        // failed the Job are that pod's, and its failed run is the last failure.
        {"a_pod_the_failure_deleted_carries_the_restarts_and_the_last_failure",
         {.job = failed_job(with_failed(job("OnFailure", 1), 1)),
          .pods = {deleting(with_containers(pod("p", "Failed"), {[] {
                                                ContainerStatus c = terminated(
                                                    "migrations", term(1, "Error", "boom"), 1);
                                                c.last_state.terminated = term(1, "Error", "boom");
                                                return c;
                                            }()}))}},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .restarts = 1,
          .attempt = 1,
          .limit = 1,
          .left = 0,
          .event = "MigrationsFailed",
          .message_has = "Last failure: container migrations exited 1 (Error): boom (attempt 1 "
                         "of 1 failed, 0 left)",
          .failure_reason = "Error"}},
        // Found under load on kubesim: the pod was created, failed and deleted before
        // the gate's first list. Nothing names the failure, but BackoffLimitExceeded
        // proves the limit was reached: the count says so, not "attempt 0 ... 1 left".
        {"backoff_limit_exceeded_with_no_failure_seen_counts_the_limit",
         {.job = failed_job(with_failed(job("OnFailure", 1), 1))},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .restarts = 1,
          .attempt = 1,
          .limit = 1,
          .left = 0,
          .message_has = "Last failure: none observed (attempt 1 of 1 failed, 0 left)"}},
        // Found on the real control plane (1 run in 20): the controller deletes the pod
        // whose restarts reached the limit, then writes FailureTarget; a pass in between
        // saw the Failed pod and said "retrying: attempt 0 of 4 failed, 4 left".
        {"a_pod_deleted_at_the_restart_limit_before_failure_target_is_failing",
         {.job = job("OnFailure", 4),
          .pods = {deleting(with_containers(
              pod("p", "Failed"), {terminated("migrations", term(1, "Error", "run 5"), 4)}))}},
         {.state = State::failing,
          .reason = "RunningPreMigrations",
          .restarts = 4,
          .attempt = 4,
          .limit = 4,
          .left = 0,
          .event = "",
          .message_has = "is failing: BackoffLimitExceeded"}},
        // An eviction is the pod's own failure, not the controller stopping it.
        {"an_evicted_pod_past_the_restart_limit_is_not_the_restart_limit",
         {.job = job("OnFailure", 4), .pods = {deleting([] {
                                          Pod p = evicted("p");
                                          p.containers[0].restart_count = 4;
                                          return p;
                                      }())}},
         {.state = State::retrying, .reason = "RetryingPreMigrations"}},
        // The kubelet restarts a crashing container at once the first time: a run can fail
        // after the one that reached the limit, before the controller stops the pod.
        {"a_run_past_the_limit_says_so",
         {.job = job("OnFailure", 2), .pods = {crashing("p", 2)}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 3,
          .attempt = 3,
          .limit = 2,
          .left = 0,
          .message_has = "attempt 3 of 2 failed, 0 left (the limit was reached at attempt 2; "
                         "the container ran once more before the Job controller stopped its "
                         "pod)"}},
        // The kubelet keeps a deleted pod Running while a container (a sidecar) still
        // stops: the run its SIGTERM ended (143) is neither a failed attempt nor the last
        // failure; the run before it (exit 7) stays the last failure.
        {"run_stopped_by_the_deletion_of_a_failing_pod_is_not_a_failure",
         {.job = with_condition(job("OnFailure", 2),
                                cond("FailureTarget", "BackoffLimitExceeded",
                                     "Job has reached the specified backoff limit")),
          .pods = {deleting(with_containers(
              pod("p"), {[] {
                             ContainerStatus c = terminated(
                                 "migrations", term(143, "Error", "", "2025-05-29T07:59:50Z"), 2);
                             c.last_state.terminated = term(7, "Error", "relation users missing");
                             return c;
                         }(),
                         running("proxy")}))},
          .memory = remembered(2)},
         {.state = State::failing,
          .reason = "RunningPreMigrations",
          .restarts = 2,
          .attempt = 2,
          .left = 0,
          .command = k_describe,
          .message_has = "exited 7 (Error): relation users missing (attempt 2 of 2 failed, 0 "
                         "left); pod p is gone",
          .failure_reason = "Error"}},
        // An OOM kill is the container's own failure, also on a pod being deleted.
        {"oom_kill_on_a_deleted_pod_is_still_a_failure",
         {.job = on_failure,
          .pods = {deleting(with_containers(
              pod("p"), {terminated("migrations", term(137, "OOMKilled", ""), 1)}))},
          .memory = remembered(1)},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .restarts = 2,
          // Two runs: the container's (exited 137, OOMKilled, counted in restarts), then
          // the pod's deletion, told as the deletion: the OOM kill is the run before.
          .message_has = "pod p was deleted (Deleted)",
          .failure_reason = "Deleted"}},
        {"failed_condition_fails_the_gate_once",
         {.job = failed_job(on_failure), .memory = remembered(6)},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .restarts = 6,
          .event = "MigrationsFailed",
          .command = k_describe,
          .message_has = "A change to the Job spec reruns the gate with a new Job."}},
        {"failed_after_recorded_failure_records_no_second_event",
         {.job = failed_job(on_failure), .memory = recorded},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .event = "",
          .command = k_describe}},
        {"failed_condition_with_status_false_is_not_a_failure",
         {.job = with_condition(on_failure, cond("Failed", "X", "", "False")),
          .pods = {with_containers(pod("p"), {running("migrations")})}},
         {.state = State::running, .reason = "RunningPreMigrations"}},
        {"deadline_exceeded_is_terminal",
         {.job = failed_job(on_failure, "DeadlineExceeded",
                            "Job was active longer than specified deadline")},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .event = "MigrationsFailed",
          .message_has =
              "failed: DeadlineExceeded: Job was active longer than specified deadline"}},
        // Found on the real control plane: the controller deletes the pods once the
        // deadline passed and writes FailureTarget after; a pass in between saw the
        // deleted pod as a retry (one MigrationsRetrying too many).
        {"a_pod_deleted_after_the_active_deadline_is_the_deadline_not_a_retry",
         {.job = past_deadline(job("OnFailure", 2)),
          .pods = {deleting(
              with_containers(pod("p", "Failed"), {terminated("migrations", term(143))}))}},
         {.state = State::failing,
          .reason = "RunningPreMigrations",
          .event = "",
          .message_has = "DeadlineExceeded: Job was active longer than specified deadline"}},
        {"complete_condition_succeeds",
         {.job = with_condition(on_failure, cond("Complete"))},
         {.state = State::succeeded,
          .reason = "PreMigrationsComplete",
          .event = "",
          .command = ""}},
        {"success_criteria_met_succeeds_before_complete",
         {.job = with_condition(on_failure, cond("SuccessCriteriaMet", "CompletionsReached"))},
         {.state = State::succeeded, .reason = "PreMigrationsComplete"}},
        // Who deleted it is in no object any more: the Job's events are what is left.
        {"job_deleted_while_waiting_fails_with_job_deleted",
         {.job = std::nullopt, .memory = remembered(2)},
         {.state = State::failed,
          .reason = "JobDeleted",
          .event = "MigrationsFailed",
          .command = k_events,
          .message_has = "was deleted before it completed (JobDeleted)"}},
        // ttlSecondsAfterFinished deletes the failed Job before anyone can describe it; its
        // events outlive it.
        {"failed_job_deleted_soon_by_its_ttl_points_at_its_events",
         {.job = failed_job(ttl(on_failure, 60)), .memory = remembered(6)},
         {.state = State::failed,
          .reason = "MigrationsJobFailed",
          .event = "MigrationsFailed",
          .command = k_events,
          .message_has = "Details: " + std::string(k_events) +
                         " (ttlSecondsAfterFinished 60 deletes the Job and its pods 1m0s after "
                         "it failed; its events outlive it)"}},
        {"failed_job_kept_longer_than_its_events_is_described",
         {.job = failed_job(ttl(on_failure, 86400)), .memory = remembered(6)},
         {.state = State::failed, .reason = "MigrationsJobFailed", .command = k_describe}},
        // The Job is failing and the controller already deleted the pod whose run failed:
        // `kubectl logs job/mig` would find no pod (or another one's runs).
        {"failing_whose_failed_pod_is_gone_is_described_not_logged",
         {.job = with_condition(on_failure, cond("FailureTarget", "BackoffLimitExceeded",
                                                 "Job has reached the specified backoff limit")),
          .memory = failed_on_gone_pod()},
         {.state = State::failing, .reason = "RunningPreMigrations", .command = k_describe}},
        {"job_deleted_after_it_completed_stays_succeeded",
         {.job = std::nullopt, .memory = completed},
         {.state = State::succeeded, .reason = "PreMigrationsComplete"}},
        {"quotes_odd_names_for_the_shell",
         {.job = odd, .pods = {odd_pod}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .command = "kubectl -n 'Team_A' logs pod/p -c 'Migrate DB' --previous"}},
        {"pods_of_another_job_with_the_same_name_are_not_selected",
         {.job = on_failure, .pods = {other_job}},
         {.state = State::running, .reason = "RunningPreMigrations", .restarts = 0}},
        {"pods_of_another_namespace_are_not_selected",
         {.job = on_failure, .pods = {other_ns}},
         {.state = State::running, .reason = "RunningPreMigrations", .restarts = 0}},
        {"job_without_match_labels_selects_by_owner_reference",
         {.job = no_selector, .pods = {crashing("p", 1), other_job}},
         {.state = State::retrying, .reason = "RetryingPreMigrations", .restarts = 2}},
        {"remembered_failures_record_no_event_again",
         {.job = on_failure, .pods = {crashing("p", 1)}, .memory = remembered(2)},
         {.state = State::retrying, .reason = "RetryingPreMigrations", .restarts = 2, .event = ""}},
        {"post_migrations_gate_uses_its_reasons",
         {.gate = Gate::post_migrations, .job = on_failure, .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingPostMigrations",
          .event = "MigrationsRetrying"}},
        {"post_migrations_running_reason",
         {.gate = Gate::post_migrations, .job = on_failure},
         {.state = State::running, .reason = "RunningPostMigrations"}},
        {"batched_check_gate_uses_its_retry_reasons",
         {.gate = Gate::batched_migrations_check, .job = on_failure, .pods = {crashing("p", 0)}},
         {.state = State::retrying,
          .reason = "RetryingBatchedMigrationsCheck",
          .event = "BatchedMigrationsCheckRetrying"}},
        {"batched_check_gate_uses_its_failed_reasons",
         {.gate = Gate::batched_migrations_check, .job = failed_job(on_failure)},
         {.state = State::failed,
          .reason = "BatchedMigrationsCheckFailed",
          .event = "BatchedMigrationsCheckFailed"}},
        {"added_gate_retries_with_its_derived_names",
         {.gate = custom_gate("seed-check"), .job = on_failure, .pods = {crashing("p", 0)}},
         {.state = State::retrying, .reason = "RetryingSeedCheck", .event = "SeedCheckRetrying"}},
        {"added_gate_running_reason",
         {.gate = custom_gate("seed-check"), .job = on_failure},
         {.state = State::running, .reason = "RunningSeedCheck"}},
        {"added_gate_fails_with_its_derived_names",
         {.gate = custom_gate("seed-check"), .job = failed_job(on_failure)},
         {.state = State::failed, .reason = "SeedCheckFailed", .event = "SeedCheckFailed"}},
        {"preemption_reason_of_1_26_is_a_preemption",
         {.job = never,
          .pods = {disrupted(deleting(with_containers(pod("p"), {running("migrations")})),
                             "PreemptionByKubeScheduler",
                             "Kube-scheduler: preempting to accommodate a higher priority pod")}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 1,
          .message_has = "was preempted (PreemptionByKubeScheduler)",
          .failure_reason = "PreemptionByKubeScheduler"}},
        {"oom_killed_restart_keeps_its_exit_code",
         {.job = on_failure, .pods = {with_containers(pod("p"), {[] {
                                                          ContainerStatus c =
                                                              crashloop("migrations", 0, 137);
                                                          c.last_state.terminated->reason =
                                                              "OOMKilled";
                                                          return c;
                                                      }()})}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .message_has = "exited 137 (OOMKilled)",
          .failure_reason = "OOMKilled"}},
        {"sigterm_of_a_preempted_container_is_not_trusted",
         {.job = never,
          .pods = {disrupted(
              with_containers(pod("p", "Failed"), {terminated("migrations", term(143))}),
              "PreemptionByScheduler", "default-scheduler: preempting")}},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .message_has = "exit code 143 comes from the kill",
          .failure_reason = "PreemptionByScheduler"}},
        {"many_failed_pods_with_never_policy_stay_retrying_until_failed",
         {.job = failed_once},
         {.state = State::retrying,
          .reason = "RetryingPreMigrations",
          .failed_pods = 6,
          .attempt = 6,
          .limit = 7,
          .left = 1,
          .event = "MigrationsRetrying"}},
    };
}

void check(const Verdict& v, const Want& w) {
    BOOST_TEST(state_name(v.state) == state_name(w.state));
    BOOST_TEST(v.progressing.reason == w.reason);
    BOOST_TEST(v.progressing.status == (w.state != State::failed));
    BOOST_TEST((v.phase == Phase::failed) == (w.state == State::failed));
    BOOST_TEST((v.phase == Phase::succeeded) == (w.state == State::succeeded));
    if (w.restarts) {
        BOOST_TEST(v.counts.restarts == *w.restarts);
    }
    if (w.failed_pods) {
        BOOST_TEST(v.counts.failed_pods == *w.failed_pods);
    }
    if (w.attempt) {
        BOOST_TEST(v.counts.attempt == *w.attempt);
    }
    if (w.limit) {
        BOOST_TEST(v.counts.limit == *w.limit);
    }
    if (w.left) {
        BOOST_TEST(v.counts.left == *w.left);
    }
    if (w.event) {
        BOOST_TEST((event_of(v) ? event_of(v)->reason : std::string()) == *w.event);
    }
    if (auto e = event_of(v)) {
        BOOST_TEST(e->type == "Warning");
    }
    if (auto e = event_of(v); e && (v.state == State::retrying || v.state == State::failed)) {
        BOOST_TEST(e->message == v.progressing.message);
    }
    if (w.command) {
        BOOST_TEST(v.command.value_or("") == *w.command);
    }
    BOOST_TEST(v.progressing.message.find(w.message_has) != std::string::npos,
               v.progressing.message);
    if (!w.failure_reason.empty()) {
        BOOST_REQUIRE(v.last_failure);
        BOOST_TEST(v.last_failure->reason == w.failure_reason);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_cases_suite)

// Given each named snapshot, then its verdict is the one the rule names; evaluating it
// again with the returned memory changes nothing and records no event.
BOOST_AUTO_TEST_CASE(verdicts_follow_the_gate_rules) {
    std::vector<Case> all = cases();
    BOOST_TEST(all.size() >= 30u);
    for (const Case& c : all) {
        BOOST_TEST_CONTEXT(c.name) {
            Verdict v = evaluate(c.input.gate, c.input.job, c.input.pods, c.input.memory, k_now);
            check(v, c.want);
            Verdict again = evaluate(c.input.gate, c.input.job, c.input.pods, v.memory, k_now);
            BOOST_TEST(!event_of(again));
            BOOST_TEST((again.memory == v.memory));
            BOOST_TEST((again.counts == v.counts));
        }
    }
}

// Given a pass that saw pod "b" evicted, when the next pass sees pod "a" preempted in
// the same second (API timestamps have whole seconds) and listed before "b", then the
// preemption, which no pass saw yet, is the last failure, and stays it on later passes.
BOOST_AUTO_TEST_CASE(a_failure_not_seen_before_wins_a_timestamp_tie) {
    Job never = job("Never", 1);
    Pod b = evicted("b");
    Verdict first = evaluate(Gate::pre_migrations, never, {b}, GateMemory{}, k_now);
    BOOST_REQUIRE(first.last_failure);
    BOOST_TEST(first.last_failure->pod == "b");
    Pod a = deleting(disrupted(with_containers(pod("a"), {running("migrations")}),
                               "PreemptionByScheduler", "default-scheduler: preempting"));
    Job failing = with_condition(never, cond("FailureTarget", "BackoffLimitExceeded",
                                             "Job has reached the specified backoff limit"));
    Verdict second = evaluate(Gate::pre_migrations, failing, {a, b}, first.memory, k_now);
    BOOST_REQUIRE(second.last_failure);
    BOOST_TEST(second.last_failure->reason == "PreemptionByScheduler");
    Verdict again = evaluate(Gate::pre_migrations, failing, {a, b}, second.memory, k_now);
    BOOST_REQUIRE(again.last_failure);
    BOOST_TEST(again.last_failure->reason == "PreemptionByScheduler");
    BOOST_TEST((again.memory == second.memory));
    // Both new in one pass: the last listed wins, and a second look changes nothing.
    Verdict both = evaluate(Gate::pre_migrations, failing, {a, b}, GateMemory{}, k_now);
    Verdict both_again = evaluate(Gate::pre_migrations, failing, {a, b}, both.memory, k_now);
    BOOST_TEST(both.last_failure->pod == "b");
    BOOST_TEST((both_again.memory == both.memory));
}

// Given an OnFailure container whose runs 2 and 3 failed in the same second (a fast
// crash loop; API timestamps have whole seconds), when a pass sees run 2 and the next
// sees run 3, then the second names run 3 (the key of both is the same container), and a
// snapshot that lost run 3's message does not bring run 2 back.
BOOST_AUTO_TEST_CASE(a_later_run_in_the_same_second_is_the_last_failure) {
    Job onfailure = job("OnFailure", 6);
    Pod run2 = with_containers(pod("p"), {crashloop("migrations", 2, 1, "run 2 failed")});
    Verdict first = evaluate(Gate::pre_migrations, onfailure, {run2}, GateMemory{}, k_now);
    BOOST_REQUIRE(first.last_failure);
    BOOST_TEST(first.last_failure->message == "run 2 failed");
    Pod run3 = with_containers(pod("p"), {crashloop("migrations", 3, 1, "run 3 failed")});
    Verdict second = evaluate(Gate::pre_migrations, onfailure, {run3}, first.memory, k_now);
    BOOST_REQUIRE(second.last_failure);
    BOOST_TEST(second.last_failure->message == "run 3 failed");
    BOOST_TEST(second.counts.attempt == first.counts.attempt + 1);
    BOOST_TEST(second.progressing.message.find("run 3 failed") != std::string::npos);
    Pod exit2 = with_containers(pod("p"), {crashloop("migrations", 4, 2, "")});
    Verdict third = evaluate(Gate::pre_migrations, onfailure, {exit2}, second.memory, k_now);
    BOOST_REQUIRE(third.last_failure);
    BOOST_TEST(third.last_failure->exit_code.value_or(0) == 2);
    Pod lost = with_containers(pod("p"), {crashloop("migrations", 4, 2, "")});
    lost.containers[0].last_state.terminated->message.clear();
    Verdict again = evaluate(Gate::pre_migrations, onfailure, {lost}, third.memory, k_now);
    BOOST_TEST((again.last_failure == third.last_failure));
}

// Given 9 pods evicted in the same second (a node drain), then each is a run of its own,
// in list order, the last listed the last failure, counted 1 to 9; a second look
// changes nothing.
BOOST_AUTO_TEST_CASE(a_mass_eviction_in_one_second_is_a_run_per_pod) {
    Job never = job("Never", 20);
    std::vector<Pod> pods;
    for (char name = 'a'; name <= 'i'; ++name) {
        pods.push_back(evicted(std::string(1, name)));
    }
    Verdict first = evaluate(Gate::pre_migrations, never, pods, GateMemory{}, k_now);
    BOOST_REQUIRE(first.last_failure);
    BOOST_TEST(first.last_failure->pod == "i");
    BOOST_REQUIRE(first.runs.size() == 9u);
    for (int i = 0; i < 9; ++i) {
        BOOST_TEST(first.runs[i].failure.pod == std::string(1, static_cast<char>('a' + i)));
        BOOST_TEST(first.runs[i].counts.attempt == i + 1);
        BOOST_TEST(first.runs[i].event.has_value());
    }
    Verdict again = evaluate(Gate::pre_migrations, never, pods, first.memory, k_now);
    BOOST_TEST((again.memory == first.memory));
    BOOST_TEST(again.runs.empty());
}

// Given two pods that failed in the same second, listed in name order but written last
// in the other order (a rerun sees both at once), then the one last written first is the
// older run: counted 1, the other 2, as the passes that saw them one by one counted them.
BOOST_AUTO_TEST_CASE(pods_failed_in_one_second_are_ordered_by_their_last_writes) {
    Job never = job("Never", 3);
    Pod first = evicted("b");
    first.resource_version = 100;
    Pod second = evicted("a");
    second.resource_version = 250;
    Verdict v = evaluate(Gate::pre_migrations, never, {second, first}, GateMemory{}, k_now);
    BOOST_REQUIRE(v.runs.size() == 2u);
    BOOST_TEST(v.runs[0].failure.pod == "b");
    BOOST_TEST(v.runs[0].counts.attempt == 1);
    BOOST_TEST(v.runs[1].failure.pod == "a");
    BOOST_TEST(v.runs[1].counts.attempt == 2);
    BOOST_REQUIRE(v.last_failure);
    BOOST_TEST(v.last_failure->pod == "a");
}

// Given an OnFailure Job with a container that failed twice (the second run waiting to
// restart) and an evicted pod, then the attempts kept in memory (what every report
// shows, docs/attempts.md) are the count nearer its limit, the restarts (2 of 6), not
// every failed run seen; and once the Job completed or was deleted, they stay.
BOOST_AUTO_TEST_CASE(attempts_are_the_count_against_the_limit_and_outlive_the_job) {
    Job j = job("OnFailure", 6);
    Verdict v = evaluate(Gate::pre_migrations, j, {crashing("p", 1), evicted("q")}, {}, k_now);
    BOOST_TEST(v.counts.attempt == 2);
    BOOST_TEST(v.counts.limit == 6);
    BOOST_TEST(v.memory.attempts == 2);
    BOOST_TEST(v.memory.observed_failures > v.memory.attempts);
    Verdict deleted = evaluate(Gate::pre_migrations, std::nullopt, {}, v.memory, k_now);
    BOOST_TEST(deleted.counts.attempt == 2);
    // Completed, its pods no longer listed: this pass counts less (the failed pod it
    // remembers), the attempts stay 2.
    Job done = with_condition(j, cond("Complete"));
    Verdict passed = evaluate(Gate::pre_migrations, done, {}, v.memory, k_now);
    BOOST_TEST((passed.state == State::succeeded));
    BOOST_TEST(passed.counts.attempt < 2);
    BOOST_TEST(passed.memory.attempts == 2);
    BOOST_TEST(passed.progressing.message.find("completed after 2 failed attempt(s)") !=
               std::string::npos);
}

// Given an OnFailure Job first seen complete, its pod Succeeded after one restart (the
// controller no longer counts the restarts of a finished pod), then the gate still
// reports the attempt it spent; given two pods that succeeded after 2 and 1 restarts,
// the attempts are 2, the most one pod had, not their sum (the controller, counting
// running pods, may never have seen 3 at once); while the Job still runs, a finished
// pod's restarts are not in the count. Either way a rise first seen so records its one
// Retrying event.
BOOST_AUTO_TEST_CASE(a_pod_first_seen_succeeded_after_a_restart_counts_that_attempt) {
    Job done = with_condition(job("OnFailure", 2), cond("Complete"));
    auto succeeded = [](const std::string& name, int restarts) {
        return with_containers(pod(name, "Succeeded"),
                               {terminated("migrations", term(0, "Completed"), restarts)});
    };
    Verdict once = evaluate(Gate::pre_migrations, done, {succeeded("p", 1)}, {}, k_now);
    BOOST_TEST((once.state == State::succeeded));
    BOOST_TEST(once.memory.attempts == 1);
    BOOST_TEST(once.counts.attempt == 1);
    BOOST_TEST(once.progressing.message.find("completed after 1 failed attempt(s)") !=
               std::string::npos);
    // The run is recorded as the one Retrying event it owes; a pass after it, none.
    BOOST_TEST_REQUIRE(event_of(once).has_value());
    BOOST_TEST(event_of(once)->reason == "MigrationsRetrying");
    BOOST_TEST(event_of(once)->message.find("attempt 1 of 2 failed") != std::string::npos,
               event_of(once)->message);
    BOOST_TEST(
        !event_of(evaluate(Gate::pre_migrations, done, {succeeded("p", 1)}, once.memory, k_now)));
    Verdict two =
        evaluate(Gate::pre_migrations, done, {succeeded("p", 2), succeeded("q", 1)}, {}, k_now);
    BOOST_TEST(two.memory.attempts == 2);
    // While the Job runs, the count is the controller's: the restarts of a finished
    // pod no longer count against the limit.
    Verdict running = evaluate(Gate::pre_migrations, job("OnFailure", 2),
                               {succeeded("p", 2), crashing("q", 0)}, {}, k_now);
    BOOST_TEST((running.state == State::retrying));
    BOOST_TEST(running.counts.attempt == 1);
    BOOST_TEST(running.counts.left == 1);
    // A pod that failed once and succeeded before any pass saw it, the Job not yet
    // complete (the controller batches its writes): running, and the rise's event.
    Verdict late =
        evaluate(Gate::pre_migrations, job("OnFailure", 2), {succeeded("p", 1)}, {}, k_now);
    BOOST_TEST((late.state == State::running));
    BOOST_TEST_REQUIRE(event_of(late).has_value());
    BOOST_TEST(late.runs.size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
