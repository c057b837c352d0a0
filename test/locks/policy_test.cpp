// Given lock records, requests and a FakeClock, then the pure policy decides as
// spec/locks.md says: acquire / re-enter / wait / refuse, staleness judged only by
// what this process observed, hold -> failed, release -> takeover, queue orders.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "locks/policy.h"
#include "locks/record_json.h"
#include "test/fakes/fake_clock.h"

using namespace envgate;
using namespace envgate::locks;
using namespace std::chrono;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

// One lock and several parties, each with its own observation map.
struct World {
    test::FakeClock clock{k_t0};
    LockRecord record;
    std::map<std::string, Observations> seen_by;

    World() { record.name = "gstg"; }

    // One decision and what a LockManager does with it: the lock record's write (only
    // its stored form: waiters' own records are kept apart), then the requester's own
    // queue record. Joining runs on to the number, as acquire does.
    Decision run(const Request& rq) {
        Decision d = once(rq);
        while (d.queue == QueueAct::join) {
            d = once(rq);
        }
        return d;
    }

    Decision once(const Request& rq) {
        const std::string& me = rq.op == Op::unlock ? rq.actor : rq.who.id;
        Observations& seen = seen_by[me];
        seen = observe(seen, record, clock.now());
        Decision d = decide(record, rq, clock.now(), seen);
        std::vector<Waiter> own;
        for (const auto& w : record.waiters) {
            if (!w.legacy) {
                own.push_back(w);
            }
        }
        if (d.write) {
            ++lock_writes;
            record = stored_form(*d.write);
        }
        auto mine = [&](const Waiter& w) { return w.who.id == rq.who.id; };
        if (d.queue != QueueAct::none) {
            ++own_writes;
            std::erase_if(own, mine);
            if (d.queue != QueueAct::leave) {
                own.push_back(d.entry);
                own.back().version = std::to_string(own_writes);  // as a store stamps it
            }
        }
        for (const auto& dead : d.dead) {
            if (d.outcome == Outcome::acquired || d.outcome == Outcome::took_over) {
                std::erase_if(own, [&](const Waiter& w) { return w.who.id == dead.id; });
            }
        }
        std::erase_if(record.waiters, [](const Waiter& w) { return !w.legacy; });
        record.waiters.insert(record.waiters.end(), own.begin(), own.end());
        sort_queue(record.waiters);
        return d;
    }

    int lock_writes = 0;
    int own_writes = 0;
};

Holder pipeline(const std::string& id, int minutes_after_t0 = 0) {
    Holder h;
    h.id = id;
    h.job_url = "https://gitlab.example/" + id + "/-/jobs/1";
    h.created_at = k_t0 + minutes(minutes_after_t0);
    return h;
}

Request acquire(const Holder& who, QueueOrder order = QueueOrder::oldest_first,
                OnFailure on_failure = OnFailure::hold) {
    Request rq;
    rq.op = Op::acquire;
    rq.who = who;
    rq.step = "deploy";
    rq.lease_duration = seconds(60);
    rq.waiter_ttl = seconds(60);
    rq.order = order;
    rq.on_failure = on_failure;
    return rq;
}

Request simple(Op op, const Holder& who, OnFailure on_failure = OnFailure::hold) {
    Request rq;
    rq.op = op;
    rq.who = who;
    rq.on_failure = on_failure;
    rq.failure = {"pre-migrations", "MigrationsJobFailed", "exit code 1", {}};
    return rq;
}

Request unlock_by(const std::string& actor, const std::string& reason,
                  std::optional<std::string> expect = std::nullopt) {
    Request rq;
    rq.op = Op::unlock;
    rq.actor = actor;
    rq.reason = reason;
    rq.expect_holder = std::move(expect);
    return rq;
}

// A holder outside CI: no pipeline, arrival (its number) orders it.
Holder local(const std::string& id) {
    Holder h;
    h.id = id;
    return h;
}

const Holder p1 = pipeline("grp/app#1", 0);
const Holder p2 = pipeline("grp/app#2", 1);
const Holder p3 = pipeline("grp/app#3", 2);

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_policy_suite)

BOOST_AUTO_TEST_CASE(acquires_a_free_lock_and_same_pipeline_reenters) {
    // Given a free lock, then p1 takes it; a second call of p1 re-enters and moves the step.
    World w;
    Decision d = w.run(acquire(p1));
    BOOST_TEST(outcome_name(d.outcome) == "acquired");
    BOOST_TEST((w.record.state == LockState::held));
    BOOST_TEST(w.record.holder->id == p1.id);
    BOOST_TEST(w.record.lease_transitions == 1);
    BOOST_TEST(w.record.history.back().what == "acquire");
    w.clock.advance(seconds(5));
    Request again = acquire(p1);
    again.step = "qa";
    d = w.run(again);
    BOOST_TEST(outcome_name(d.outcome) == "reentered");
    BOOST_TEST(w.record.step == "qa");
    BOOST_TEST((w.record.renewed_at == k_t0 + seconds(5)));
    BOOST_TEST(w.record.lease_transitions == 1);
    BOOST_TEST(w.record.history.size() == 1u);
}

BOOST_AUTO_TEST_CASE(others_queue_with_positions_and_no_wait_refuses) {
    World w;
    (void)w.run(acquire(p1));
    Decision d = w.run(acquire(p2));
    BOOST_TEST(outcome_name(d.outcome) == "queued");
    BOOST_TEST(d.position == 1);
    d = w.run(acquire(p3));
    BOOST_TEST(d.position == 2);
    BOOST_TEST(d.queue_length == 2);
    d = w.run(acquire(p2));
    BOOST_TEST(outcome_name(d.outcome) == "waiting");  // nothing to write yet
    BOOST_TEST(!d.write);
    Request no_wait = acquire(pipeline("grp/app#4", 3));
    no_wait.wait = Wait::no;
    d = w.run(no_wait);
    BOOST_TEST(refusal_name(d.refusal) == "held_by_other");
    BOOST_TEST(!d.write);
    BOOST_TEST(w.record.waiters.size() == 2u);
}

BOOST_AUTO_TEST_CASE(release_only_by_holder_and_refused_on_failed_lock) {
    World w;
    BOOST_TEST(outcome_name(w.run(simple(Op::release, p1)).outcome) == "nothing_to_do");
    (void)w.run(acquire(p1));
    BOOST_TEST(refusal_name(w.run(simple(Op::release, p2)).refusal) == "not_holder");
    BOOST_TEST(outcome_name(w.run(simple(Op::release, p1)).outcome) == "released");
    BOOST_TEST((w.record.state == LockState::free));
    BOOST_TEST(!w.record.holder);
    (void)w.run(acquire(p1));
    BOOST_TEST(outcome_name(w.run(simple(Op::fail, p1)).outcome) == "failed");
    Decision d = w.run(simple(Op::release, p1));
    BOOST_TEST(refusal_name(d.refusal) == "lock_failed");
    BOOST_TEST(d.message.find("unlock") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fail_holds_under_hold_and_frees_under_release) {
    World hold;
    (void)hold.run(acquire(p1));
    (void)hold.run(simple(Op::fail, p1, OnFailure::hold));
    BOOST_TEST((hold.record.state == LockState::failed));
    BOOST_TEST(hold.record.failure->reason == "MigrationsJobFailed");
    BOOST_TEST(hold.record.failure->step == "pre-migrations");
    BOOST_TEST(hold.record.holder->id == p1.id);
    // The same pipeline cannot re-enter a failed lock: it queues like anyone.
    BOOST_TEST(outcome_name(hold.run(acquire(p1)).outcome) == "queued");
    Request no_wait = acquire(p2);
    no_wait.wait = Wait::no;
    BOOST_TEST(refusal_name(hold.run(no_wait).refusal) == "lock_failed");

    World release;
    (void)release.run(acquire(p1));
    (void)release.run(simple(Op::fail, p1, OnFailure::release));
    BOOST_TEST((release.record.state == LockState::free));
    BOOST_TEST(!release.record.failure);
    BOOST_TEST(release.record.history.back().what == "fail");
    BOOST_TEST(release.record.history.back().why.find("MigrationsJobFailed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(unlock_needs_reason_and_checks_expected_holder) {
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(simple(Op::fail, p1));
    BOOST_TEST(refusal_name(w.run(unlock_by("alice", "")).refusal) == "reason_required");
    BOOST_TEST(refusal_name(w.run(unlock_by("alice", " \t ")).refusal) == "reason_required");
    BOOST_TEST(refusal_name(w.run(unlock_by("alice", "fixed", p2.id)).refusal) == "holder_changed");
    BOOST_TEST((w.record.state == LockState::failed));
    Decision d = w.run(unlock_by("alice", "migration fixed by hand", p1.id));
    BOOST_TEST(outcome_name(d.outcome) == "unlocked");
    BOOST_TEST((w.record.state == LockState::free));
    BOOST_TEST(w.record.history.back().what == "unlock");
    BOOST_TEST(w.record.history.back().who == "alice");
    BOOST_TEST(w.record.history.back().why.find("migration fixed by hand") == 0u);
    BOOST_TEST(outcome_name(w.run(unlock_by("alice", "again")).outcome) == "nothing_to_do");
    BOOST_TEST(refusal_name(w.run(unlock_by("alice", "again", p1.id)).refusal) == "holder_changed");
}

// Given a failed lock, then a reason made only of Unicode white space or invisible
// characters (no-break, em and ideographic spaces, zero-width space, BOM) is no reason,
// while a reason with one visible character, or with bytes that are not UTF-8, is one.
BOOST_AUTO_TEST_CASE(a_reason_of_unicode_spaces_is_no_reason) {
    struct Case {
        const char* name;
        std::string reason;
        bool blank;
    };
    const Case cases[] = {
        {"no-break spaces", "\u00a0\u00a0\u00a0", true},
        {"narrow no-break and em space", "\u202f\u2003", true},
        {"ideographic space and newline", "\u3000\n", true},
        {"zero-width space and BOM", "\u200b\ufeff ", true},
        {"line separator and NEL", "\u2028\u0085\v\f", true},
        {"one letter among no-break spaces", "\u00a0x\u00a0", false},
        {"a visible non-ASCII letter", "\u00e9", false},
        {"bytes that are not UTF-8", "\xa0\xa0", false},
        {"a truncated no-break space", "\xc2", false},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            BOOST_TEST(is_blank_text(c.reason) == c.blank);
            World w;
            (void)w.run(acquire(p1));
            (void)w.run(simple(Op::fail, p1));
            Decision d = w.run(unlock_by("alice", c.reason));
            BOOST_TEST((d.outcome == Outcome::refused) == c.blank);
            BOOST_TEST((w.record.state == LockState::failed) == c.blank);
        }
    }
}

// Given an unlock, when 30 more pipelines acquire and release (more than the history
// keeps), then the unlock is still in the record's own unlock list, and it survives a
// round trip through the record's JSON.
BOOST_AUTO_TEST_CASE(unlocks_are_kept_apart_from_the_rotating_history) {
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(simple(Op::fail, p1));
    (void)w.run(unlock_by("alice", "migration fixed by hand", p1.id));
    for (int i = 0; i < 30; ++i) {
        (void)w.run(acquire(p2));
        (void)w.run(simple(Op::release, p2));
    }
    auto in_history = std::count_if(w.record.history.begin(), w.record.history.end(),
                                    [](const Transition& t) { return t.what == "unlock"; });
    BOOST_TEST(in_history == 0);
    BOOST_REQUIRE(w.record.unlocks.size() == 1u);
    BOOST_TEST(w.record.unlocks[0].who == "alice");
    BOOST_TEST(w.record.unlocks[0].why.find("migration fixed by hand") == 0u);
    w.record.name = "gprd";
    auto back = record_from_json(to_json(w.record));
    BOOST_REQUIRE(back.is_ok());
    BOOST_REQUIRE(back->unlocks.size() == 1u);
    BOOST_TEST(back->unlocks[0].seq == w.record.unlocks[0].seq);
}

BOOST_AUTO_TEST_CASE(staleness_is_judged_by_observation_not_by_the_holders_clock) {
    // Given a holder whose clock is 10 h behind ours, then a waiter does not call it
    // stale at first sight, only after a whole lease without a renewTime change.
    World w;
    (void)w.run(acquire(p1));
    w.record.renewed_at = k_t0 - hours(10);
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "queued");
    w.clock.advance(seconds(40));
    (void)w.run(simple(Op::renew, p1));  // a renewal the waiter sees as a change
    w.clock.advance(seconds(30));
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) != "marked_vanished");
    w.clock.advance(seconds(59));
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) != "marked_vanished");
    w.clock.advance(seconds(1));  // 60 s since the waiter saw the last change
    Decision d = w.run(acquire(p2));
    BOOST_TEST(outcome_name(d.outcome) == "marked_vanished");
    BOOST_TEST((w.record.state == LockState::failed));
    BOOST_TEST(w.record.failure->reason == "HolderVanished");
    BOOST_TEST(w.record.history.back().what == "vanished");
    // It now waits for a manual unlock, like any failed lock.
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "waiting");
    BOOST_TEST(refusal_name(w.run(simple(Op::renew, p1)).refusal) == "lock_failed");
}

BOOST_AUTO_TEST_CASE(a_new_observer_waits_a_full_lease_even_for_an_old_renewal) {
    World w;
    (void)w.run(acquire(p1));
    w.clock.advance(hours(3));  // renewed 3 h ago, lease 60 s: but p2 has just arrived
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "queued");
    w.clock.advance(seconds(60));
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "marked_vanished");
}

BOOST_AUTO_TEST_CASE(release_policy_takeover_by_first_in_line_counts_a_transition) {
    World w;
    (void)w.run(acquire(p1, QueueOrder::oldest_first, OnFailure::release));
    (void)w.run(acquire(p2, QueueOrder::oldest_first, OnFailure::release));
    (void)w.run(acquire(p3, QueueOrder::oldest_first, OnFailure::release));
    w.clock.advance(seconds(30));  // both waiters refresh their queue entries
    (void)w.run(acquire(p2, QueueOrder::oldest_first, OnFailure::release));
    (void)w.run(acquire(p3, QueueOrder::oldest_first, OnFailure::release));
    w.clock.advance(seconds(30));
    // p3 sees the holder stale but p2 is older: p3 keeps waiting.
    Decision d3 = w.run(acquire(p3, QueueOrder::oldest_first, OnFailure::release));
    BOOST_TEST(outcome_name(d3.outcome) != "took_over");
    Decision d2 = w.run(acquire(p2, QueueOrder::oldest_first, OnFailure::release));
    BOOST_TEST(outcome_name(d2.outcome) == "took_over");
    BOOST_TEST(w.record.holder->id == p2.id);
    BOOST_TEST(w.record.lease_transitions == 2);
    BOOST_TEST(w.record.history.back().what == "takeover");
    BOOST_TEST(w.record.history.back().why.find("vanished") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(oldest_first_serves_the_earliest_created_pipeline) {
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(acquire(p3));  // queued first, but created later
    (void)w.run(acquire(p2));
    (void)w.run(simple(Op::release, p1));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) == "waiting");
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "acquired");
    BOOST_TEST(w.record.waiters.size() == 1u);
}

BOOST_AUTO_TEST_CASE(newest_first_serves_the_newest_and_tells_older_ones_why) {
    World w;
    auto nf = [](const Holder& h) { return acquire(h, QueueOrder::newest_first); };
    (void)w.run(nf(p1));
    (void)w.run(nf(p2));
    (void)w.run(nf(p3));
    (void)w.run(simple(Op::release, p1));
    BOOST_TEST(outcome_name(w.run(nf(p2)).outcome) == "waiting");
    BOOST_TEST(outcome_name(w.run(nf(p3)).outcome) == "acquired");
    Decision d = w.run(nf(p2));
    BOOST_TEST(refusal_name(d.refusal) == "superseded");
    BOOST_TEST(d.message.find(p3.id) != std::string::npos);
    BOOST_TEST(w.record.waiters.empty());
}

BOOST_AUTO_TEST_CASE(unordered_lets_whoever_comes_first_take_a_free_lock) {
    World w;
    auto un = [](const Holder& h) { return acquire(h, QueueOrder::unordered); };
    (void)w.run(un(p1));
    (void)w.run(un(p2));
    (void)w.run(un(p3));
    (void)w.run(simple(Op::release, p1));
    BOOST_TEST(outcome_name(w.run(un(p3)).outcome) == "acquired");
}

BOOST_AUTO_TEST_CASE(a_waiter_that_stops_refreshing_is_dropped_from_the_queue) {
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(acquire(p2));  // p2 will vanish while waiting
    (void)w.run(acquire(p3));
    (void)w.run(simple(Op::release, p1));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) == "waiting");
    for (int i = 0; i < 3; ++i) {
        w.clock.advance(seconds(20));
        (void)w.run(acquire(p3));  // p3 refreshes itself, p2 does not
    }
    BOOST_TEST(w.record.holder->id == p3.id);
    BOOST_TEST(w.record.waiters.empty());
}

BOOST_AUTO_TEST_CASE(history_keeps_the_last_20_transitions_numbered) {
    World w;
    for (int i = 0; i < 15; ++i) {
        (void)w.run(acquire(p1));
        (void)w.run(simple(Op::release, p1));
    }
    BOOST_TEST(w.record.history.size() == 20u);
    BOOST_TEST(w.record.history.front().seq == 11);
    BOOST_TEST(w.record.history.back().seq == 30);
    for (std::size_t i = 1; i < w.record.history.size(); ++i) {
        BOOST_TEST(w.record.history[i].seq == w.record.history[i - 1].seq + 1);
    }
}

BOOST_AUTO_TEST_CASE(verify_and_leave_queue) {
    // leave_queue removes an entry stored in the lock record (the previous format); a
    // waiter's own record is removed by its LockManager (lock_manager_test).
    World w;
    (void)w.run(acquire(p1));
    BOOST_TEST(outcome_name(w.run(simple(Op::verify, p1)).outcome) == "verified");
    BOOST_TEST(refusal_name(w.run(simple(Op::verify, p2)).refusal) == "not_holder");
    Waiter old(p2, k_t0, k_t0, seconds(15));
    old.legacy = true;
    w.record.waiters.push_back(old);
    BOOST_TEST(outcome_name(w.run(simple(Op::leave_queue, p2)).outcome) == "left_queue");
    BOOST_TEST(w.record.waiters.empty());
}

BOOST_AUTO_TEST_CASE(joining_is_one_write_of_the_lock_record_and_waiting_writes_only_our_own) {
    World w;
    (void)w.run(acquire(p1));
    int lock_before = w.lock_writes;
    int own_before = w.own_writes;
    Decision d = w.run(acquire(p2));
    BOOST_TEST(outcome_name(d.outcome) == "queued");
    BOOST_TEST(w.lock_writes - lock_before == 1);  // the number
    BOOST_TEST(w.own_writes - own_before == 2);    // our record, then its number
    BOOST_TEST(w.record.queue_seq == 1);
    BOOST_REQUIRE(w.record.find_waiter(p2.id) != nullptr);
    BOOST_TEST(w.record.find_waiter(p2.id)->seq == 1);
    for (int i = 0; i < 10; ++i) {  // ten minutes of waiting: renewals of our record only
        w.clock.advance(seconds(20));
        (void)w.run(simple(Op::renew, p1));
        (void)w.run(acquire(p2));
    }
    BOOST_TEST(w.lock_writes - lock_before == 1 + 10);  // the holder's renewals
    BOOST_TEST(w.own_writes - own_before == 2 + 10);
    BOOST_TEST(w.record.find_waiter(p2.id)->seq == 1);
}

BOOST_AUTO_TEST_CASE(a_waiter_keeps_its_place_while_its_renewals_are_late_up_to_its_ttl) {
    // p2 renews each time just before its TTL (60 s) instead of every 20 s; p3, behind
    // it, checks right before each renewal and once the lock is free: p2 keeps its place.
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(acquire(p2));
    (void)w.run(acquire(p3));
    for (int i = 0; i < 5; ++i) {
        w.clock.advance(seconds(60) - microseconds(1));
        BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) != "acquired");
        (void)w.run(simple(Op::renew, p1));
        (void)w.run(acquire(p2));  // late, but within its TTL
    }
    (void)w.run(simple(Op::release, p1));
    w.clock.advance(seconds(60) - microseconds(1));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) != "acquired");
    BOOST_TEST(w.record.find_waiter(p2.id) != nullptr);
    BOOST_TEST(outcome_name(w.run(acquire(p2)).outcome) == "acquired");
}

BOOST_AUTO_TEST_CASE(a_dead_waiter_is_skipped_after_its_own_ttl_and_removed_by_the_next_holder) {
    // p2's TTL is 10 s, the holder's lease 60 s: once p3 saw p2 unchanged for 10 s it
    // takes the freed lock past p2 and names p2's record for removal.
    World w;
    (void)w.run(acquire(p1));
    Request r2 = acquire(p2);
    r2.waiter_ttl = seconds(10);
    (void)w.run(r2);
    (void)w.run(acquire(p3));
    (void)w.run(simple(Op::release, p1));
    w.clock.advance(seconds(10) - microseconds(1));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) == "waiting");
    w.clock.advance(microseconds(1));
    const std::string judged = w.record.find_waiter(p2.id)->version;
    BOOST_TEST(!judged.empty());
    Decision d = w.run(acquire(p3));
    BOOST_TEST(outcome_name(d.outcome) == "acquired");
    // Named with the version of its record that was judged: only that one is removed.
    BOOST_TEST((d.dead == std::vector<DeadWaiter>{{p2.id, judged}}));
    BOOST_TEST(w.record.waiters.empty());
}

BOOST_AUTO_TEST_CASE(a_joining_waiter_holds_everyone_back_until_it_has_a_number) {
    // Outside CI the number is the order: a waiter still joining may get a smaller one
    // than ours (its compare-and-swap may land first), so nobody takes the lock past it.
    World w;
    (void)w.run(acquire(local("h")));
    Decision join = w.once(acquire(local("b")));  // b created its record, no number yet
    BOOST_TEST((join.queue == QueueAct::join));
    (void)w.run(acquire(local("a")));  // a takes number 1
    (void)w.run(simple(Op::release, local("h")));
    BOOST_TEST(outcome_name(w.run(acquire(local("a"))).outcome) == "waiting");
    Decision number = w.once(acquire(local("b")));
    BOOST_TEST((number.queue == QueueAct::number));
    BOOST_TEST(w.record.find_waiter("b")->seq == 2);
    BOOST_TEST(outcome_name(w.run(acquire(local("b"))).outcome) == "waiting");
    BOOST_TEST(outcome_name(w.run(acquire(local("a"))).outcome) == "acquired");
}

BOOST_AUTO_TEST_CASE(numbers_order_waiters_outside_ci_whatever_their_clocks) {
    // a's clock is an hour ahead of b's; a joined first, so a goes first.
    World w;
    (void)w.run(acquire(local("h")));
    w.clock.advance(hours(1));
    (void)w.run(acquire(local("a")));
    w.clock.advance(-hours(1) + seconds(1));
    (void)w.run(acquire(local("b")));
    BOOST_TEST(w.record.find_waiter("a")->seq == 1);
    BOOST_TEST(w.record.find_waiter("b")->seq == 2);
    BOOST_TEST((w.record.find_waiter("b")->since > w.record.find_waiter("a")->since));
    (void)w.run(simple(Op::release, local("h")));
    BOOST_TEST(outcome_name(w.run(acquire(local("b"))).outcome) == "waiting");
    BOOST_TEST(outcome_name(w.run(acquire(local("a"))).outcome) == "acquired");
    // A newcomer without a number never goes past a numbered waiter.
    (void)w.run(simple(Op::release, local("a")));
    BOOST_TEST(outcome_name(w.run(acquire(local("c"))).outcome) == "queued");
    BOOST_TEST(outcome_name(w.run(acquire(local("b"))).outcome) == "acquired");
}

BOOST_AUTO_TEST_CASE(entries_of_the_previous_format_keep_their_place_until_they_stop_refreshing) {
    // A record written by an earlier envgate: p2 waits inside it. p3 (this version)
    // queues behind it, with a record of its own; p2's entry stays while it changes.
    World w;
    (void)w.run(acquire(p1));
    Waiter old(p2, k_t0, k_t0, seconds(15));
    old.legacy = true;
    w.record.waiters.push_back(old);
    (void)w.run(acquire(p3));
    (void)w.run(simple(Op::release, p1));
    w.clock.advance(seconds(10));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) == "waiting");
    for (auto& e : w.record.waiters) {  // the earlier envgate refreshes its entry
        if (e.legacy) {
            e.last_seen = w.clock.now();
        }
    }
    w.clock.advance(seconds(10));  // p3 sees the change now
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) != "acquired");
    w.clock.advance(seconds(15) - microseconds(1));
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) != "acquired");
    w.clock.advance(microseconds(1));  // unchanged for 15 s on p3's clock: gone
    BOOST_TEST(outcome_name(w.run(acquire(p3)).outcome) == "acquired");
    BOOST_TEST(w.record.waiters.empty());
    BOOST_TEST(to_json(stored_form(w.record))["waiters"].empty());
}

BOOST_AUTO_TEST_CASE(observe_keeps_first_sight_until_the_value_changes) {
    World w;
    (void)w.run(acquire(p1));
    Observations a = observe({}, w.record, k_t0);
    Observations b = observe(a, w.record, k_t0 + seconds(30));
    BOOST_TEST((b.at("holder").observed_at == k_t0));
    w.record.renewed_at += seconds(1);
    Observations c = observe(b, w.record, k_t0 + seconds(31));
    BOOST_TEST((c.at("holder").observed_at == k_t0 + seconds(31)));
    w.record.state = LockState::free;
    w.record.holder.reset();
    BOOST_TEST(observe(c, w.record, k_t0).empty());
}

// Given a lock failed by grp/app#1 and then unlocked by a person, then it was unlocked
// from grp/app#1 (its failed job may take it again), not from grp/app#10 or #2; a lock
// held by #1 and unlocked is too; once anything else happened, no longer.
BOOST_AUTO_TEST_CASE(unlocked_from_names_the_holder_a_person_freed) {
    World w;
    (void)w.run(acquire(p1));
    (void)w.run(simple(Op::fail, p1));
    BOOST_TEST(!unlocked_from(w.record, p1.id));
    (void)w.run(unlock_by("alice", "table restored"));
    BOOST_TEST(unlocked_from(w.record, p1.id));
    BOOST_TEST(!unlocked_from(w.record, "grp/app#10"));
    BOOST_TEST(!unlocked_from(w.record, "grp/app"));
    BOOST_TEST(!unlocked_from(w.record, p2.id));
    (void)w.run(acquire(p2));
    BOOST_TEST(!unlocked_from(w.record, p1.id));
    (void)w.run(unlock_by("alice", "p2 is stuck"));
    BOOST_TEST(unlocked_from(w.record, p2.id));
    BOOST_TEST(!unlocked_from(w.record, p1.id));
}

BOOST_AUTO_TEST_SUITE_END()
