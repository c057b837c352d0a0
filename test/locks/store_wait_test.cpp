// LockStore::wait_for_change on the two stores. File store (inotify): a write by
// another store object wakes a waiter long before its max wait, a write that landed
// before the wait returns at once, writes of another lock do not wake it. Lease store
// (over FakeKubeApi): one long-lived watch of the one Lease from the version read,
// serving every later wait of the process, its event serving the next read; 410 Gone
// is a change; an interrupted wait ends soon. And a
// LockManager on a real clock hands the lock over through the watch, not a poll.
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "locks/kubernetes_lease_store.h"
#include "locks/lock_manager.h"
#include "runner/base/real_clock.h"
#include "test/locks/lease_store_factory.h"
#include "test/locks/store_factories.h"

using namespace envgate;
using namespace envgate::locks;
using namespace std::chrono;

namespace {

const TimePoint k_t0 = *parse_rfc3339("2026-05-01T10:00:00Z");

LockRecord held_by(const std::string& id, int renewal = 0) {
    LockRecord r;
    r.name = "gstg";
    r.state = LockState::held;
    r.holder = Holder{};
    r.holder->id = id;
    r.acquired_at = k_t0;
    r.renewed_at = k_t0 + seconds(renewal);
    r.lease_duration = seconds(60);
    return r;
}

std::string write_ok(LockStore& store, const LockRecord& r, const std::string& version) {
    auto written = store.write(r.name, r, version);
    BOOST_REQUIRE(written.is_ok());
    return *written;
}

struct Timed {
    Result<WaitEnd> end = WaitEnd::unwatched;
    Duration took{};
};

Timed timed_wait(LockStore& store, const std::string& name, const std::string& version,
                 Duration max_wait) {
    auto start = steady_clock::now();
    Timed t;
    t.end = store.wait_for_change(name, version, max_wait, {}, {});
    t.took = duration_cast<Duration>(steady_clock::now() - start);
    return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lock_store_wait_suite)

BOOST_AUTO_TEST_CASE(file_store_a_write_by_another_store_wakes_the_waiter) {
    test::FileStoreFactory f;
    auto a = f.make();
    auto b = f.make();
    std::string v1 = write_ok(*b, held_by("p1"), "");
    auto waiting =
        std::async(std::launch::async, [&] { return timed_wait(*a, "gstg", v1, minutes(1)); });
    // Give the waiter time to arm its watch (either way the write must wake it).
    BOOST_TEST((waiting.wait_for(milliseconds(200)) == std::future_status::timeout));
    (void)write_ok(*b, held_by("p1", 1), v1);
    Timed t = waiting.get();
    BOOST_REQUIRE(t.end.is_ok());
    BOOST_TEST((*t.end == WaitEnd::changed));
    BOOST_TEST((t.took < seconds(30)));  // woken by the write, not by the 1 min bound
}

BOOST_AUTO_TEST_CASE(file_store_a_write_before_the_wait_returns_at_once) {
    test::FileStoreFactory f;
    auto a = f.make();
    std::string v1 = write_ok(*a, held_by("p1"), "");
    (void)write_ok(*f.make(), held_by("p1", 1), v1);
    Timed t = timed_wait(*a, "gstg", v1, minutes(1));
    BOOST_TEST((*t.end == WaitEnd::changed));
    BOOST_TEST((t.took < seconds(30)));
    BOOST_TEST((*timed_wait(*a, "gstg", "", minutes(1)).end == WaitEnd::changed));
}

BOOST_AUTO_TEST_CASE(file_store_other_locks_and_temp_files_do_not_wake_the_waiter) {
    test::FileStoreFactory f;
    auto a = f.make();
    std::string v1 = write_ok(*a, held_by("p1"), "");
    LockRecord other = held_by("p9");
    other.name = "gprd";
    std::atomic<bool> done{false};
    std::thread writer([&] {
        std::string v;
        while (!done) {  // another lock keeps changing (and its .lock and temp files)
            v = write_ok(*f.make(), other, v);
            std::this_thread::sleep_for(milliseconds(20));
        }
    });
    Timed t = timed_wait(*a, "gstg", v1, milliseconds(300));
    done = true;
    writer.join();
    BOOST_TEST((*t.end == WaitEnd::timed_out));
    BOOST_TEST((t.took >= milliseconds(300)));
}

// A narrow wait (a FIFO waiter) sleeps through the renewals of waiters behind it, its
// own writes and, while someone is ahead, the lock record; its predecessor's write and
// its own record's removal wake it.
BOOST_AUTO_TEST_CASE(file_store_a_narrow_wait_wakes_for_its_predecessor_only) {
    test::FileStoreFactory f;
    auto a = f.make();
    auto b = f.make();
    std::string v1 = write_ok(*b, held_by("p1"), "");
    std::map<std::string, std::string> versions;
    auto queue = [&](const std::string& id, std::int64_t seq) {
        Waiter w(Holder{}, k_t0, k_t0, minutes(1));
        w.who.id = id;
        w.seq = seq;
        auto written = b->write_waiter("gstg", w, versions[id]);
        BOOST_REQUIRE(written.is_ok());
        versions[id] = *written;
    };
    queue("p2", 1);
    queue("p3", 2);
    queue("p4", 3);
    BOOST_REQUIRE(a->read("gstg").is_ok());
    WaitScope scope{true, "p3", "p2"};
    auto wait = [&](Duration max_wait) {
        auto start = steady_clock::now();
        auto end = a->wait_for_change("gstg", v1, max_wait, {}, scope);
        BOOST_REQUIRE(end.is_ok());
        return std::pair{*end, steady_clock::now() - start};
    };
    auto during_wait = [&](const std::function<void()>& act) {
        auto waiting = std::async(std::launch::async, [&] { return wait(seconds(2)); });
        std::this_thread::sleep_for(milliseconds(100));
        act();
        return waiting.get();
    };
    // Behind it, itself, a newcomer, and the record while p2 is ahead: it sleeps on.
    auto slept = during_wait([&] {
        queue("p4", 3);
        queue("p3", 2);
        queue("p5", 4);
        v1 = write_ok(*b, held_by("p1", 1), v1);
    });
    BOOST_TEST((slept.first == WaitEnd::timed_out));
    BOOST_TEST((slept.second >= seconds(2)));
    auto woken = during_wait([&] { queue("p2", 1); });
    BOOST_TEST((woken.first == WaitEnd::changed));
    BOOST_TEST((woken.second < seconds(2)));
    woken = during_wait([&] { BOOST_REQUIRE(b->remove_waiter("gstg", "p3").is_ok()); });
    BOOST_TEST((woken.first == WaitEnd::changed));
    BOOST_TEST((woken.second < seconds(2)));
    // First in line: the record wakes it.
    scope = WaitScope{true, "p3", ""};
    BOOST_REQUIRE(a->read("gstg").is_ok());
    woken = during_wait([&] { v1 = write_ok(*b, held_by("p1", 2), v1); });
    BOOST_TEST((woken.first == WaitEnd::changed));
    BOOST_TEST((woken.second < seconds(2)));
}

BOOST_AUTO_TEST_CASE(file_store_without_a_directory_is_not_watched) {
    test::FileStoreFactory f;
    auto a = f.make();  // nothing written yet: no directory to watch
    BOOST_TEST((*a->wait_for_change("gstg", "", seconds(1), {}, {}) == WaitEnd::unwatched));
    BOOST_TEST(a->wait_for_change("GSTG", "", seconds(1), {}, {}).status().code() == Code::invalid);
}

BOOST_AUTO_TEST_CASE(lease_store_lists_and_watches_its_lock_and_queue_and_reads_from_them) {
    test::LeaseStoreFactory f;
    auto a = f.make();
    auto b = f.make();
    std::string v1 = write_ok(*b, held_by("p1"), "");
    std::atomic<bool> written{false};
    std::atomic<bool> server_ends{false};
    f.api->set_watch_idle_hook([&] {  // the fake's watch stays open, as a server's
        if (!written.exchange(true)) {
            (void)write_ok(*b, held_by("p1", 1), v1);
        }
        std::this_thread::sleep_for(milliseconds(2));
        return !server_ends.load();
    });
    auto t = timed_wait(*a, "gstg", v1, seconds(30));
    BOOST_TEST((*t.end == WaitEnd::changed));
    auto it = std::find_if(f.api->calls.rbegin(), f.api->calls.rend(),
                           [](const test::FakeCall& c) { return c.verb == "watch"; });
    BOOST_REQUIRE((it != f.api->calls.rend()));
    const test::FakeCall& watch = *it;
    // One list, then one watch from it, of the lock's Leases (its own and its waiters').
    BOOST_TEST(watch.label_selector == "envgate.dev/lock-name=gstg");
    BOOST_TEST((watch.ref == kube::leases(test::k_lease_namespace)));
    auto list = std::find_if(f.api->calls.begin(), f.api->calls.end(),
                             [](const test::FakeCall& c) { return c.verb == "list"; });
    BOOST_REQUIRE((list != f.api->calls.end()));
    BOOST_TEST(list->label_selector == "envgate.dev/lock-name=gstg");
    // Reads come from what the watch delivered: no GET, no list.
    auto calls = f.api->calls_made.size();
    BOOST_TEST((a->read("gstg")->record.renewed_at == k_t0 + seconds(1)));
    BOOST_TEST(a->read("gstg").is_ok());
    BOOST_TEST(f.api->calls_made.size() == calls);
    server_ends = true;  // then ~KubernetesLeaseStore joins the watch
}

BOOST_AUTO_TEST_CASE(lease_store_waits_end_on_the_server_or_are_left_to_polling) {
    test::LeaseStoreFactory f;
    auto a = f.make();
    std::string v1 = write_ok(*a, held_by("p1"), "");
    // The fake ends a watch with nothing to deliver, as the server after timeoutSeconds:
    // the Lease is unchanged, the next read needs no GET.
    BOOST_TEST((*a->wait_for_change("gstg", v1, seconds(1), {}, {}) == WaitEnd::timed_out));
    auto gets = f.api->calls_made.size();
    BOOST_TEST(a->read("gstg")->version == v1);
    BOOST_TEST(f.api->calls_made.size() == gets);
    // A sub-second wait waits on the same watch.
    BOOST_TEST((*a->wait_for_change("gstg", v1, milliseconds(300), {}, {}) == WaitEnd::timed_out));
    std::string v2 = write_ok(*a, held_by("p1", 1), v1);
    f.api->compact();  // v1 is too old to watch from: 410 Gone, re-read
    auto c = f.make();
    BOOST_TEST((*c->wait_for_change("gstg", v1, seconds(5), {}, {}) == WaitEnd::changed));
    c.reset();  // its watch ends: the failure below is a's to meet
    // The watch's next request is refused: the wait says why.
    f.api->fail_next(Code::forbidden, "watch");
    BOOST_TEST(a->wait_for_change("gstg", v2, seconds(5), {}, {}).status().code() ==
               Code::forbidden);
}

BOOST_AUTO_TEST_CASE(lease_store_one_watch_serves_every_wait_of_the_process) {
    // Given: a watch that stays open like a server's, and five waits that time out.
    test::LeaseStoreFactory f;
    std::atomic<bool> server_ends{false};
    f.api->set_watch_idle_hook([&] {
        std::this_thread::sleep_for(milliseconds(2));
        return !server_ends.load();
    });
    auto a = f.make();
    auto b = f.make();
    std::string v1 = write_ok(*b, held_by("p1"), "");
    for (int i = 0; i < 5; ++i) {
        BOOST_TEST(
            (*a->wait_for_change("gstg", v1, milliseconds(200), {}, {}) == WaitEnd::timed_out));
    }
    // When: another process writes; then the sixth wait sees it on the same watch.
    std::string v2 = write_ok(*b, held_by("p1", 1), v1);
    BOOST_TEST((*a->wait_for_change("gstg", v1, seconds(30), {}, {}) == WaitEnd::changed));
    BOOST_TEST(a->read("gstg")->version == v2);
    // And a wait from the version it now knows does not wake on that old write.
    BOOST_TEST((*a->wait_for_change("gstg", v2, milliseconds(200), {}, {}) == WaitEnd::timed_out));
    auto watches = std::count_if(f.api->calls.begin(), f.api->calls.end(),
                                 [](const test::FakeCall& c) { return c.verb == "watch"; });
    BOOST_TEST(watches == 1);
    BOOST_TEST(dynamic_cast<KubernetesLeaseStore&>(*a).watches_opened() == 1);
    server_ends = true;
}

BOOST_AUTO_TEST_CASE(an_interrupted_wait_ends_soon_on_both_stores) {
    test::FileStoreFactory files;
    auto f = files.make();
    std::string fv = write_ok(*f, held_by("p1"), "");
    int asked = 0;
    auto after_two = [&] { return ++asked > 2; };
    auto start = steady_clock::now();
    BOOST_TEST((*f->wait_for_change("gstg", fv, minutes(1), after_two, {}) == WaitEnd::timed_out));
    BOOST_TEST((steady_clock::now() - start < seconds(30)));

    test::LeaseStoreFactory leases;
    std::atomic<bool> server_ends{false};
    leases.api->set_watch_idle_hook([&] {  // a watch that stays open, like a server's
        std::this_thread::sleep_for(milliseconds(2));
        return !server_ends.load();
    });
    auto l = leases.make();
    std::string lv = write_ok(*l, held_by("p1"), "");
    asked = 0;
    start = steady_clock::now();
    BOOST_TEST((*l->wait_for_change("gstg", lv, minutes(1), after_two, {}) == WaitEnd::timed_out));
    BOOST_TEST((steady_clock::now() - start < seconds(30)));
    BOOST_TEST(l->read("gstg").is_ok());  // the store is usable while that watch runs on
    server_ends = true;                   // then it ends; ~KubernetesLeaseStore joins it
}

BOOST_AUTO_TEST_CASE(a_manager_on_a_real_clock_is_handed_the_lock_by_the_watch) {
    test::FileStoreFactory f;
    auto store_a = f.make();
    auto store_b = f.make();
    RealClock clock;
    std::ostringstream log_a, log_b;
    LockSpec s;
    s.name = "gstg";
    s.wait_timeout = minutes(2);
    ManagerOptions o;
    o.watch_store = true;
    o.max_watch = minutes(1);
    o.poll_interval = minutes(1);  // a poll would come far too late for the check below
    LockManager holder(*store_a, clock, log_a, nullptr, o);
    Holder p1, p2;
    p1.id = "p1";
    p2.id = "p2";
    BOOST_REQUIRE((holder.acquire(s, p1)->end == AcquireEnd::acquired));
    LockManager waiter(*store_b, clock, log_b, nullptr, o);
    auto waiting = std::async(std::launch::async, [&] { return waiter.acquire(s, p2); });
    auto queued = steady_clock::now() + seconds(30);  // wait until p2 is in the queue
    while (store_a->read("gstg")->record.waiters.empty() && steady_clock::now() < queued) {
        std::this_thread::sleep_for(milliseconds(5));
    }
    auto released = steady_clock::now();
    BOOST_REQUIRE(holder.release("gstg", p1).is_ok());
    auto got = waiting.get();
    BOOST_TEST((got->end == AcquireEnd::acquired));
    BOOST_TEST((steady_clock::now() - released < seconds(30)));
}

BOOST_AUTO_TEST_SUITE_END()
