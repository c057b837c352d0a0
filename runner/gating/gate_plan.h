// The gate loop's decisions (GateRunner::run), as pure functions of plain values: given
// the loop's state and what the last step brought, what to do next and why — act on a
// pass, wait until a time for a reason, look again at once, or end the gate. The rules
// are numbered as in gates/README.md ("The gate loop"); the loop only carries them out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/base/vocab/time.h"
#include "runner/gating/gate_pass.h"

namespace envgate {

// What survives one iteration of the gate loop: everything a pass leaves for the next.
struct LoopState {
    gates::GateMemory memory;              // what the gate knows (the last evaluated pass's memory)
    gates::GateMemory saved;               // what the Job's annotations hold of it
    std::optional<LastPass> last;          // what the last completed pass concluded
    std::set<std::string> seen_pods;       // the pods of the last completed pass
    std::set<std::string> deleted;         // every pod whose deletion the pod watch delivered
    std::vector<nlohmann::json> departed;  // deleted pods no completed pass has seen yet
    // Until when a pass waits for a Job write the Job controller owes (rule 3); set by
    // the first pass that waits, cleared by the next pass taken.
    std::optional<TimePoint> expect_until;
    // A read showed the Job written at this revision, after its watch's progress (0:
    // none): the passes wait for the watch to deliver that write, within expect_until,
    // rather than read the Job again when another change wakes them first.
    std::uint64_t job_written_at = 0;
    // Until when an ending verdict waits for a pod deletion that may be in flight (rule
    // 6); set by the first pass that waits, never cleared once the verdict is ending: one
    // bound per gate. A verdict that tells of a pod no pass listed waits alike; its bound
    // ends with the first pass acted on that is not ending.
    std::optional<TimePoint> settle_until;
    // A wait of the last pass took a change the next pass needs: it looks at once.
    bool skip_wait = false;
};

// What a pass brought, as the planner needs it.
struct PassFacts {
    bool error = false;     // the pass could not be taken: the API refused a read
    bool evaluated = true;  // false: no pair of Job and pods settled; nothing evaluated
    std::optional<TimePoint> owed_write_until;  // not evaluated: a Job write to wait for
    gates::State state = gates::State::running;
    bool names_failure = false;      // the verdict names its last failure
    std::set<std::string> pod_uids;  // the pods the pass evaluated (deleted ones included)
    long long accounted = 0;         // the pods the Job's status accounts for
    bool behind = false;             // the caches hold changes after the pass's pair
    // The verdict tells of a failed pod the Job counts that no pass listed (a run keyed
    // "status.failed/N"): a pod the last pass saw may be that one, its deletion in flight.
    bool unlisted_run = false;
};

// The gate's fixed bounds, and the moment of the decision.
struct LoopClock {
    TimePoint now;
    TimePoint deadline;  // the gate's timeout
    Duration resync{};   // look again after this even without a change
    int signal = 0;      // a pending signal (0: none)
};

enum class Next {
    act,         // report the pass, record its events, save its memory
    wait,        // until `until` or the next change, then look again
    look_again,  // take the next pass at once
    finish,      // end the gate with `end`
};

enum class Why {
    pair_unsettled,      // rule 4: no pair of Job and pods to evaluate yet
    deletion_in_flight,  // rule 6: a verdict waits for a pod deletion in flight
    pass_ready,          // rule 7: a pass to act on
    caches_ahead,        // rule 11: the caches hold changes after the pass's pair
    change_taken,        // rule 11: a wait of the last pass took the next change
    quiet,               // rule 11: nothing to do until a change, a resync or the heartbeat
    succeeded,           // rule 9
    failed,              // rule 9
    api_error,           // rule 5
    cancelled,           // rule 10: a signal
    timed_out,           // rule 10: the gate's timeout
};

struct Step {
    Next next = Next::act;
    Why why = Why::pass_ready;
    TimePoint until{};  // Next::wait: the latest the wait lasts
    // The LoopState's bounds after this step (keep_step() stores them).
    std::optional<TimePoint> expect_until;
    std::optional<TimePoint> settle_until;
    bool skip_wait = false;
};

// Stores in `state` what `step` leaves of the loop's bounds.
void keep_step(const Step& step, LoopState& state);

// Words for `why`, for a reader of a trace ("waits for a pod deletion in flight").
std::string why_text(Why why);

// Whether a verdict in `state` ends the gate failed, or is failing with no failure named
// (the pod that failed the Job may be gone already): such a pass may wait (rule 6).
bool ending(gates::State state, bool names_failure);

// Whether a pass's verdict waits for a pod deletion that may be in flight (rule 6): it
// ends the gate (`ending`), or it tells of a failed pod the Job counts that no pass
// listed, which the pod the last pass saw may be.
bool may_wait_for_deletion(const PassFacts& pass);

// After a pass was taken: act on it, wait, or end the gate (rules 4-7, 10).
Step plan_pass(const LoopState& state, const PassFacts& pass, const LoopClock& at);

// After a pass was acted on without an error: end the gate when its verdict ended it
// (rule 9), else nullopt (the heartbeat comes next, then plan_wait).
std::optional<Step> plan_end(gates::State state);

// After a pass that did not end the gate: end it on a signal or its timeout, else look
// again at once or wait until the next change, a resync or `heartbeat_due` (rules 10, 11).
Step plan_wait(const LoopState& state, bool behind, const LoopClock& at, TimePoint heartbeat_due);

// After a pass was taken to act on, with the pods `pod_uids` (deleted ones included):
// whether a pod the last pass counted is gone (or its deletion came with this pass).
// The state then holds them as the last pass's, and no deletion not yet seen.
bool took_pass(LoopState& state, const std::set<std::string>& pod_uids);

// Rule 8: whether a pass's memory `v.memory` goes to the Job's annotations now (of a
// pass that shows the Job, decoded as `job`, with `pods`): when it is news to `saved`
// (what they hold) beyond what the Job itself keeps showing, and not held: not while
// the Job controller has still to record that the restart limit was reached
// (gates/restarts.h), nor while the pods still show all of it (memory_kept_by_pods;
// `pods_gone`: a pod the last pass counted is gone, so they no longer do).
bool memory_to_save(const gates::GateMemory& saved, const gates::Verdict& v,
                    const std::optional<gates::Job>& job, const std::vector<gates::Pod>& pods,
                    bool pods_gone);

// Rule 3: a pass that would act on a pair the caches cannot prove waits for the Job write
// the Job controller owes, until `expect_until` (or, on the first such pass, `now` plus
// k_expected_write_bound), then reads the API. `expect_until` is the state's bound after
// it; `wait` whether to wait (else read now).
struct OwedWrite {
    TimePoint expect_until;
    bool wait = false;
};
OwedWrite plan_owed_write(std::optional<TimePoint> expect_until, TimePoint now);

}  // namespace envgate
