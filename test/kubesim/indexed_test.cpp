// kubesim's Job controller on Indexed Jobs with backoffLimitPerIndex, against
// pkg/controller/job (indexed_job_utils.go, syncJob): one pod per index carrying the
// completion index and its failures so far, an index failing once its pod fails with
// backoffLimitPerIndex failures before it, failedIndexes, and FailureTarget
// MaxFailedIndexesExceeded once more indexes failed than maxFailedIndexes allows.
#include <boost/test/unit_test.hpp>
#include <set>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_jobs = "/apis/batch/v1/namespaces/default/jobs";
const std::string k_pods = "/api/v1/namespaces/default/pods";

json indexed_job() {
    json container = {
        {"name", "main"},
        {"image", "busybox"},
        {"command",
         {"sh", "-c", "if [ \"$JOB_COMPLETION_INDEX\" = 1 ]; then exit 1; fi; sleep 30"}}};
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", "idx"}}},
            {"spec",
             {{"completionMode", "Indexed"},
              {"completions", 3},
              {"parallelism", 3},
              {"backoffLimitPerIndex", 1},
              {"maxFailedIndexes", 0},
              {"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"terminationGracePeriodSeconds", 1},
                  {"containers", {container}}}}}}}}};
}

bool failed(const json& job) {
    for (const auto& c : job["status"].value("conditions", json::array())) {
        if (c.value("type", "") == "Failed" && c.value("status", "") == "True") {
            return true;
        }
    }
    return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_indexed)

// Given an Indexed Job whose index 1 always fails (backoffLimitPerIndex 1,
// maxFailedIndexes 0), then index 1 gets two pods (failure counts 0 and 1), the Job's
// backoffLimit defaults to MaxInt32, and it fails with MaxFailedIndexesExceeded and
// failedIndexes "1" after two failed pods.
BOOST_AUTO_TEST_CASE(an_index_fails_after_its_own_backoff_limit) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    json created = send_json(c, "POST", k_jobs, indexed_job());
    BOOST_TEST(created["spec"].value("backoffLimit", 0) == 2147483647);
    BOOST_REQUIRE(wait_until([&] { return failed(get_json(c, k_jobs + "/idx")); }));
    json job = get_json(c, k_jobs + "/idx");
    BOOST_TEST(job["status"].value("failedIndexes", "") == "1");
    BOOST_TEST(job["status"].value("failed", 0) >= 2);
    std::string reason;
    for (const auto& cond : job["status"]["conditions"]) {
        if (cond.value("type", "") == "Failed") {
            reason = cond.value("reason", "");
        }
    }
    BOOST_TEST(reason == "MaxFailedIndexesExceeded");
    std::set<std::string> counts;
    json pods = get_json(c, k_pods + "?labelSelector=job-name%3Didx");
    for (const auto& p : pods["items"]) {
        const json& a = p["metadata"]["annotations"];
        if (a.value("batch.kubernetes.io/job-completion-index", "") == "1") {
            counts.insert(a.value("batch.kubernetes.io/job-index-failure-count", ""));
        }
    }
    BOOST_TEST((counts == std::set<std::string>{"0", "1"}), pods.dump());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
