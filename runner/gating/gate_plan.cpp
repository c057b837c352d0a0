#include "runner/gating/gate_plan.h"

#include <algorithm>

#include "gates/restarts.h"
#include "runner/base/vocab/enum_names.h"

namespace envgate {
namespace {

constexpr EnumName<Why> k_why_texts[] = {
    {Why::pair_unsettled, "no pair of the Job and its pods settled yet"},
    {Why::deletion_in_flight, "a verdict waits for a pod deletion in flight"},
    {Why::pass_ready, "a pass to act on"},
    {Why::caches_ahead, "the caches hold changes after the pass"},
    {Why::change_taken, "a wait took the next change"},
    {Why::quiet, "nothing to do until a change, a resync or the heartbeat"},
    {Why::succeeded, "the gate succeeded"},
    {Why::failed, "the gate failed"},
    {Why::api_error, "the API refused a read or a write"},
    {Why::cancelled, "a signal is pending"},
    {Why::timed_out, "the gate's timeout passed"},
};

}  // namespace

std::string why_text(Why why) {
    return name_of(k_why_texts, why, "");
}

bool ending(gates::State state, bool names_failure) {
    return state == gates::State::failed || (state == gates::State::failing && !names_failure);
}

bool may_wait_for_deletion(const PassFacts& pass) {
    return ending(pass.state, pass.names_failure) || pass.unlisted_run;
}

void keep_step(const Step& step, LoopState& state) {
    state.expect_until = step.expect_until;
    state.settle_until = step.settle_until;
    state.skip_wait = step.skip_wait;
}

namespace {

// A step that leaves the state's bounds as they are.
Step step(Next next, Why why, TimePoint until, const LoopState& state) {
    return {next, why, until, state.expect_until, state.settle_until, state.skip_wait};
}

// Rule 10: a pending signal, then the timeout.
std::optional<Step> interrupted(const LoopState& state, const LoopClock& at) {
    if (at.signal != 0) {
        return step(Next::finish, Why::cancelled, {}, state);
    }
    if (at.now >= at.deadline) {
        return step(Next::finish, Why::timed_out, {}, state);
    }
    return std::nullopt;
}

}  // namespace

Step plan_pass(const LoopState& state, const PassFacts& pass, const LoopClock& at) {
    if (!pass.error && !pass.evaluated) {
        // Rule 4: nothing was evaluated; the next change (or resync, or the Job write
        // owed) tries again, and signals and the timeout still apply.
        if (auto end = interrupted(state, at)) {
            return *end;
        }
        const TimePoint until = std::min(
            {at.deadline, at.now + at.resync, pass.owed_write_until.value_or(TimePoint::max())});
        return step(Next::wait, Why::pair_unsettled, until, state);
    }
    // A pass was taken (or failed): the owed write it waited for is no longer awaited.
    Step next = step(Next::act, Why::pass_ready, {}, state);
    next.expect_until.reset();
    if (!pass.error && may_wait_for_deletion(pass) &&
        deletion_may_be_in_flight(state.seen_pods, pass.pod_uids, state.deleted,
                                  !state.departed.empty(), pass.accounted)) {
        // Rule 6: let the pod watch catch up, so that the failure names that pod.
        next.settle_until = state.settle_until.value_or(at.now + k_settle_bound);
        if (at.now < *next.settle_until && at.signal == 0) {
            next.next = Next::wait;
            next.why = Why::deletion_in_flight;
            next.until = *next.settle_until;
        }
        return next;
    }
    if (pass.error) {
        next.next = Next::finish;
        next.why = Why::api_error;  // rule 5
    } else if (pass.state != gates::State::failing && pass.state != gates::State::failed) {
        next.settle_until.reset();  // a pod no pass listed waited: the next one waits anew
    }
    return next;  // rule 7
}

std::optional<Step> plan_end(gates::State state) {
    Step end;
    end.next = Next::finish;
    if (state == gates::State::succeeded) {
        end.why = Why::succeeded;
        return end;
    }
    if (state == gates::State::failed) {
        end.why = Why::failed;
        return end;
    }
    return std::nullopt;
}

Step plan_wait(const LoopState& state, bool behind, const LoopClock& at, TimePoint heartbeat_due) {
    if (auto end = interrupted(state, at)) {
        return *end;
    }
    if (behind) {
        // Rule 11: the next pass takes the caches' newer changes; a change a wait took
        // is still owed to the pass after it.
        return step(Next::look_again, Why::caches_ahead, {}, state);
    }
    Step next = step(Next::wait, Why::quiet, {}, state);
    next.skip_wait = false;
    if (state.skip_wait) {
        next.next = Next::look_again;
        next.why = Why::change_taken;
        return next;
    }
    next.until = std::min({at.deadline, at.now + at.resync, heartbeat_due});
    return next;
}

bool took_pass(LoopState& state, const std::set<std::string>& pod_uids) {
    const bool gone = !state.departed.empty() ||
                      std::any_of(state.seen_pods.begin(), state.seen_pods.end(),
                                  [&](const auto& uid) { return pod_uids.count(uid) == 0; });
    state.departed.clear();
    state.seen_pods = pod_uids;
    return gone;
}

bool memory_to_save(const gates::GateMemory& saved, const gates::Verdict& v,
                    const std::optional<gates::Job>& job, const std::vector<gates::Pod>& pods,
                    bool pods_gone) {
    const bool news =
        !only_what_the_job_shows(v.memory, saved) && v.memory != fresh_memory(v.memory);
    const bool hold = job && (gates::restart_limit_unrecorded(*job, pods) ||
                              (!pods_gone && memory_kept_by_pods(*job, v.state)));
    return news && !hold;
}

OwedWrite plan_owed_write(std::optional<TimePoint> expect_until, TimePoint now) {
    const TimePoint until = expect_until.value_or(now + k_expected_write_bound);
    return {until, now < until};
}

}  // namespace envgate
