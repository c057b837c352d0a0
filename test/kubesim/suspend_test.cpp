// kubesim's Job controller on suspension and on Jobs another controller manages, against
// pkg/controller/job (manageJob, deleteJobPods, syncJob): a suspended Job's active pods
// lose their tracking finalizer before they are deleted, so they count as neither
// failed nor succeeded; the Suspended condition turns True (JobSuspended) and back to
// False (JobResumed) with a new pod; a Job with spec.managedBy naming another
// controller gets no pods and no status from it.
#include <boost/test/unit_test.hpp>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_jobs = "/apis/batch/v1/namespaces/default/jobs";
const std::string k_pods = "/api/v1/namespaces/default/pods";

json job_named(const std::string& name, json spec_extra = json::object()) {
    json spec = {
        {"backoffLimit", 0},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"terminationGracePeriodSeconds", 5},
            {"containers",
             {{{"name", "main"}, {"image", "busybox"}, {"command", {"sleep", "30"}}}}}}}}}};
    spec.update(spec_extra);
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", name}}},
            {"spec", spec}};
}

json pods_of(SimClient& c, const std::string& job) {
    return get_json(c, k_pods + "?labelSelector=job-name%3D" + job)["items"];
}

std::string suspended_status(SimClient& c, const std::string& job) {
    for (const auto& cond :
         get_json(c, k_jobs + "/" + job)["status"].value("conditions", json::array())) {
        if (cond.value("type", "") == "Suspended") {
            return cond.value("status", "") + "/" + cond.value("reason", "");
        }
    }
    return "";
}

bool has_running_pod(SimClient& c, const std::string& job) {
    for (const auto& p : pods_of(c, job)) {
        if (p["status"].value("phase", "") == "Running" &&
            !p["metadata"].contains("deletionTimestamp")) {
            return true;
        }
    }
    return false;
}

void patch_suspend(SimClient& c, const std::string& job, bool suspend) {
    int code = 0;
    send_json(c, "PATCH", k_jobs + "/" + job, {{"spec", {{"suspend", suspend}}}}, &code,
              "application/merge-patch+json");
    BOOST_REQUIRE(code == 200);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_suspend)

// Given a running Job, when it is suspended, then its pod goes without being counted and
// Suspended is True/JobSuspended; when resumed, Suspended is False/JobResumed and a new
// pod runs; the Job has failed nothing (backoffLimit 0 would have failed it).
BOOST_AUTO_TEST_CASE(suspension_deletes_pods_without_counting_them) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    send_json(c, "POST", k_jobs, job_named("sus"));
    BOOST_REQUIRE(wait_until([&] { return has_running_pod(c, "sus"); }));
    std::string first = pods_of(c, "sus")[0]["metadata"]["name"];
    patch_suspend(c, "sus", true);
    BOOST_REQUIRE(wait_until([&] { return suspended_status(c, "sus") == "True/JobSuspended"; }));
    BOOST_REQUIRE(wait_until([&] { return pods_of(c, "sus").empty(); }));
    patch_suspend(c, "sus", false);
    BOOST_REQUIRE(wait_until([&] { return suspended_status(c, "sus") == "False/JobResumed"; }));
    BOOST_REQUIRE(wait_until([&] { return has_running_pod(c, "sus"); }));
    json status = get_json(c, k_jobs + "/sus")["status"];
    BOOST_TEST(status.value("failed", 0) == 0);
    BOOST_TEST(pods_of(c, "sus")[0]["metadata"]["name"] != first);
    for (const auto& cond : status.value("conditions", json::array())) {
        BOOST_TEST(cond.value("type", "") != "FailureTarget");
    }
}

// Given a Job managed by MultiKueue, then kubesim's Job controller creates no pod and
// writes no status for it (the status a test writes stays as written).
BOOST_AUTO_TEST_CASE(a_job_managed_by_another_controller_is_left_alone) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    send_json(c, "POST", k_jobs, job_named("kueue", {{"managedBy", "kueue.x-k8s.io/multikueue"}}));
    send_json(c, "POST", k_jobs, job_named("builtin"));
    BOOST_REQUIRE(wait_until([&] { return has_running_pod(c, "builtin"); }));
    BOOST_TEST(pods_of(c, "kueue").empty());
    BOOST_TEST(!get_json(c, k_jobs + "/kueue")["status"].contains("startTime"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
