// The LockStore conformance suite: every store (file now, Kubernetes Lease later;
// see store_factories.h) must behave the same. Given two store objects over one
// storage (two processes), then every row of the state table in spec/locks.md
// holds, compare-and-swap lets exactly one of two same-version writers win, and
// the history keeps every transition.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <thread>

#include "locks/lock_manager.h"
#include "test/fakes/fake_clock.h"
#include "test/locks/store_factories.h"

using namespace envgate;
using namespace envgate::locks;
using namespace std::chrono;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

Holder who(const std::string& id, int created_minute = 0) {
    Holder h;
    h.id = id;
    h.job_url = "https://gitlab.example/jobs/" + id;
    h.created_at = k_t0 + minutes(created_minute);
    return h;
}

LockSpec spec(OnFailure on_failure = OnFailure::hold, QueueOrder order = QueueOrder::oldest_first) {
    LockSpec s;
    s.name = "gstg";
    s.on_failure = on_failure;
    s.order = order;
    s.lease_duration = seconds(60);
    s.waiter_ttl = seconds(60);
    s.wait_timeout = minutes(5);
    s.step = "deploy";
    return s;
}

// One "process": its own store object, clock and manager over the shared storage.
template <typename Factory>
struct Party {
    std::shared_ptr<LockStore> store;
    test::FakeClock clock;
    std::ostringstream log;
    LockManager manager;
    Party(Factory& f, TimePoint start) : Party(f.make(), start) {}
    Party(std::shared_ptr<LockStore> s, TimePoint start)
        : store(std::move(s)),
          clock(start),
          manager(
              *store, clock, log, [] { return 0; }, options()) {}
    static ManagerOptions options() {
        ManagerOptions o;
        o.poll_interval = seconds(1);
        return o;
    }
    LockRecord read() { return store->read("gstg").value().record; }
    // One acquire decision; joining runs on to the number, as acquire does.
    Decision apply_acquire(const Holder& h, QueueOrder order, Duration ttl = seconds(60)) {
        Request rq;
        rq.op = Op::acquire;
        rq.who = h;
        rq.order = order;
        rq.lease_duration = seconds(60);
        rq.waiter_ttl = ttl;
        Decision d = manager.apply("gstg", rq).value();
        while (d.queue == QueueAct::join) {
            d = manager.apply("gstg", rq).value();
        }
        return d;
    }
};

// A store that counts the writes it passes on: of the lock record, of queue records.
class CountingStore : public LockStore {
  public:
    explicit CountingStore(std::shared_ptr<LockStore> inner) : m_inner(std::move(inner)) {}
    Result<Versioned> read(const std::string& name) override { return m_inner->read(name); }
    Result<Versioned> read_record(const std::string& name) override {
        return m_inner->read_record(name);
    }
    Result<std::string> write(const std::string& name, const LockRecord& record,
                              const std::string& version) override {
        ++lock_writes;
        return m_inner->write(name, record, version);
    }
    Result<std::string> write_waiter(const std::string& name, const Waiter& waiter,
                                     const std::string& version) override {
        ++waiter_writes;
        return m_inner->write_waiter(name, waiter, version);
    }
    Status remove_waiter(const std::string& name, const std::string& id,
                         const std::string& version = {}) override {
        if (before_remove) {
            before_remove();
        }
        return m_inner->remove_waiter(name, id, version);
    }
    Result<std::vector<std::string>> list() override { return m_inner->list(); }
    std::string describe() const override { return m_inner->describe(); }
    int lock_writes = 0;
    int waiter_writes = 0;
    std::function<void()> before_remove;  // another process acting just before a removal

  private:
    std::shared_ptr<LockStore> m_inner;
};

Holder local(const std::string& id) {
    Holder h;
    h.id = id;
    return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_store_conformance_suite)

BOOST_AUTO_TEST_CASE_TEMPLATE(unknown_lock_reads_free_and_writes_round_trip, F,
                              test::StoreFactories) {
    F f;
    auto store = f.make();
    auto first = store->read("gstg");
    BOOST_REQUIRE(first.is_ok());
    BOOST_TEST(first->version.empty());
    BOOST_TEST((first->record.state == LockState::free));
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::failed;
    r.holder = who("grp/app#7");
    r.holder->pipeline_id = 7;
    r.acquired_at = k_t0;
    r.renewed_at = k_t0 + seconds(3);
    r.lease_duration = hours(2);
    r.lease_transitions = 4;
    r.step = "pre-migrations";
    r.failure = Failure{"pre-migrations", "MigrationsJobFailed", "exit 1", k_t0 + seconds(9)};
    Waiter old(who("grp/app#8"), k_t0, k_t0 + seconds(1), seconds(60));
    old.legacy = true;  // the previous format kept the queue in the lock record
    r.waiters.push_back(old);
    r.record("fail", "grp/app#7", k_t0 + seconds(9), "pre-migrations: MigrationsJobFailed");
    auto v = store->write("gstg", r, "");
    BOOST_REQUIRE(v.is_ok());
    auto back = f.make()->read("gstg");
    BOOST_REQUIRE(back.is_ok());
    BOOST_TEST(back->version == *v);
    const LockRecord& b = back->record;
    BOOST_TEST((b.state == LockState::failed));
    BOOST_TEST(b.holder->id == "grp/app#7");
    BOOST_TEST(*b.holder->pipeline_id == 7);
    BOOST_TEST((b.renewed_at == r.renewed_at));
    BOOST_TEST((b.lease_duration == hours(2)));
    BOOST_TEST(b.lease_transitions == 4);
    BOOST_TEST(b.failure->message == "exit 1");
    BOOST_TEST(b.waiters.size() == 1u);
    BOOST_TEST((b.waiters[0].last_seen == k_t0 + seconds(1)));
    BOOST_TEST(b.history.at(0).why == "pre-migrations: MigrationsJobFailed");
    BOOST_TEST(store->list().value() == std::vector<std::string>{"gstg"});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(two_writers_with_the_same_version_exactly_one_wins, F,
                              test::StoreFactories) {
    F f;
    LockRecord r;
    r.name = "gstg";
    std::string version = f.make()->write("gstg", r, "").value();
    BOOST_TEST(f.make()->write("gstg", r, "").status().code() == Code::conflict);
    constexpr int k_writers = 8;
    std::atomic<int> wins{0};
    std::atomic<int> conflicts{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < k_writers; ++i) {
        threads.emplace_back([&, i] {
            LockRecord mine = r;
            mine.step = "writer-" + std::to_string(i);
            auto w = f.make()->write("gstg", mine, version);
            (w.is_ok() ? wins : conflicts) += 1;
            if (!w.is_ok()) {
                BOOST_CHECK(w.status().code() == Code::conflict);
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    BOOST_TEST(wins.load() == 1);
    BOOST_TEST(conflicts.load() == k_writers - 1);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(free_held_reenter_release_rows, F, test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    Party<F> b(f, k_t0);
    auto got = a.manager.acquire(spec(), who("p1"));  // free -> held
    BOOST_REQUIRE(got.is_ok());
    BOOST_TEST(outcome_name(got->decision.outcome) == "acquired");
    auto again = a.manager.acquire(spec(), who("p1"));  // held by same pipeline -> re-enter
    BOOST_TEST(outcome_name(again->decision.outcome) == "reentered");
    LockSpec quick = spec();
    quick.wait = Wait::no;
    auto refused = b.manager.acquire(quick, who("p2"));  // held by other, --no-wait
    BOOST_TEST((refused->end == AcquireEnd::refused));
    BOOST_TEST(refusal_name(refused->decision.refusal) == "held_by_other");
    quick.wait = Wait::yes;
    quick.wait_timeout = seconds(10);
    auto timed_out = b.manager.acquire(quick, who("p2"));  // waits, then gives up
    BOOST_TEST((timed_out->end == AcquireEnd::timed_out));
    BOOST_TEST(b.read().waiters.empty());  // left the queue cleanly
    BOOST_TEST(b.log.str().find("held by p1") != std::string::npos);
    BOOST_TEST(refusal_name(b.manager.release("gstg", who("p2")).value().refusal) == "not_holder");
    BOOST_TEST(outcome_name(a.manager.release("gstg", who("p1")).value().outcome) == "released");
    BOOST_TEST((a.read().state == LockState::free));
    BOOST_TEST(outcome_name(b.manager.acquire(spec(), who("p2"))->decision.outcome) == "acquired");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(fail_and_unlock_rows, F, test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    Party<F> b(f, k_t0);
    (void)a.manager.acquire(spec(), who("p1"));
    Failure failure{"pre-migrations", "MigrationsJobFailed", "exit code 1", {}};
    (void)a.manager.fail(spec(OnFailure::hold), who("p1"), failure);  // held -> failed
    BOOST_TEST((a.read().state == LockState::failed));
    auto release = a.manager.release("gstg", who("p1"));
    BOOST_TEST(refusal_name(release->refusal) == "lock_failed");
    LockSpec quick = spec();
    quick.wait = Wait::no;
    auto refused = b.manager.acquire(quick, who("p2"));
    BOOST_TEST(refusal_name(refused->decision.refusal) == "lock_failed");
    BOOST_TEST(b.log.str().find("envgate unlock gstg") != std::string::npos);
    auto wrong = b.manager.unlock("gstg", "alice", "checked", std::string("p9"));
    BOOST_TEST(refusal_name(wrong->refusal) == "holder_changed");
    auto right = b.manager.unlock("gstg", "alice", "checked", std::string("p1"));
    BOOST_TEST(outcome_name(right->outcome) == "unlocked");
    (void)a.manager.acquire(spec(), who("p1"));
    auto plain =
        b.manager.unlock("gstg", "bob", "runner died", std::nullopt);  // held -> free, no expect
    BOOST_TEST(outcome_name(plain->outcome) == "unlocked");
    LockRecord r = b.read();
    BOOST_TEST((r.state == LockState::free));
    BOOST_TEST(r.history.back().who == "bob");
    BOOST_TEST(r.history.back().why.find("runner died") == 0u);
    (void)a.manager.acquire(spec(OnFailure::release), who("p1"));
    (void)a.manager.fail(spec(OnFailure::release), who("p1"), failure);  // held -> free
    r = a.read();
    BOOST_TEST((r.state == LockState::free));
    BOOST_TEST(r.history.back().why.find("MigrationsJobFailed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(stale_holder_rows_per_policy, F, test::StoreFactories) {
    for (OnFailure policy : {OnFailure::hold, OnFailure::release}) {
        F f;
        Party<F> a(f, k_t0);
        Party<F> b(f, k_t0 + hours(5));  // a skewed clock changes nothing
        (void)a.manager.acquire(spec(policy), who("p1"));
        LockSpec waiting = spec(policy);
        waiting.wait_timeout = seconds(90);
        auto got = b.manager.acquire(waiting, who("p2"));
        LockRecord r = b.read();
        if (policy == OnFailure::hold) {
            BOOST_TEST((got->end == AcquireEnd::timed_out));
            BOOST_TEST((r.state == LockState::failed));
            BOOST_TEST(r.failure->reason == "HolderVanished");
            BOOST_TEST(b.log.str().find("HolderVanished") != std::string::npos);
        } else {
            BOOST_TEST(outcome_name(got->decision.outcome) == "took_over");
            BOOST_TEST(r.holder->id == "p2");
            BOOST_TEST(r.lease_transitions == 2);
            BOOST_TEST(r.history.back().what == "takeover");
        }
        // Seen on b's clock: stale after one lease (60 s) of b's own observation.
        BOOST_TEST((r.history.back().at == k_t0 + hours(5) + seconds(60)));
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(history_is_capped_at_20_and_numbers_every_transition, F,
                              test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    for (int i = 0; i < 13; ++i) {
        (void)a.manager.acquire(spec(), who("p" + std::to_string(i)));
        (void)a.manager.release("gstg", who("p" + std::to_string(i)));
    }
    LockRecord r = a.read();
    BOOST_TEST(r.history.size() == 20u);
    BOOST_TEST(r.history.back().seq == 26);
    for (std::size_t i = 0; i < r.history.size(); ++i) {
        BOOST_TEST(r.history[i].seq == static_cast<std::int64_t>(7 + i));
        BOOST_TEST(r.history[i].what == (i % 2 == 0 ? "acquire" : "release"));
    }
    BOOST_TEST(r.history.back().who == "p12");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(queue_order_per_policy, F, test::StoreFactories) {
    struct Case {
        QueueOrder order;
        const char* first;
    };
    // p2 queues first but was created after p3... so each order picks differently.
    for (Case c : {Case{QueueOrder::oldest_first, "p3"}, Case{QueueOrder::newest_first, "p2"},
                   Case{QueueOrder::unordered, "p4"}}) {
        BOOST_TEST_CONTEXT(order_name(c.order)) {
            F f;
            Party<F> a(f, k_t0);
            (void)a.apply_acquire(who("p1", 0), c.order);
            (void)a.apply_acquire(who("p2", 9), c.order);
            (void)a.apply_acquire(who("p3", 5), c.order);
            (void)a.apply_acquire(who("p4", 7), c.order);
            (void)a.manager.release("gstg", who("p1"));
            // The waiters try in the order p4, p2, p3 after the release.
            for (const char* id : {"p4", "p2", "p3"}) {
                int minute = std::string(id) == "p2" ? 9 : std::string(id) == "p3" ? 5 : 7;
                (void)a.apply_acquire(who(id, minute), c.order);
            }
            LockRecord r = a.read();
            BOOST_TEST(r.holder->id == c.first);
        }
    }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(joining_is_one_compare_and_swap_and_waiting_writes_only_our_record, F,
                              test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    (void)a.manager.acquire(spec(), who("p1"));
    CountingStore counted(f.make());
    test::FakeClock clock(k_t0);
    std::ostringstream log;
    LockManager m(counted, clock, log, [] { return 0; });
    Request rq;
    rq.op = Op::acquire;
    rq.who = who("p2", 1);
    rq.lease_duration = seconds(60);
    rq.waiter_ttl = seconds(30);
    Decision d = m.apply("gstg", rq).value();
    BOOST_TEST((d.queue == QueueAct::join));
    d = m.apply("gstg", rq).value();
    BOOST_TEST((d.queue == QueueAct::number));
    BOOST_TEST(counted.lock_writes == 1);    // the number: one compare-and-swap
    BOOST_TEST(counted.waiter_writes == 2);  // our record, then its number
    for (int i = 0; i < 6; ++i) {            // three minutes of waiting
        clock.advance(seconds(10));
        a.clock.advance(seconds(10));
        (void)a.manager.renew(spec(), who("p1"));
        (void)m.apply("gstg", rq);
    }
    BOOST_TEST(counted.lock_writes == 1);
    BOOST_TEST(counted.waiter_writes == 2 + 6);  // a renewal every ttl/3
    LockRecord r = a.read();
    BOOST_REQUIRE(r.waiters.size() == 1u);
    BOOST_TEST(r.waiters[0].seq == 1);
    BOOST_TEST(r.queue_seq == 1);
    BOOST_TEST((r.waiters[0].last_seen == k_t0 + seconds(60)));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_waiter_keeps_its_place_while_its_renewals_are_late_up_to_its_ttl, F,
                              test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    Party<F> b(f, k_t0);
    Party<F> c(f, k_t0);
    (void)a.manager.acquire(spec(), local("h"));
    (void)b.apply_acquire(local("w1"), QueueOrder::oldest_first);
    (void)c.apply_acquire(local("w2"), QueueOrder::oldest_first);
    for (int i = 0; i < 4; ++i) {  // w1 renews just within its 60 s TTL, not every 20 s
        for (auto* p : {&a.clock, &b.clock, &c.clock}) {
            p->advance(seconds(60) - microseconds(1));
        }
        (void)a.manager.renew(spec(), local("h"));
        BOOST_TEST(outcome_name(c.apply_acquire(local("w2"), QueueOrder::oldest_first).outcome) !=
                   "took_over");
        (void)b.apply_acquire(local("w1"), QueueOrder::oldest_first);
    }
    (void)a.manager.release("gstg", local("h"));
    for (auto* p : {&b.clock, &c.clock}) {
        p->advance(seconds(60) - microseconds(1));
    }
    BOOST_TEST(outcome_name(c.apply_acquire(local("w2"), QueueOrder::oldest_first).outcome) !=
               "acquired");
    BOOST_TEST(outcome_name(b.apply_acquire(local("w1"), QueueOrder::oldest_first).outcome) ==
               "acquired");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(a_dead_waiter_is_skipped_after_its_own_ttl_and_removed, F,
                              test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    Party<F> b(f, k_t0);
    Party<F> c(f, k_t0);
    (void)a.manager.acquire(spec(), local("h"));
    (void)b.apply_acquire(local("w1"), QueueOrder::oldest_first, seconds(6));  // then dies
    (void)c.apply_acquire(local("w2"), QueueOrder::oldest_first);
    (void)a.manager.release("gstg", local("h"));
    c.clock.advance(seconds(6) - microseconds(1));
    BOOST_TEST(outcome_name(c.apply_acquire(local("w2"), QueueOrder::oldest_first).outcome) ==
               "waiting");
    c.clock.advance(microseconds(1));
    Decision d = c.apply_acquire(local("w2"), QueueOrder::oldest_first);
    BOOST_TEST(outcome_name(d.outcome) == "acquired");
    LockRecord r = a.read();
    BOOST_TEST(r.holder->id == "w2");
    BOOST_TEST(r.waiters.empty());  // w1's record removed by w2, and w2's own
}

// Given w1 seen unchanged for its TTL by w2, which takes the freed lock past it, when
// w1 renews its record after w2's read and before w2 removes it, then w1's record stays
// with its number (the removal asked for the version w2 judged), and w2 says so.
BOOST_AUTO_TEST_CASE_TEMPLATE(a_waiter_that_renews_before_its_removal_keeps_its_place, F,
                              test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    Party<F> b(f, k_t0);
    auto racing = std::make_shared<CountingStore>(f.make());
    Party<F> c(racing, k_t0);
    (void)a.manager.acquire(spec(), local("h"));
    (void)b.apply_acquire(local("w1"), QueueOrder::oldest_first, seconds(6));
    (void)c.apply_acquire(local("w2"), QueueOrder::oldest_first);
    const std::int64_t number = a.read().find_waiter("w1")->seq;
    (void)a.manager.release("gstg", local("h"));
    b.clock.advance(seconds(6));
    c.clock.advance(seconds(6));
    int renewals = 0;
    Request renew;  // w1's next acquire decision, which renews its record
    renew.who = local("w1");
    renew.lease_duration = seconds(60);
    renew.waiter_ttl = seconds(6);
    LockManager& w1_manager = b.manager;
    racing->before_remove = [&w1_manager, &renew, &renewals] {
        Decision renewed = w1_manager.apply("gstg", renew).value();
        renewals += renewed.queue == QueueAct::renew ? 1 : 0;
    };
    Decision d = c.apply_acquire(local("w2"), QueueOrder::oldest_first);
    BOOST_TEST(outcome_name(d.outcome) == "acquired");
    BOOST_TEST(renewals == 1);
    LockRecord r = a.read();
    BOOST_TEST(r.holder->id == "w2");
    const Waiter* w1 = r.find_waiter("w1");
    BOOST_REQUIRE(w1 != nullptr);
    BOOST_TEST(w1->seq == number);
    BOOST_TEST((w1->last_seen == k_t0 + seconds(6)));
    BOOST_TEST(c.log.str().find("w1 renewed its place in the queue") != std::string::npos);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(status_reads_the_queue_in_number_order, F, test::StoreFactories) {
    F f;
    Party<F> a(f, k_t0);
    (void)a.manager.acquire(spec(), local("h"));
    for (const char* id : {"zed", "amy", "kim"}) {
        (void)a.apply_acquire(local(id), QueueOrder::oldest_first);
    }
    LockRecord r = f.make()->read("gstg").value().record;
    BOOST_REQUIRE(r.waiters.size() == 3u);
    BOOST_TEST(r.waiters[0].who.id == "zed");
    BOOST_TEST(r.waiters[1].who.id == "amy");
    BOOST_TEST(r.waiters[2].who.id == "kim");
    BOOST_TEST(f.make()->read_record("gstg").value().record.waiters.empty());
}

BOOST_AUTO_TEST_SUITE_END()
