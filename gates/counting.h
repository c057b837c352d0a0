// How many attempts a Job has spent, counted the way the Job controller counts them
// (spec/kubernetes-jobs.md §1.2): container restarts against backoffLimit, failed pods
// against backoffLimit + 1. The one place that counts; everything else reads Attempts.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

inline constexpr const char* k_tracking_finalizer = "batch.kubernetes.io/job-tracking";
inline constexpr int k_default_backoff_limit = 6;
inline constexpr const char* k_job_controller = "kubernetes.io/job-controller";

// spec.backoffLimit, or what the API defaults it to (batch/v1 defaults.go): 6, or
// MaxInt32 when backoffLimitPerIndex is set (the per-index limit is then the budget).
int backoff_limit(const Job& job);

// True when spec.managedBy names a controller other than the built-in one (MultiKueue
// and the like): the built-in controller leaves such a Job alone, so its local pods (if
// any) are not what is counted; its status, which that controller writes, is.
bool managed_elsewhere(const Job& job);

// When a deleted pod went away: deletionTimestamp minus deletionGracePeriodSeconds
// (the timestamp lies ahead by the grace period), as the controller's backoff does.
std::optional<TimePoint> deleted_at(const Pod& pod);

// True when `pod` was deleted by the Job's suspension: it is being deleted without a
// disruption of its own while the Job is suspended, or before the suspension ended
// (Suspended False, resumed at or after the pod's deletion). The controller removes the
// tracking finalizer of those pods before it deletes them: they count nothing.
bool removed_by_suspension(const Job& job, const Pod& pod);

// The message a FailJob rule of spec.podFailurePolicy gives the first failed pod it
// matches (the one the controller writes into FailureTarget), or nullopt.
std::optional<std::string> fail_job_message(const Job& job, const std::vector<const Pod*>& pods);

// a + b for non-negative counts, saturating at INT_MAX (API input can hold any int32).
inline int sat_add(int a, int b) {
    long long sum = static_cast<long long>(a) + b;
    return sum > 2147483647LL ? 2147483647 : static_cast<int>(sum);
}

// True when the Job's spec.selector.matchLabels select `pod` (or, for a Job without
// matchLabels, when the pod's controller ownerReference is the Job). Never by name alone.
bool selects(const Job& job, const Pod& pod);
std::vector<const Pod*> select_pods(const Job& job, const std::vector<Pod>& pods);

// True when a podFailurePolicy rule with action Ignore is the first rule to match `pod`.
bool ignored_by_policy(const Job& job, const Pod& pod);

// Why a podFailurePolicy rule ignores the failed `pod` (the first rule to match it has
// action Ignore): "podFailurePolicy rule 0 (Ignore) matches its condition
// DisruptionTarget" or "... matches exit code 3 of container migrations"; else nullopt.
std::optional<std::string> ignore_reason(const Job& job, const Pod& pod);

// The Job controller's isPodFailed: phase Failed, or (without podFailurePolicy or
// podReplacementPolicy Failed) a deletionTimestamp on a pod that has not succeeded.
bool is_pod_failed(const Job& job, const Pod& pod);

// Failed runs of one container: restartCount, plus one while its newest run failed
// and has not restarted yet (waiting after a failed run, or terminated non-zero).
int failed_runs(const ContainerStatus& c);
bool newest_run_failed(const ContainerStatus& c);

// True when `c`'s newest run was killed and not restarted: terminated with 137 or 143
// (SIGKILL, SIGTERM; not OOMKilled). That is how a pod's end (its eviction, deletion, a
// node shutdown) ends its runs: the kubelet kills the containers first and publishes
// the pod's terminal phase only once they stopped (its status manager holds the phase
// back while containers may run), so a pass can see the kill before the pod's failure.
// Such a run is part of that failure, not a failed run of its own; a kill the kubelet
// restarts is one, counted by the restart (restartCount, as the Job controller does).
bool killed_not_restarted(const ContainerStatus& c);

// True when `c`'s newest run ended with its pod, as part of the pod's failure rather than
// a failed run of its own: killed and not restarted, or any run of a pod Failed as a
// whole (evicted, node shutdown; phase Failed, not deleted).
bool ended_with_pod(const Pod& pod, const ContainerStatus& c);

// True when the kubelet has failed `pod` as a whole (evicted, node shutdown) and nobody
// is deleting it: its phase is Failed, or still Running or Pending with its Ready
// condition False for reason PodFailed. From the moment the kubelet fails a pod, every
// status it writes says PodFailed (GenerateContainersReadyCondition), while its status
// manager holds the phase Failed back until no container can run (mergePodStatus).
bool failed_as_a_whole(const Pod& pod);

// True when `c` waits after a run the kubelet could no longer locate, in a pod that failed
// as a whole: lastState 137 ContainerStatusUnknown, state waiting. An eviction removes the
// pod's exited containers at once; a status the kubelet reads back after that records the
// run it showed running as such, adds it to restartCount (nothing restarted) and shows the
// container waiting until the pod is terminated (then terminated, ContainerStatusUnknown,
// too). That run is the newest, counted in restartCount, and ended with the pod.
bool waits_after_unlocated_run(const Pod& pod, const ContainerStatus& c);

// True when `c`'s run before its current one (lastState) was cut by its pod's failure as
// a whole: the pod failed as a whole, that run was killed (137 or 143, not OOMKilled),
// and it ended no earlier than the pod's failure began (its DisruptionTarget, else its
// turning not Ready), when the pod says when. Under load the kubelet may restart the
// container its eviction killed before it publishes the phase Failed: that run is part
// of the pod's failure, which counts it, not a failed run of its own.
bool cut_by_pod_failure(const Pod& pod, const ContainerStatus& c);

// True when `c`'s newest run was ended by the deletion of its pod: killed and not
// restarted on a pod with a deletionTimestamp. The kubelet keeps such a pod Running
// until all its containers stopped; that run is the stop, not a failed run (the Job
// controller no longer counts a terminating pod's restarts).
bool stopped_by_deletion(const Pod& pod, const ContainerStatus& c);

// The key under which GateMemory::failed_runs remembers a container.
std::string run_key(const Pod& pod, const ContainerStatus& c);

// Indexed Jobs with backoffLimitPerIndex: how many indexes have failed, those in
// status.failedIndexes ("1,3-5") and those whose failed pod (not yet in it) takes them
// to backoffLimitPerIndex + 1 failures. The controller fails the Job
// (MaxFailedIndexesExceeded) once this passes maxFailedIndexes.
int failed_index_count(const Job& job, const std::vector<const Pod*>& pods);

// The same failed indexes in the API's form of status.failedIndexes (increasing, three
// or more consecutive ones as "first-last": "0,1", "3-5"), so that a line says them
// alike before and after the controller writes them; empty when none.
std::string failed_indexes_text(const Job& job, const std::vector<const Pod*>& pods);

// backoffLimitPerIndex: the failures of index `index` the pods show (a pod carries those
// of its index before it, a failed one adds itself), 0 when none.
int index_failures(const Job& job, const std::vector<const Pod*>& pods, int index);

struct Attempts {
    bool restarts_apply = false;  // restartPolicy OnFailure
    int restarts = 0;
    // Restarts of the pods being deleted for no disruption or suspension of their own
    // (the controller stopping them as it fails the Job): they counted while the pod
    // ran, when the controller decided, also once the pod is Failed.
    int deleted_restarts = 0;
    // The most restarts of one pod that succeeded: the controller counted them while
    // it ran and stops once it succeeded, so a pass that first sees it finished does
    // not find them in `restarts` (a Job's pods may have run at once: not their sum).
    int finished_restarts = 0;
    int restart_limit = 0;  // max(backoffLimit, 1)
    int failed_pods = 0;
    int failed_pod_limit = 0;  // backoffLimit + 1
    RunCounts failed_runs;     // memory's map merged with this snapshot's
    // The containers ("uid/container") whose failed runs rose above what was remembered,
    // with the count remembered before.
    std::vector<std::pair<std::string, int>> rose;
    // backoffLimitPerIndex: the index nearest its limit, its failures and its limit
    // (backoffLimitPerIndex + 1 attempts per index).
    std::optional<int> index;
    int index_failures = 0;
    int index_limit = 0;
};

// Counts the attempts of `job` from its selected `pods`. Per container the failed runs
// are at least what `remembered` (GateMemory::failed_runs) holds, so a stale snapshot
// never lowers a count; the merged map comes back in Attempts::failed_runs.
Attempts count_attempts(const Job& job, const std::vector<const Pod*>& pods, RunCounts remembered);

}  // namespace envgate::gates
