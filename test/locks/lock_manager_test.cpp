// Given a LockManager over the memory store and a FakeClock, then a waiter prints
// who holds the lock at most every 30 s, leaves the queue on SIGTERM, survives
// injected Conflicts by re-reading, and the Heartbeat renews while a lock is held.
// Watching (ManagerOptions::watch_store): a wait ends by the next instant a rule is
// due, a change re-reads at once, a failing watch falls back to polling.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <sstream>
#include <thread>

#include "locks/heartbeat.h"
#include "locks/lock_manager.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/memory_lock_store.h"

using namespace envgate;
using namespace envgate::locks;
using namespace std::chrono;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

Holder who(const std::string& id) {
    Holder h;
    h.id = id;
    h.job_url = "https://gitlab.example/jobs/" + id;
    return h;
}

LockSpec spec() {
    LockSpec s;
    s.name = "gstg";
    s.lease_duration = hours(2);
    s.wait_timeout = minutes(2);
    return s;
}

// A memory store that can "watch": `on_wait` decides how each wait ends; by default
// nothing changes and the FakeClock moves by the whole wait.
class WatchingStore : public test::MemoryLockStore {
  public:
    explicit WatchingStore(test::FakeClock& clock) : m_clock(clock) {}
    Result<WaitEnd> wait_for_change(const std::string&, const std::string&, Duration max_wait,
                                    const std::function<bool()>&, const WaitScope& scope) override {
        scopes.push_back(scope);
        waits.push_back(max_wait);
        if (on_wait) {
            return on_wait(max_wait);
        }
        m_clock.advance(max_wait);
        return WaitEnd::timed_out;
    }
    std::vector<Duration> waits;
    std::vector<WaitScope> scopes;
    std::function<Result<WaitEnd>(Duration)> on_wait;

  private:
    test::FakeClock& m_clock;
};

ManagerOptions watching() {
    ManagerOptions o;
    o.watch_store = true;
    o.max_watch = minutes(1);
    return o;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) {
        ++n;
    }
    return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_manager_suite)

BOOST_AUTO_TEST_CASE(waiting_prints_the_holder_every_30_seconds_then_times_out) {
    test::MemoryLockStore store;
    test::FakeClock clock(k_t0);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    LockManager waiter(store, clock, log, nullptr);
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::timed_out));
    // 2 minutes of waiting: lines at 0, 30, 60, 90 s (and 120 s is the deadline).
    BOOST_TEST(count(log.str(), "waiting for lock gstg: held by p1") == 4u);
    BOOST_TEST(log.str().find("https://gitlab.example/jobs/p1") != std::string::npos);
    BOOST_TEST(log.str().find("position 1 of 1") != std::string::npos);
    BOOST_TEST(log.str().find("not obtained within 2m0s") != std::string::npos);
    BOOST_TEST(store.read("gstg")->record.waiters.empty());
}

// A failed lock's failure can be a long message: the waiting lines, one every 30 s
// for as long as the wait lasts, print it once (again only when it changes) and the
// unlock command each time; the give-up prints both whole as the last word.
BOOST_AUTO_TEST_CASE(waiting_on_a_failed_lock_prints_its_failure_once) {
    test::MemoryLockStore store;
    test::FakeClock clock(k_t0);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    Failure f;
    f.step = "post-migrations";
    f.reason = "MigrationsJobFailed";
    f.message = std::string(400, 'x');
    f.at = k_t0;
    BOOST_TEST_REQUIRE(holder.fail(spec(), who("p1"), f).is_ok());
    std::ostringstream waiting;
    LockManager waiter(store, clock, waiting, nullptr);
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::timed_out));
    const std::string out = waiting.str();
    BOOST_TEST(count(out, "waiting for lock gstg: failed, held by p1") == 4u);
    // Once in the first waiting line, once when it gives up.
    BOOST_TEST(count(out, f.message) == 2u, out);
    BOOST_TEST(count(out, "  failure: the failure above\n  to unlock: envgate unlock gstg") == 3u,
               out);
    BOOST_TEST(count(out, "to unlock: ") == 5u);
}

BOOST_AUTO_TEST_CASE(a_signal_while_waiting_leaves_the_queue) {
    test::MemoryLockStore store;
    test::FakeClock clock(k_t0);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    int polls = 0;
    LockManager waiter(store, clock, log, [&] { return ++polls > 3 ? SIGTERM : 0; });
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::cancelled));
    BOOST_TEST(got->signal == SIGTERM);
    BOOST_TEST(store.read("gstg")->record.waiters.empty());
    BOOST_TEST(store.read("gstg")->record.holder->id == "p1");
}

BOOST_AUTO_TEST_CASE(conflicts_are_re_read_and_re_decided) {
    test::MemoryLockStore store;
    test::FakeClock clock(k_t0);
    std::ostringstream log;
    LockManager manager(store, clock, log, nullptr);
    store.fail_next(Code::conflict);
    store.fail_next(Code::conflict);
    auto got = manager.acquire(spec(), who("p1"));
    BOOST_TEST((got->end == AcquireEnd::acquired));
    store.fail_next(Code::io);
    auto failed = manager.release("gstg", who("p1"));
    BOOST_TEST(failed.status().code() == Code::io);
    std::size_t writes = 0;
    for (const auto& c : store.calls()) {
        writes += c.starts_with("write") ? 1 : 0;
    }
    BOOST_TEST(writes == 4u);  // 2 conflicts + 1 success + the io failure
}

BOOST_AUTO_TEST_CASE(a_watched_wait_ends_when_the_holder_goes_stale) {
    test::FakeClock clock(k_t0);
    WatchingStore store(clock);
    std::ostringstream log;
    LockSpec s = spec();
    s.lease_duration = seconds(10);  // the holder never renews
    s.waiter_ttl = hours(1);
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(s, who("p1"));
    LockManager waiter(store, clock, log, nullptr, watching());
    auto got = waiter.acquire(s, who("p2"));
    BOOST_TEST((got->end == AcquireEnd::timed_out));  // failed (HolderVanished) until unlocked
    BOOST_REQUIRE(store.read("gstg")->record.failure.has_value());
    // The first wait ends exactly when a whole lease passed without a renewal seen.
    BOOST_TEST((store.read("gstg")->record.failure->at == k_t0 + seconds(10)));
    BOOST_TEST((store.waits.front() == seconds(10)));
    for (Duration w : store.waits) {
        BOOST_TEST((w > Duration::zero() && w <= minutes(1)));
    }
    // Then the "still waiting" lines every 30 s and the timeout bound the waits.
    BOOST_TEST(count(log.str(), "waiting for lock gstg") == 4u);
    BOOST_TEST(clock.sleeps().empty());  // every wait was in the store, none on the clock
}

BOOST_AUTO_TEST_CASE(a_change_seen_by_the_watch_is_read_at_once) {
    test::FakeClock clock(k_t0);
    WatchingStore store(clock);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    store.on_wait = [&](Duration) -> Result<WaitEnd> {
        clock.advance(milliseconds(3));
        (void)holder.release("gstg", who("p1"));
        return WaitEnd::changed;
    };
    LockManager waiter(store, clock, log, nullptr, watching());
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::acquired));
    BOOST_TEST(store.waits.size() == 1u);
    BOOST_TEST(clock.sleeps().empty());
    BOOST_TEST((clock.now() == k_t0 + milliseconds(3)));
}

BOOST_AUTO_TEST_CASE(a_failing_watch_falls_back_to_polling_and_says_so_once) {
    test::FakeClock clock(k_t0);
    WatchingStore store(clock);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    store.on_wait = [](Duration) -> Result<WaitEnd> {
        return Status(Code::forbidden, "cannot watch leases");
    };
    ManagerOptions o = watching();
    o.poll_interval = seconds(1);
    LockManager waiter(store, clock, log, nullptr, o);
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::timed_out));
    BOOST_TEST(count(log.str(), "cannot watch for changes (cannot watch leases)") == 1u);
    BOOST_TEST(clock.sleeps().size() == 120u);  // 2 minutes of 1 s polls
}

BOOST_AUTO_TEST_CASE(a_signal_during_a_watched_wait_leaves_the_queue) {
    test::FakeClock clock(k_t0);
    WatchingStore store(clock);
    std::ostringstream log;
    LockManager holder(store, clock, log, nullptr);
    (void)holder.acquire(spec(), who("p1"));
    int signal = 0;
    store.on_wait = [&](Duration) -> Result<WaitEnd> {
        signal = SIGTERM;  // poll(2) returns EINTR: the wait ends without a change
        return WaitEnd::timed_out;
    };
    LockManager waiter(
        store, clock, log, [&] { return signal; }, watching());
    auto got = waiter.acquire(spec(), who("p2"));
    BOOST_TEST((got->end == AcquireEnd::cancelled));
    BOOST_TEST(store.waits.size() == 1u);
    BOOST_TEST(clock.sleeps().empty());  // no poll sleep once a signal is pending
    BOOST_TEST(store.read("gstg")->record.waiters.empty());
}

BOOST_AUTO_TEST_CASE(heartbeat_renews_until_stopped_and_notices_a_lost_lock) {
    std::atomic<int> renewals{0};
    {
        Heartbeat beat(milliseconds(1), [&] { return ++renewals < 5; });
        auto deadline = steady_clock::now() + seconds(30);
        while (!beat.lost() && steady_clock::now() < deadline) {
            std::this_thread::sleep_for(milliseconds(1));
        }
        BOOST_TEST(beat.lost());
    }
    BOOST_TEST(renewals.load() == 5);
}

// A FIFO waiter is woken by the live waiter just ahead of it (or, when first, by the
// lock record); any other order, a legacy entry or a waiter without a number yet, by
// every change.
BOOST_AUTO_TEST_CASE(a_fifo_waiter_waits_on_the_live_waiter_just_ahead_of_it) {
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::held;
    r.holder = who("p1");
    for (int i = 2; i <= 5; ++i) {
        Waiter w(who("p" + std::to_string(i)), k_t0, k_t0, minutes(1));
        w.seq = 7 - i;  // p5 has number 2, ..., p2 number 5
        r.waiters.push_back(w);
    }
    Decision d;
    WaitScope first = wait_scope(spec(), who("p5"), r, d);
    BOOST_TEST(first.narrow);
    BOOST_TEST(first.self == "p5");
    BOOST_TEST(first.predecessor == "");
    BOOST_TEST(wait_scope(spec(), who("p3"), r, d).predecessor == "p4");
    d.dead = {{"p4", "7"}};  // seen unchanged for its TTL: skipped
    BOOST_TEST(wait_scope(spec(), who("p3"), r, d).predecessor == "p5");
    BOOST_TEST(!wait_scope(spec(), who("p9"), r, d).narrow);  // not in the queue
    LockSpec newest = spec();
    newest.order = QueueOrder::newest_first;
    BOOST_TEST(!wait_scope(newest, who("p3"), r, d).narrow);
    r.waiters[0].seq = 0;  // p2 is joining
    BOOST_TEST(!wait_scope(spec(), who("p2"), r, d).narrow);
    r.waiters[3].legacy = true;  // p5
    BOOST_TEST(!wait_scope(spec(), who("p3"), r, d).narrow);
}

BOOST_AUTO_TEST_SUITE_END()
