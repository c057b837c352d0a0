// The rules of GateRunner's loop that look at one pass: whether a failed verdict should
// wait for a pod deletion still in flight, and whether a pass evaluated from the watch
// caches alone may stand (runner/gate/job_snapshot.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "gates/snapshot.h"
#include "gates/time.h"
#include "gates/verdict.h"

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

// What the gate's last completed pass concluded.
struct LastPass {
    gates::Counts counts;
    gates::State state = gates::State::running;
};

// Whether a pass evaluated from the watch caches alone may stand: only when it changes
// nothing the gate keeps or acts on (memory, counts, events, the state it reports, the
// end). Its words then differ from the last pass's only by what one collection says on
// its own (a pod's waiting reason, a Job condition), which needs no snapshot of the two
// together. The first pass may stand when it runs and counts nothing failed: that state
// was true before any failure (at worst it is the cache lagging, as any watch does).
bool cached_pass_stands(const gates::Verdict& v, bool job, const gates::GateMemory& memory,
                        const std::optional<LastPass>& last);

// Whether an OnFailure Job's restarts have reached its backoffLimit while the Job
// controller has not yet recorded the failure (no FailureTarget, Failed or Complete
// condition): counted as the controller counts them (pastBackoffLimitOnFailure, the
// restarts of running and pending pods). In that state the controller deletes the pod
// and then writes FailureTarget; a write of the gate's to the Job in between makes
// that status write conflict, and on its next sync the stopped pod's restarts no
// longer count (Kubernetes v1.37), so it starts a replacement pod and the migration
// runs again past its limit. The gate saves its memory on a later pass instead.
bool restart_limit_unrecorded(const gates::Job& job, const std::vector<gates::Pod>& pods);

}  // namespace envgate
