// The rules of GateRunner's loop that look at one pass: whether a failed verdict should
// wait for a pod deletion still in flight, and whether a pass evaluated from the watch
// caches alone may stand (runner/gating/job_snapshot.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/base/vocab/time.h"
#include "runner/report/run_report.h"

namespace envgate {

// How long a failed verdict waits, at most, for the deletion of a pod no pass listed.
inline constexpr Duration k_settle_bound = std::chrono::seconds(2);

// A pass that ends the gate failed may have come before the pod watch delivered the
// deletion of the pod that took the Job past its limit (the Job controller deletes it
// first, but the two watches race). Worth waiting for when no deletion came with this
// pass and a pod the previous pass saw is neither listed nor known deleted, no pod is
// known at all, or the Job accounts for more pods than are known: a replacement pod
// created, preempted and deleted between two passes was never listed.
bool deletion_may_be_in_flight(const std::set<std::string>& before,
                               const std::set<std::string>& now,
                               const std::set<std::string>& deleted, bool delivered,
                               long long accounted);

// The pods the Job's status accounts for (active + succeeded + failed).
long long accounted_pods(const nlohmann::json& job);

// The memory of a first pass that only names the Job: a restart that finds no memory
// annotations starts from the same.
gates::GateMemory fresh_memory(const gates::GateMemory& m);

// Whether `now` differs from `saved` (what the Job's annotations hold) only in what the
// Job itself keeps showing: that it was seen failing, failed or completed (its
// FailureTarget, Failed and Complete conditions stay as long as the Job), and that the
// *Failed event was recorded (a rerun that records it again names it alike, from the
// same counts, and the API refuses the repeat). Such a memory is not written.
bool only_what_the_job_shows(const gates::GateMemory& now, const gates::GateMemory& saved);

// Whether the pods of `job` show all that the gate's memory would keep while the gate
// is in `state`, so that writing it to the Job can wait: a restartPolicy Never Job of
// the Job controller's keeps every pod that failed (it deletes none of them while it
// runs), each a failed run with its termination, and counts them in status.failed, so
// a rerun finds the same counts and the same last failure; its retry events are named
// by those counts, and the API refuses a repeat. Not once the gate ends (failed or
// succeeded: `envgate status` and a rerun read the memory, the pods may be deleted with
// ttlSecondsAfterFinished), and not for OnFailure, whose restarts only the pod's
// restartCount shows, and which the controller deletes at the limit. The caller writes
// it anyway when a pod it counted is gone.
bool memory_kept_by_pods(const gates::Job& job, gates::State state);

// What the gate's last completed pass concluded, and the newest revision a pass has
// shown the store at (a pair from the watch caches is not taken from before it).
struct LastPass {
    gates::Counts counts;
    gates::State state = gates::State::running;
    std::uint64_t revision = 0;
};

// How long a pass that would act waits, at most, for a Job write the Job controller owes
// (job_write_expected) before it reads the API instead. The controller batches a Job's
// pod events for 1 s (SyncJobBatchPeriod, Kubernetes v1.37) before it writes the Job.
inline constexpr Duration k_expected_write_bound = std::chrono::milliseconds(1500);

// Whether the Job controller is about to write the Job `job` (as cached, up to the
// revision `job_progress`) for a change of `pods` (as cached) after that revision: a
// pod ended (Succeeded or Failed; the controller records it in
// status.uncountedTerminatedPods before it removes the pod's tracking finalizer, then
// counts it), or the pods ready now (active, condition Ready True) are not those the
// Job's status.ready counts (an OnFailure container that crashed or restarted). The
// Job's watch delivers that write, which makes the two caches a pair at the pods'
// revision without a read. Only for a Job of the Job controller's (spec.managedBy unset
// or kubernetes.io/job-controller).
bool job_write_expected(const nlohmann::json& job, const std::vector<nlohmann::json>& pods,
                        std::uint64_t job_progress);

// Whether one of `pods` (as cached) failed on its own after the revision `job_progress`
// up to which the Job is cached: its phase is Failed and it is not being deleted. Its status is
// the evidence of a failed run (the Job controller counts such a pod, isPodFailed), so
// a pass that would act reads the Job beside the cached pods at once rather than wait
// for the Job write that records it, which the controller's 1 s sync batching
// (SyncJobBatchPeriod) delays: a Never pod's failure is reported when its pod shows it.
// A pod being deleted still waits for the write (its count is the controller's).
bool pod_failed_after(const std::vector<nlohmann::json>& pods, std::uint64_t job_progress);

// Whether a pass evaluated from the watch caches alone may stand: only when it changes
// nothing the gate keeps or acts on (memory, counts, events, the state it reports, the
// end). Its words then differ from the last pass's only by what one collection says on
// its own (a pod's waiting reason, a Job condition), which needs no snapshot of the two
// together. The first pass may stand when it runs and counts nothing failed: that state
// was true before any failure (at worst it is the cache lagging, as any watch does).
bool cached_pass_stands(const gates::Verdict& v, bool job, const gates::GateMemory& memory,
                        const std::optional<LastPass>& last);

// Whether the verdict `next` says what `last` said: the same state, reason and words,
// the command each ends with aside (the pass after a pod's deletion still shows that
// pod and suggests its log, the next one no longer does and suggests describe). A
// verdict that says the same gets no new line in the job log.
bool says_the_same(const VerdictChange& last, const VerdictChange& next);

}  // namespace envgate
