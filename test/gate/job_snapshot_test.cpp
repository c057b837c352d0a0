// Given a Job controller that writes the Job around the list of its pods, then the
// gate's snapshot (list, then GET) stands when the Job is no newer than the list's
// revision, or else re-reads until the Job held still across one list, so a failed pod
// is counted exactly once; a Job that never holds still is given up on after
// k_max_snapshot_rounds lists, a write of only the pod tallies or annotations does not
// count as a change, and a Job deleted meanwhile reads as gone. Beside the pods a
// watch cached, one GET settles it when the Job is no newer than the cached pods.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <functional>

#include "gates/decode_json.h"
#include "gates/evaluate.h"
#include "runner/gating/job_snapshot.h"
#include "test/fakes/fake_kube_api.h"

using namespace envgate;
using nlohmann::json;

namespace {

// A FakeKubeApi whose pod lists run `during_list` first: what the controller wrote
// while the list was in flight (the list, served after those writes, shows them), and
// `after_list` once the list was served: writes between the list and the next read.
class RacingApi : public test::FakeKubeApi {
  public:
    std::function<void(int)> during_list = [](int) {};
    std::function<void(int)> after_list = [](int) {};
    int lists = 0;

    Result<kube::ObjectList> list(const kube::ResourceRef& collection,
                                  const kube::ListOptions& options) override {
        during_list(++lists);
        auto served = FakeKubeApi::list(collection, options);
        after_list(lists);
        return served;
    }
};

const JobIdentity k_id{"mig", "gitlab", ""};

json job_object() {
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", "mig"}, {"namespace", "gitlab"}}},
            {"spec",
             {{"backoffLimit", 6},
              {"selector", {{"matchLabels", {{"batch.kubernetes.io/controller-uid", "j"}}}}},
              {"template", {{"spec", {{"restartPolicy", "Never"}}}}}}},
            {"status", {{"active", 1}}}};
}

json failed_pod() {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", "mig-a"},
              {"namespace", "gitlab"},
              {"uid", "pod-a"},
              {"labels", {{"batch.kubernetes.io/controller-uid", "j"}}},
              {"finalizers", {"batch.kubernetes.io/job-tracking"}}}},
            {"status",
             {{"phase", "Failed"},
              {"containerStatuses",
               {{{"name", "migrations"},
                 {"restartCount", 0},
                 {"state", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}}}}}}}};
}

struct Seeded {
    RacingApi api;
    JobIdentity id = k_id;
    Seeded() {
        id.uid = api.seed(kube::jobs("gitlab", "mig"), job_object())["metadata"]["uid"];
        api.seed(kube::pods("gitlab", "mig-a"), failed_pod());
    }
    // The controller's three writes for one failed pod (tracking_utils / syncJob order).
    void count_failed_pod() {
        api.mutate(kube::jobs("gitlab", "mig"), [](json& j) {
            j["status"]["uncountedTerminatedPods"] = {{"failed", {"pod-a"}}};
        });
        api.mutate(kube::pods("gitlab", "mig-a"),
                   [](json& p) { p["metadata"]["finalizers"] = json::array(); });
        api.mutate(kube::jobs("gitlab", "mig"), [](json& j) {
            j["status"]["failed"] = 1;
            j["status"]["uncountedTerminatedPods"] = json::object();
        });
    }
};

int failed_pods(const JobSnapshot& snap) {
    auto job = gates::decode_job_json(*snap.job, "job");
    std::vector<gates::Pod> pods;
    for (const auto& p : snap.pods) {
        pods.push_back(*gates::decode_pod_json(p, "pod"));
    }
    return gates::evaluate(gates::Gate::pre_migrations, *job, pods, {}, TimePoint{})
        .counts.failed_pods;
}

// `collection` as its watch would cache it now: every object as stored, settled at
// the store's current revision. Records no call.
CacheView cached(RacingApi& api, const kube::ResourceRef& collection) {
    auto listed = api.FakeKubeApi::list(collection, {"", ""});
    api.calls_made.clear();
    CacheView view;
    view.usable = true;
    view.settled = true;
    view.progress = std::stoull(listed->resource_version);
    view.objects = listed->items;
    return view;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(job_snapshot_suite)

// Given the pods are the newest change the caches saw (the Job last written before),
// then one GET settles the pass: the Job read now was the same at the pods' revision.
BOOST_AUTO_TEST_CASE(a_job_no_newer_than_the_cached_pods_takes_one_get) {
    Seeded s;
    CacheView pods = cached(s.api, kube::pods("gitlab"));
    CacheView jobs = cached(s.api, kube::jobs("gitlab"));
    auto snap = read_job_beside_pods(s.api, s.id, "", jobs, pods);
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(s.api.calls_made == std::vector<std::string>{"get jobs/mig"},
               boost::test_tools::per_element());
    BOOST_TEST(snap->pods == pods.objects, boost::test_tools::per_element());
    BOOST_TEST(failed_pods(*snap) == 1);
}

// Given the controller counts the failed pod after the pods were cached (the cache
// shows it with its finalizer, the Job read now counts it too: a pair that counts it
// twice), then the GET is newer than the pods and the snapshot lists them again.
BOOST_AUTO_TEST_CASE(a_job_written_after_the_cached_pods_is_listed_again) {
    Seeded s;
    CacheView pods = cached(s.api, kube::pods("gitlab"));
    CacheView jobs = cached(s.api, kube::jobs("gitlab"));
    s.count_failed_pod();
    auto snap = read_job_beside_pods(s.api, s.id, "", jobs, pods);
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(
        s.api.calls_made == (std::vector<std::string>{"get jobs/mig", "list pods", "get jobs/mig"}),
        boost::test_tools::per_element());
    BOOST_TEST(failed_pods(*snap) == 1);
    BOOST_TEST(failed_pods(JobSnapshot{snap->job, pods.objects, true, 0}) == 2);
}

// Given the cached Job is newer than the cached pods (the controller wrote it since),
// then one list settles it when it holds the cached pods as they were: no pod changed
// from the pods' revision to the list's, so the cached Job and the pods are the store
// as of the Job's revision. A pod changed since, or a pods cache not settled (a re-list
// half taken), takes a GET after the list.
BOOST_AUTO_TEST_CASE(a_job_newer_than_the_cached_pods_takes_one_list_of_pods_alike) {
    for (const char* pods_are : {"alike", "changed", "unsettled"}) {
        BOOST_TEST_CONTEXT("pods " << pods_are) {
            Seeded s;
            CacheView pods = cached(s.api, kube::pods("gitlab"));
            const std::string mode = pods_are;
            pods.settled = mode != "unsettled";
            if (mode != "unsettled") {
                s.api.mutate(kube::jobs("gitlab", "mig"),
                             [](json& j) { j["status"]["active"] = 0; });
            }
            CacheView jobs = cached(s.api, kube::jobs("gitlab"));
            if (mode == "changed") {
                s.api.mutate(kube::pods("gitlab", "mig-a"),
                             [](json& p) { p["metadata"]["finalizers"] = json::array(); });
            }
            auto snap = read_job_beside_pods(s.api, s.id, "", jobs, pods);
            BOOST_REQUIRE(snap.is_ok());
            BOOST_TEST(snap->consistent);
            const std::vector<std::string> calls =
                mode == "alike" ? std::vector<std::string>{"list pods"}
                                : std::vector<std::string>{"list pods", "get jobs/mig"};
            BOOST_TEST(s.api.calls_made == calls, boost::test_tools::per_element());
            if (mode == "alike") {
                BOOST_TEST(snap->revision == jobs.progress);
                BOOST_TEST(*snap->job == jobs.objects.at(0));
            }
        }
    }
}

// Given the Job was deleted after the caches saw it, then the GET reads it as gone.
BOOST_AUTO_TEST_CASE(a_job_deleted_beside_the_cached_pods_is_gone) {
    Seeded s;
    CacheView pods = cached(s.api, kube::pods("gitlab"));
    CacheView jobs = cached(s.api, kube::jobs("gitlab"));
    s.api.erase(kube::jobs("gitlab", "mig"));
    auto snap = read_job_beside_pods(s.api, s.id, "", jobs, pods);
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(!snap->job.has_value());
    BOOST_TEST(snap->pods.empty());
    BOOST_TEST(s.api.calls_made == std::vector<std::string>{"get jobs/mig"},
               boost::test_tools::per_element());
}

// Given the controller counts the failed pod while the first list runs, before the
// list is served (the list shows the pod without its finalizer), then the Job read
// after it is no newer than the list: one round, and the pair counts the pod once.
BOOST_AUTO_TEST_CASE(a_job_written_before_the_list_was_served_takes_one_round) {
    Seeded s;
    s.api.during_list = [&](int n) {
        if (n == 1) {
            s.count_failed_pod();
        }
    };
    auto snap = read_job_snapshot(s.api, s.id, "batch.kubernetes.io/controller-uid=j");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(snap->rounds == 1);
    BOOST_TEST(failed_pods(*snap) == 1);
}

// Given the controller counts the failed pod after the first list was served (the list
// shows the pod with its finalizer, the Job read next counts it as well), then that
// pair would count the pod twice: the snapshot takes a second round, whose pair counts
// it once.
BOOST_AUTO_TEST_CASE(a_job_written_after_the_list_is_read_again) {
    Seeded s;
    s.api.after_list = [&](int n) {
        if (n == 1) {
            s.count_failed_pod();
        }
    };
    auto snap = read_job_snapshot(s.api, s.id, "batch.kubernetes.io/controller-uid=j");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(snap->rounds == 2);
    BOOST_TEST(failed_pods(*snap) == 1);
}

// Given nothing changes, then one list and one Job read make the snapshot.
BOOST_AUTO_TEST_CASE(a_quiet_job_takes_one_round) {
    Seeded s;
    auto snap = read_job_snapshot(s.api, s.id, "");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(snap->rounds == 1);
    BOOST_TEST(s.api.calls_made == (std::vector<std::string>{"list pods", "get jobs/mig"}),
               boost::test_tools::per_element());
    BOOST_TEST(failed_pods(*snap) == 1);
}

// Given a Job written during every list, then the snapshot stops after the bound and
// says it is not consistent (the caller must not evaluate it).
BOOST_AUTO_TEST_CASE(a_job_that_never_holds_still_is_given_up_after_the_bound) {
    Seeded s;
    s.api.after_list = [&](int n) {
        s.api.mutate(kube::jobs("gitlab", "mig"), [&](json& j) { j["status"]["failed"] = n; });
    };
    auto snap = read_job_snapshot(s.api, s.id, "");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(!snap->consistent);
    BOOST_TEST(snap->rounds == k_max_snapshot_rounds);
    BOOST_TEST(s.api.lists == k_max_snapshot_rounds);
}

// Given the controller rewrites only the pod tallies (ready, active) and the gate its
// annotations after every list, then the second round suffices: the Job is newer than
// that list, but nothing counted moved since the Job read before it.
BOOST_AUTO_TEST_CASE(tallies_and_annotations_do_not_make_a_snapshot_inconsistent) {
    Seeded s;
    s.api.after_list = [&](int n) {
        s.api.mutate(kube::jobs("gitlab", "mig"), [&](json& j) {
            j["status"]["ready"] = n;
            j["status"]["active"] = n;
            j["metadata"]["annotations"]["envgate.dev/observed-failures"] = std::to_string(n);
        });
    };
    auto snap = read_job_snapshot(s.api, s.id, "");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(snap->consistent);
    BOOST_TEST(snap->rounds == 2);
}

// Given the Job is deleted while its pods are listed, then the snapshot reads it as gone.
BOOST_AUTO_TEST_CASE(a_job_deleted_during_the_list_is_gone) {
    Seeded s;
    s.api.during_list = [&](int) { s.api.erase(kube::jobs("gitlab", "mig")); };
    auto snap = read_job_snapshot(s.api, s.id, "");
    BOOST_REQUIRE(snap.is_ok());
    BOOST_TEST(!snap->job.has_value());
    BOOST_TEST(snap->pods.empty());
    BOOST_TEST(snap->consistent);
}

BOOST_AUTO_TEST_SUITE_END()
