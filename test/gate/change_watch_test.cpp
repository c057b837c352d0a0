// ChangeWatch over FakeKubeApi (a watch that stays open): its cache of the Job says
// over which resourceVersions the Job held still (a version the caller calls the same
// is no change), and the caller's own write updates the cache without waking a wait.
// On fake time (FakeClock::Sleep::driven): the caller's deadlines and the watch
// threads' back-off both wait for the test to move the clock; only `eventually`, a
// bound on how long a test waits for a watch thread, is real time.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <future>
#include <thread>

#include "runner/gating/change_watch.h"
#include "test/fakes/fake_clock.h"
#include "test/fakes/fake_kube_api.h"
#include "test/fakes/shared_kube_api.h"

using namespace envgate;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

using SharedApi = test::SharedKubeApi;

test::FakeClock driven_clock() {
    return test::FakeClock(TimePoint(std::chrono::seconds(1'800'000'000)),
                           test::FakeClock::Sleep::driven);
}

std::uint64_t rv(const json& object) {
    return std::stoull(object["metadata"]["resourceVersion"].get<std::string>());
}

// A Job "mig" and its pod "mig-a" (with `pod_status`) in one fake, both watched by one
// ChangeWatch, listed; the watches end with it.
struct WatchedJobAndPod {
    test::FakeKubeApi fake;
    std::atomic<bool> server_ends{false};
    std::pair<kube::ResourceRef, kube::ResourceRef> refs{kube::jobs("gitlab", "mig"),
                                                         kube::pods("gitlab", "mig-a")};
    test::FakeClock clock = driven_clock();
    std::unique_ptr<ChangeWatch> watch;

    explicit WatchedJobAndPod(json pod_status) {
        fake.set_watch_idle_hook([this] {
            std::this_thread::sleep_for(1ms);
            return !server_ends.load();
        });
        fake.seed(refs.first, {{"apiVersion", "batch/v1"},
                               {"kind", "Job"},
                               {"metadata", {{"name", "mig"}, {"namespace", "gitlab"}}},
                               {"status", {{"active", 1}}}});
        fake.seed(refs.second, {{"apiVersion", "v1"},
                                {"kind", "Pod"},
                                {"metadata", {{"name", "mig-a"}, {"namespace", "gitlab"}}},
                                {"status", std::move(pod_status)}});
        watch = std::make_unique<ChangeWatch>(
            [this]() -> Result<std::unique_ptr<kube::KubeApi>> {
                return std::unique_ptr<kube::KubeApi>(std::make_unique<SharedApi>(fake));
            },
            clock, kube::ReflectorOptions{});
        BOOST_REQUIRE(
            watch->start(kube::jobs("gitlab"), {"", "metadata.name=mig"}, clock.now() + 1h)
                .is_ok());
        BOOST_REQUIRE(watch->start(kube::pods("gitlab"), {"", ""}, clock.now() + 1h).is_ok());
        BOOST_REQUIRE(watch->wait_listed(clock.now() + 30s, [] { return 0; }));
    }
    ~WatchedJobAndPod() {
        server_ends = true;
        clock.release();  // a watch thread may be in its re-watch pause
        watch.reset();
    }
};

// Polls `ok` until it holds, at most 30 s (the watch thread delivers asynchronously).
template <typename F>
bool eventually(F ok) {
    const auto until = std::chrono::steady_clock::now() + 30s;
    while (!ok()) {
        if (std::chrono::steady_clock::now() > until) {
            return false;
        }
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(change_watch_suite)

BOOST_AUTO_TEST_CASE(the_cache_tracks_the_range_and_ignores_the_callers_own_write) {
    test::FakeKubeApi fake;
    std::atomic<bool> server_ends{false};
    fake.set_watch_idle_hook([&] {
        std::this_thread::sleep_for(1ms);
        return !server_ends.load();
    });
    const auto ref = kube::jobs("gitlab", "mig");
    json job = fake.seed(ref, {{"apiVersion", "batch/v1"},
                               {"kind", "Job"},
                               {"metadata", {{"name", "mig"}, {"namespace", "gitlab"}}},
                               {"status", {{"active", 1}}}});
    test::FakeClock clock = driven_clock();
    {
        ChangeWatch watch(
            [&]() -> Result<std::unique_ptr<kube::KubeApi>> {
                return std::unique_ptr<kube::KubeApi>(std::make_unique<SharedApi>(fake));
            },
            clock, {});
        // Same: only the tallies differ (what the gate's counts_alike says of a Job).
        auto same = [](const json& a, const json& b) {
            return a["status"].value("failed", 0) == b["status"].value("failed", 0);
        };
        BOOST_REQUIRE(watch
                          .start(kube::jobs("gitlab"), {"", "metadata.name=mig"}, clock.now() + 1h,
                                 ChangeWatch::KeepDeleted::no, same)
                          .is_ok());
        BOOST_REQUIRE(watch.wait_listed(clock.now() + 30s, [] { return 0; }));
        BOOST_TEST(watch.wait(clock.now(), [] { return 0; }));  // the first pass
        CacheView listed = watch.view(0);
        BOOST_TEST(listed.usable);
        BOOST_TEST(listed.objects.size() == 1u);
        BOOST_TEST(listed.valid_from == listed.progress);  // a list holds from its RV

        // The caller's own write: cached, but no wake.
        json patched = *fake.patch(ref, {{"metadata", {{"annotations", {{"k", "v"}}}}}});
        watch.ignore_version(patched["metadata"]["resourceVersion"]);
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(patched); }));
        BOOST_TEST(!watch.wait(clock.now(), [] { return 0; }));
        BOOST_TEST(watch.view(0).objects.at(0)["metadata"]["annotations"]["k"] == "v");

        // The same when its event came before ignore_version() named it.
        json again = *fake.patch(ref, {{"metadata", {{"annotations", {{"k", "w"}}}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(again); }));
        watch.ignore_version(again["metadata"]["resourceVersion"]);
        BOOST_TEST(!watch.wait(clock.now(), [] { return 0; }));

        // A tally-only write wakes the wait, but the Job held still across it.
        fake.mutate(ref, [](json& j) { j["status"]["ready"] = 1; });
        BOOST_TEST(watch.wait(clock.now() + 30s, [] { return 0; }));
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress > rv(again); }));
        BOOST_TEST(watch.view(0).valid_from == listed.valid_from);

        // A counted change moves the start of the range to its version.
        json failed = *fake.patch(ref, {{"status", {{"failed", 1}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(failed); }));
        BOOST_TEST(watch.view(0).valid_from == rv(failed));
        server_ends = true;
        clock.release();
    }
}

// Given a Job and its pod watched, each collection's watch ahead of the other in turn,
// then views_at_common shows both as of the lower progress, the other's newer change
// undone (a pod's failure, then the Job's write that answers it), refuses a revision
// below `not_before`, and can take nothing back once the caller asks for too old a one.
BOOST_AUTO_TEST_CASE(the_collections_are_shown_together_as_of_the_revision_both_reached) {
    WatchedJobAndPod both(json{{"phase", "Running"}});
    test::FakeKubeApi& fake = both.fake;
    const auto& [job_ref, pod_ref] = both.refs;
    ChangeWatch& watch = *both.watch;
    {
        const std::uint64_t listed = std::min(watch.view(0).progress, watch.view(1).progress);

        // The pod failed: its watch is ahead, so the pod is shown as it was before.
        json failed = *fake.patch(pod_ref, {{"status", {{"phase", "Failed"}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(1).progress >= rv(failed); }));
        auto at = watch.views_at_common(0);
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == at[1].progress);
        BOOST_TEST(at[1].progress < rv(failed));
        BOOST_TEST(at[1].objects.at(0)["status"]["phase"] == "Running");
        BOOST_TEST(watch.view(1).objects.at(0)["status"]["phase"] == "Failed");
        BOOST_TEST(at[0].settled);
        BOOST_TEST(at[1].settled);

        // The controller answers it with a Job write: the pair at the pod's revision.
        json counted = *fake.patch(job_ref, {{"status", {{"failed", 1}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(counted); }));
        at = watch.views_at_common(rv(failed));
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(failed));
        BOOST_TEST(at[1].objects.at(0)["status"]["phase"] == "Failed");
        BOOST_TEST(!at[0].objects.at(0)["status"].contains("failed"));  // undone
        BOOST_TEST(at[0].valid_from <= rv(failed));

        // Not from before a revision the caller has already acted on.
        BOOST_TEST(watch.views_at_common(rv(failed) + 1).empty());
        BOOST_TEST(listed < rv(failed));

        // Two pod changes before the Job's next write: views_at_next shows each in turn,
        // the Job as it was at each; views_at_common only the newer.
        json restarted = *fake.patch(pod_ref, {{"status", {{"phase", "Running"}}}});
        json again = *fake.patch(pod_ref, {{"status", {{"phase", "Pending"}}}});
        json written = *fake.patch(job_ref, {{"status", {{"failed", 2}}}});
        BOOST_REQUIRE(eventually([&] {
            return watch.view(0).progress >= rv(written) && watch.view(1).progress >= rv(again);
        }));
        at = watch.views_at_next(rv(counted));
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(restarted));
        BOOST_TEST(at[1].objects.at(0)["status"]["phase"] == "Running");
        BOOST_TEST(at[0].objects.at(0)["status"]["failed"] == 1);
        at = watch.views_at_next(rv(restarted));
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(again));
        BOOST_TEST(at[1].objects.at(0)["status"]["phase"] == "Pending");
        BOOST_TEST(at[0].objects.at(0)["status"]["failed"] == 1);
        at = watch.views_at_next(rv(again));  // the Job's write: the newest both reached
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(again));
        BOOST_TEST(watch.views_at_common(rv(counted)).at(0).progress == rv(again));
    }
}

// Given a Job quiet while its pod changed twice (no Job write, no bookmark: the Job's
// watch stays behind), when a read shows the Job as cached at the pods' revision, then
// confirm() moves the Job cache's progress there, and views_at_next shows each pod change
// in turn beside it; a read that shows another version of the Job confirms nothing.
BOOST_AUTO_TEST_CASE(a_read_of_the_unchanged_job_lets_each_pod_change_be_shown_in_turn) {
    WatchedJobAndPod both(json{{"phase", "Running"}, {"restarts", 0}});
    test::FakeKubeApi& fake = both.fake;
    const auto& [job_ref, pod_ref] = both.refs;
    ChangeWatch& watch = *both.watch;
    {
        const std::uint64_t listed = std::max(watch.view(0).progress, watch.view(1).progress);

        json once = *fake.patch(pod_ref, {{"status", {{"restarts", 1}}}});
        json twice = *fake.patch(pod_ref, {{"status", {{"restarts", 2}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(1).progress >= rv(twice); }));
        // The Job's watch is behind both: nothing is known of the Job at either.
        auto at = watch.views_at_next(listed);
        BOOST_TEST((at.empty() || at[0].progress < rv(once)));

        // A read of the Job at another version (it changed since) confirms nothing.
        json job = *fake.get(job_ref);
        json other = job;
        other["metadata"]["resourceVersion"] = std::to_string(rv(twice) + 1);
        BOOST_TEST(!watch.confirm(0, {other}, rv(twice)));
        BOOST_TEST(!watch.confirm(0, {}, rv(twice)));
        BOOST_TEST(watch.view(0).progress < rv(once));

        // The Job as cached: it held still up to the pods' revision.
        BOOST_TEST(watch.confirm(0, {job}, rv(twice)));
        BOOST_TEST(watch.view(0).progress == rv(twice));
        at = watch.views_at_next(listed);
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(once));
        BOOST_TEST(at[1].objects.at(0)["status"]["restarts"] == 1);
        BOOST_TEST(at[0].objects.at(0)["status"]["active"] == 1);
        at = watch.views_at_next(rv(once));
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(twice));
        BOOST_TEST(at[1].objects.at(0)["status"]["restarts"] == 2);

        // Its next write still comes through the watch, after the confirmed revision.
        json written = *fake.patch(job_ref, {{"status", {{"failed", 1}}}});
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(written); }));
        at = watch.views_at_next(rv(twice));
        BOOST_REQUIRE(at.size() == 2u);
        BOOST_TEST(at[0].progress == rv(twice));  // the pods' newest: both reached it
        BOOST_TEST(watch.view(0).objects.at(0)["status"]["failed"] == 1);
    }
}

// Given a watched Job and pod on fake time, when no change comes, then a wait ends when
// the test moves the clock past its deadline, not before, however long that is.
BOOST_AUTO_TEST_CASE(a_wait_ends_when_the_fake_time_passes_its_deadline) {
    WatchedJobAndPod both(json{{"phase", "Running"}});
    ChangeWatch& watch = *both.watch;
    BOOST_REQUIRE(watch.wait(both.clock.now(), [] { return 0; }));  // the first pass
    const TimePoint until = both.clock.now() + 10min;
    auto waited =
        std::async(std::launch::async, [&] { return watch.wait(until, [] { return 0; }); });
    both.clock.advance(10min - 1s);
    BOOST_TEST((waited.wait_for(200ms) == std::future_status::timeout));
    both.clock.advance(1s);
    BOOST_REQUIRE((waited.wait_for(30s) == std::future_status::ready));
    BOOST_TEST(!waited.get());  // timed out: no change came
}

// Given a Job watched on fake time, when its watch fails, then the watch thread backs
// off on the fake clock (a jittered first pause of 1-1.5 s, recorded) and watches again
// only once the test moves the time: a change made meanwhile then reaches the cache and
// wakes a wait.
BOOST_AUTO_TEST_CASE(a_failed_watch_backs_off_on_the_fake_clock) {
    test::FakeKubeApi fake;
    std::atomic<bool> server_ends{false};
    fake.set_watch_idle_hook([&] {
        std::this_thread::sleep_for(1ms);
        return !server_ends.load();
    });
    const auto ref = kube::jobs("gitlab", "mig");
    fake.seed(ref, {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "mig"}, {"namespace", "gitlab"}}},
                    {"status", {{"active", 1}}}});
    test::FakeClock clock = driven_clock();
    {
        ChangeWatch watch(
            [&]() -> Result<std::unique_ptr<kube::KubeApi>> {
                return std::unique_ptr<kube::KubeApi>(std::make_unique<SharedApi>(fake));
            },
            clock, {});
        fake.fail_next(Code::transient, "watch");  // the watch after the first list
        BOOST_REQUIRE(
            watch.start(kube::jobs("gitlab"), {"", "metadata.name=mig"}, clock.now() + 1h).is_ok());
        BOOST_REQUIRE(watch.wait_listed(clock.now() + 1min, [] { return 0; }));
        BOOST_REQUIRE(watch.wait(clock.now(), [] { return 0; }));  // the first pass
        BOOST_REQUIRE(clock.await_sleepers(1, 30s));
        const auto sleeps = clock.sleeps();
        BOOST_REQUIRE(sleeps.size() == 1u);
        BOOST_TEST((sleeps[0] >= 1s && sleeps[0] <= 1500ms));

        json failed = *fake.patch(ref, {{"status", {{"failed", 1}}}});
        BOOST_TEST(!watch.wait(clock.now(), [] { return 0; }));  // not watched: not seen
        BOOST_TEST(watch.view(0).progress < rv(failed));
        clock.advance(1500ms);
        BOOST_TEST(watch.wait(clock.now() + 1h, [] { return 0; }));
        BOOST_REQUIRE(eventually([&] { return watch.view(0).progress >= rv(failed); }));
        BOOST_TEST(watch.view(0).objects.at(0)["status"]["failed"] == 1);
        server_ends = true;
        clock.release();
    }
}

BOOST_AUTO_TEST_SUITE_END()
