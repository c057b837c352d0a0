// Given the gate loop's state and what a pass brought, as plain values, then the
// planner says what the loop does next and why: one case per rule of gates/README.md
// "The gate loop" (the rule's number in the case's name).
#include <boost/test/unit_test.hpp>

#include "runner/gating/gate_plan.h"

using namespace envgate;
using namespace std::chrono_literals;

namespace {

const TimePoint k_t0 = TimePoint{} + 1000h;

LoopClock at(TimePoint now, int signal = 0) {
    return {now, k_t0 + 1h, 30s, signal};
}

PassFacts evaluated(gates::State state, std::set<std::string> pods = {"pod-a"}) {
    PassFacts facts;
    facts.state = state;
    facts.pod_uids = std::move(pods);
    facts.accounted = static_cast<long long>(facts.pod_uids.size());
    return facts;
}

PassFacts unsettled(std::optional<TimePoint> owed = std::nullopt) {
    PassFacts facts;
    facts.evaluated = false;
    facts.owed_write_until = owed;
    return facts;
}

PassFacts refused() {
    PassFacts facts;
    facts.error = true;
    return facts;
}

// A failed verdict whose pod the last pass saw, now neither listed nor known deleted.
struct Vanished {
    LoopState state;
    PassFacts pass = evaluated(gates::State::failed, {});
    Vanished() {
        state.seen_pods = {"pod-a"};
        pass.accounted = 1;
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(gate_plan_suite)

// Rule 3: the first pass that waits for a Job write the controller owes sets the bound
// (1.5 s); later passes keep it; once it passed, the pass reads instead.
BOOST_AUTO_TEST_CASE(rule3_an_owed_job_write_is_awaited_up_to_its_bound_then_read) {
    OwedWrite first = plan_owed_write(std::nullopt, k_t0);
    BOOST_TEST(first.wait);
    BOOST_TEST((first.expect_until == k_t0 + k_expected_write_bound));
    OwedWrite later = plan_owed_write(first.expect_until, k_t0 + 1s);
    BOOST_TEST(later.wait);
    BOOST_TEST((later.expect_until == first.expect_until));
    OwedWrite past = plan_owed_write(first.expect_until, k_t0 + 1500ms);
    BOOST_TEST(!past.wait);
}

// Rule 4: no pair settled, nothing evaluated: wait for the next change, at most until the
// resync, the owed write's bound or the timeout, whichever is first; the bounds stay.
BOOST_AUTO_TEST_CASE(rule4_an_unsettled_pass_waits_for_the_next_change) {
    LoopState state;
    state.expect_until = k_t0 + 1s;
    Step step = plan_pass(state, unsettled(k_t0 + 1s), at(k_t0));
    BOOST_TEST((step.next == Next::wait));
    BOOST_TEST((step.why == Why::pair_unsettled));
    BOOST_TEST((step.until == k_t0 + 1s));
    BOOST_TEST((step.expect_until == k_t0 + 1s));
    step = plan_pass(state, unsettled(), at(k_t0));
    BOOST_TEST((step.until == k_t0 + 30s));  // the resync
    step = plan_pass(state, unsettled(), at(k_t0 + 1h - 5s));
    BOOST_TEST((step.until == k_t0 + 1h));  // the timeout
}

// Rule 5: an API error ends the gate (exit 4 by the actor); the owed write is forgotten.
BOOST_AUTO_TEST_CASE(rule5_a_refused_read_ends_the_gate) {
    LoopState state;
    state.expect_until = k_t0 + 1s;
    Step step = plan_pass(state, refused(), at(k_t0));
    BOOST_TEST((step.next == Next::finish));
    BOOST_TEST((step.why == Why::api_error));
    BOOST_TEST(!step.expect_until);
}

// Rule 6: an ending verdict whose pod's deletion may be in flight waits for it, at most
// k_settle_bound from the first such pass; then (or on a signal) it is acted on.
BOOST_AUTO_TEST_CASE(rule6_an_ending_verdict_waits_once_for_a_deletion_in_flight) {
    Vanished v;
    Step step = plan_pass(v.state, v.pass, at(k_t0));
    BOOST_TEST((step.next == Next::wait));
    BOOST_TEST((step.why == Why::deletion_in_flight));
    BOOST_TEST((step.until == k_t0 + k_settle_bound));
    keep_step(step, v.state);
    step = plan_pass(v.state, v.pass, at(k_t0 + 1s));
    BOOST_TEST((step.until == k_t0 + k_settle_bound));  // the first pass's bound
    step = plan_pass(v.state, v.pass, at(k_t0 + k_settle_bound));
    BOOST_TEST((step.next == Next::act));
    BOOST_TEST((step.settle_until == k_t0 + k_settle_bound));
    step = plan_pass(v.state, v.pass, at(k_t0 + 1s, 15));  // a signal: no more waiting
    BOOST_TEST((step.next == Next::act));
}

// Rule 6, the other side: what cannot be waiting for a deletion is acted on at once.
BOOST_AUTO_TEST_CASE(rule6_only_an_ending_verdict_with_a_pod_unaccounted_for_waits) {
    Vanished delivered;  // the deletion came with this pass
    delivered.state.departed.push_back(nlohmann::json::object());
    BOOST_TEST((plan_pass(delivered.state, delivered.pass, at(k_t0)).next == Next::act));
    Vanished retrying;  // not an ending verdict
    retrying.pass.state = gates::State::retrying;
    BOOST_TEST((plan_pass(retrying.state, retrying.pass, at(k_t0)).next == Next::act));
    Vanished named;  // failing with its failure named: the pod told it
    named.pass.state = gates::State::failing;
    named.pass.names_failure = true;
    BOOST_TEST((plan_pass(named.state, named.pass, at(k_t0)).next == Next::act));
    named.pass.names_failure = false;
    BOOST_TEST((plan_pass(named.state, named.pass, at(k_t0)).next == Next::wait));
    BOOST_TEST(ending(gates::State::failed, true));
    BOOST_TEST(!ending(gates::State::succeeded, false));
}

// Rule 6, for a retry: a verdict that tells of a failed pod the Job counts that no pass
// listed, while a pod the last pass saw is neither listed nor known deleted, waits for
// that deletion (it may be that pod, which its line then names), k_settle_bound at most;
// the bound is its own: once acted on, the next such verdict waits anew.
BOOST_AUTO_TEST_CASE(rule6_a_pod_no_pass_listed_waits_for_a_deletion_in_flight) {
    Vanished v;
    v.pass.state = gates::State::retrying;
    v.pass.unlisted_run = true;
    Step step = plan_pass(v.state, v.pass, at(k_t0));
    BOOST_TEST((step.next == Next::wait));
    BOOST_TEST((step.why == Why::deletion_in_flight));
    BOOST_TEST((step.until == k_t0 + k_settle_bound));
    keep_step(step, v.state);
    v.state.departed.push_back(nlohmann::json::object());  // the deletion came
    step = plan_pass(v.state, v.pass, at(k_t0 + 100ms));
    BOOST_TEST((step.next == Next::act));
    BOOST_TEST(!step.settle_until);
    keep_step(step, v.state);
    v.state.departed.clear();
    step = plan_pass(v.state, v.pass, at(k_t0 + 1min));
    BOOST_TEST((step.next == Next::wait));
    BOOST_TEST((step.until == k_t0 + 1min + k_settle_bound));
    Vanished listed;  // every pod the last pass saw is there: nothing to wait for
    listed.pass = evaluated(gates::State::retrying, {"pod-a"});
    listed.pass.unlisted_run = true;
    BOOST_TEST((plan_pass(listed.state, listed.pass, at(k_t0)).next == Next::act));
}

// Rule 7: a pass that was evaluated is acted on; the owed write's bound is cleared.
BOOST_AUTO_TEST_CASE(rule7_an_evaluated_pass_is_acted_on) {
    LoopState state;
    state.expect_until = k_t0 + 1s;
    state.seen_pods = {"pod-a"};
    Step step = plan_pass(state, evaluated(gates::State::retrying), at(k_t0, 15));
    BOOST_TEST((step.next == Next::act));  // a pending signal waits until after it
    BOOST_TEST((step.why == Why::pass_ready));
    BOOST_TEST(!step.expect_until);
}

// Rule 8: the memory goes to the Job only when it is news, and not while held.
BOOST_AUTO_TEST_CASE(rule8_the_memory_is_saved_when_news_and_not_held) {
    gates::Verdict v;
    v.state = gates::State::retrying;
    v.memory.job_uid = "uid-1";
    v.memory.attempts = 1;
    gates::GateMemory saved;
    saved.job_uid = "uid-1";
    gates::Job never;
    never.restart_policy = "Never";
    gates::Job on_failure;
    on_failure.restart_policy = "OnFailure";
    on_failure.backoff_limit = 1;
    gates::Pod crashed;
    crashed.phase = "Running";
    crashed.containers.push_back({"migrations", 1, {}, {}});
    BOOST_TEST(memory_to_save(saved, v, on_failure, {}, false));
    BOOST_TEST(!memory_to_save(v.memory, v, on_failure, {}, false));      // not news
    BOOST_TEST(!memory_to_save(saved, v, on_failure, {crashed}, false));  // limit unrecorded
    BOOST_TEST(!memory_to_save(saved, v, never, {}, false));              // the pods keep it
    BOOST_TEST(memory_to_save(saved, v, never, {}, true));                // ... until one is gone
}

// Rule 8: the pods a pass took become the last pass's; one gone since is told once.
BOOST_AUTO_TEST_CASE(rule8_a_pod_the_last_pass_counted_is_gone_once) {
    LoopState state;
    state.seen_pods = {"pod-a", "pod-b"};
    BOOST_TEST(took_pass(state, {"pod-a"}));
    BOOST_TEST(!took_pass(state, {"pod-a", "pod-c"}));
    state.departed.push_back(nlohmann::json::object());
    BOOST_TEST(took_pass(state, {"pod-a", "pod-c"}));
    BOOST_TEST(state.departed.empty());
    BOOST_TEST((state.seen_pods == std::set<std::string>{"pod-a", "pod-c"}));
}

// Rule 9: a verdict that succeeded or failed ends the gate; any other goes on.
BOOST_AUTO_TEST_CASE(rule9_success_and_failure_end_the_gate) {
    BOOST_TEST((plan_end(gates::State::succeeded)->why == Why::succeeded));
    BOOST_TEST((plan_end(gates::State::failed)->why == Why::failed));
    for (auto state : {gates::State::running, gates::State::retrying, gates::State::failing,
                       gates::State::suspended}) {
        BOOST_TEST(!plan_end(state));
    }
}

// Rule 10: a pending signal, then the timeout, end the gate after a pass and while no
// pair settles; the signal first.
BOOST_AUTO_TEST_CASE(rule10_a_signal_or_the_timeout_ends_the_gate) {
    LoopState state;
    BOOST_TEST((plan_wait(state, false, at(k_t0, 15), k_t0 + 30s).why == Why::cancelled));
    BOOST_TEST((plan_wait(state, true, at(k_t0 + 1h), k_t0 + 30s).why == Why::timed_out));
    BOOST_TEST((plan_wait(state, false, at(k_t0 + 2h, 2), k_t0).why == Why::cancelled));
    BOOST_TEST((plan_pass(state, unsettled(), at(k_t0, 15)).why == Why::cancelled));
    BOOST_TEST((plan_pass(state, unsettled(), at(k_t0 + 1h)).why == Why::timed_out));
    BOOST_TEST((plan_wait(state, false, at(k_t0, 15), k_t0).next == Next::finish));
}

// Rule 11: otherwise wait for the next change, at most until the resync, the heartbeat
// or the timeout; at once when the caches hold newer changes, or a wait of the last
// pass took the change the next one needs (once: the flag is spent, unless the caches
// are ahead, when it is kept for the pass after).
BOOST_AUTO_TEST_CASE(rule11_the_loop_waits_for_a_change_unless_one_is_at_hand) {
    LoopState state;
    Step step = plan_wait(state, false, at(k_t0), k_t0 + 10s);
    BOOST_TEST((step.next == Next::wait));
    BOOST_TEST((step.why == Why::quiet));
    BOOST_TEST((step.until == k_t0 + 10s));  // the heartbeat
    BOOST_TEST((plan_wait(state, false, at(k_t0), k_t0 + 1h).until == k_t0 + 30s));
    BOOST_TEST((plan_wait(state, false, at(k_t0 + 1h - 1s), k_t0 + 1h).until == k_t0 + 1h));
    step = plan_wait(state, true, at(k_t0), k_t0 + 10s);
    BOOST_TEST((step.next == Next::look_again));
    BOOST_TEST((step.why == Why::caches_ahead));
    state.skip_wait = true;
    step = plan_wait(state, true, at(k_t0), k_t0 + 10s);
    BOOST_TEST(step.skip_wait);  // kept while the caches are ahead
    step = plan_wait(state, false, at(k_t0), k_t0 + 10s);
    BOOST_TEST((step.next == Next::look_again));
    BOOST_TEST((step.why == Why::change_taken));
    BOOST_TEST(!step.skip_wait);
    keep_step(step, state);
    BOOST_TEST((plan_wait(state, false, at(k_t0), k_t0 + 10s).next == Next::wait));
}

BOOST_AUTO_TEST_CASE(every_reason_has_words) {
    for (Why why : {Why::pair_unsettled, Why::deletion_in_flight, Why::pass_ready,
                    Why::caches_ahead, Why::change_taken, Why::quiet, Why::succeeded, Why::failed,
                    Why::api_error, Why::cancelled, Why::timed_out}) {
        BOOST_TEST(!why_text(why).empty());
    }
}

BOOST_AUTO_TEST_SUITE_END()
