// Given a LockManager over the memory store and a FakeClock, then a waiter prints
// who holds the lock at most every 30 s, leaves the queue on SIGTERM, survives
// injected Conflicts by re-reading, and the Heartbeat renews while a lock is held.
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

BOOST_AUTO_TEST_SUITE_END()
