// Unit tests of kubesim's pure Job-controller rules and selectors against the
// tables of spec/kubernetes-jobs.md §1.2 and §1.7 (no process, no server).
#include <boost/test/unit_test.hpp>

#include "test/kubesim/job_policy.h"
#include "test/kubesim/selectors.h"

namespace kubesim {

namespace {

json job(const std::string& restart, int limit, json extra = json::object()) {
    json spec = {{"backoffLimit", limit}, {"template", {{"spec", {{"restartPolicy", restart}}}}}};
    spec.update(extra);
    return {{"metadata", {{"name", "j"}}}, {"spec", spec}, {"status", json::object()}};
}

json pod(const std::string& phase, int app_restarts, int init_restarts = 0) {
    return {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
            {"status",
             {{"phase", phase},
              {"initContainerStatuses", {{{"name", "init"}, {"restartCount", init_restarts}}}},
              {"containerStatuses", {{{"name", "main"}, {"restartCount", app_restarts}}}}}}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_job_policy)

// Given OnFailure Jobs, then Σ restartCount over Pending/Running pods (init + app)
// trips at backoffLimit, or above 0 when the limit is 0.
BOOST_AUTO_TEST_CASE(restart_limit_counts_pending_and_running_pods_only) {
    struct Case {
        int limit;
        std::vector<json> pods;
        bool want;
    };
    const std::vector<Case> cases = {
        {0, {pod("Running", 0)}, false},
        {0, {pod("Running", 1)}, true},
        {1, {pod("Running", 1)}, true},
        {3, {pod("Running", 2)}, false},
        {3, {pod("Running", 2, 1)}, true},
        {3, {pod("Pending", 0, 3)}, true},
        {3, {pod("Failed", 5), pod("Running", 0)}, false},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        BOOST_TEST_CONTEXT("case " << i) {
            BOOST_TEST(past_backoff_limit_on_failure(job("OnFailure", cases[i].limit),
                                                     cases[i].pods) == cases[i].want);
        }
    }
    BOOST_TEST(!past_backoff_limit_on_failure(job("Never", 0), {pod("Running", 4)}));
}

// Given deleted pods, then they count as failed at once unless only failed pods are
// replaced (podFailurePolicy or podReplacementPolicy Failed); Succeeded never fails.
BOOST_AUTO_TEST_CASE(deleted_pods_count_as_failed_by_replacement_policy) {
    json deleting = pod("Running", 0);
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    json done = pod("Succeeded", 0);
    done["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    BOOST_TEST(pod_failed(deleting, job("Never", 6)));
    BOOST_TEST(!pod_failed(deleting, job("Never", 6, {{"podReplacementPolicy", "Failed"}})));
    BOOST_TEST(
        !pod_failed(deleting, job("Never", 6, {{"podFailurePolicy", {{"rules", json::array()}}}})));
    BOOST_TEST(!pod_failed(done, job("Never", 6)));
    BOOST_TEST(pod_failed(pod("Failed", 0), job("Never", 6, {{"podReplacementPolicy", "Failed"}})));
    BOOST_TEST(pod_terminating(deleting));
    BOOST_TEST(!pod_active(deleting));
}

// Given podFailurePolicy rules, then the first match wins with the controller's message.
BOOST_AUTO_TEST_CASE(pod_failure_policy_first_match_and_messages) {
    json rules = {
        {"rules",
         {{{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}},
          {{"action", "FailJob"},
           {"onExitCodes", {{"containerName", "main"}, {"operator", "In"}, {"values", {42}}}}},
          {{"action", "Count"}, {"onExitCodes", {{"operator", "NotIn"}, {"values", {0, 42}}}}}}}};
    json j = job("Never", 6, {{"podFailurePolicy", rules}});
    json p = pod("Failed", 0);
    p["status"]["containerStatuses"][0]["state"] = {{"terminated", {{"exitCode", 42}}}};
    PolicyMatch m = match_pod_failure_policy(j, p);
    BOOST_TEST(m.action == "FailJob");
    BOOST_TEST(
        m.message ==
        "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1");
    p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] = 3;
    BOOST_TEST(match_pod_failure_policy(j, p).action == "Count");
    p["status"]["conditions"] = {{{"type", "DisruptionTarget"}, {"status", "True"}}};
    m = match_pod_failure_policy(j, p);
    BOOST_TEST(m.action == "Ignore");
    BOOST_TEST(m.message ==
               "Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0");
    BOOST_TEST(match_pod_failure_policy(job("Never", 6), p).action == "");
}

// Given repeated failures, then the pod-failure back-off doubles from 10 s to 10 min.
BOOST_AUTO_TEST_CASE(pod_failure_backoff_doubles_to_ten_minutes) {
    BOOST_TEST(pod_failure_backoff(1).count() == 10);
    BOOST_TEST(pod_failure_backoff(2).count() == 20);
    BOOST_TEST(pod_failure_backoff(6).count() == 320);
    BOOST_TEST(pod_failure_backoff(7).count() == 600);
    BOOST_TEST(pod_failure_backoff(30).count() == 600);
}

// Given label and field selectors as kubectl sends them, then objects match as in the API.
BOOST_AUTO_TEST_CASE(selectors_parse_and_match) {
    json obj = {{"metadata", {{"name", "x"}, {"labels", {{"job-name", "a"}, {"tier", "db"}}}}},
                {"involvedObject", {{"kind", "Job"}, {"uid", "u1"}}}};
    auto matches = [&](const std::string& labels, const std::string& fields) {
        auto sel = parse_selector(labels, fields);
        BOOST_REQUIRE(sel.is_ok());
        return selector_matches(*sel, obj);
    };
    BOOST_TEST(matches("job-name=a", ""));
    BOOST_TEST(matches("job-name==a,tier in (db, web)", "metadata.name=x"));
    BOOST_TEST(!matches("tier notin (db)", ""));
    BOOST_TEST(matches("!missing,tier", "involvedObject.kind=Job,involvedObject.uid!=u2"));
    BOOST_TEST(!matches("job-name!=a", ""));
    BOOST_TEST(!matches("", "involvedObject.uid=u2"));
    BOOST_TEST(!parse_selector("", "name").is_ok());
    BOOST_TEST(label_selector_matches(
        {{"matchLabels", {{"job-name", "a"}}},
         {"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"db"}}}}}},
        obj["metadata"]["labels"]));
}

// Given index sets as the API writes them (completedIndexes, failedIndexes), then they
// parse and format back in the compressed interval form; bad parts are skipped.
BOOST_AUTO_TEST_CASE(index_sets_round_trip_in_interval_form) {
    BOOST_TEST((parse_indexes("1,3-5,7") == std::set<int>{1, 3, 4, 5, 7}));
    BOOST_TEST(format_indexes({1, 3, 4, 5, 7}) == "1,3-5,7");
    BOOST_TEST(format_indexes({}) == "");
    BOOST_TEST((parse_indexes("2,x,4") == std::set<int>{2, 4}));
    json p = {{"metadata",
               {{"annotations",
                 {{"batch.kubernetes.io/job-completion-index", "3"},
                  {"batch.kubernetes.io/job-index-failure-count", "bad"}}}}}};
    BOOST_TEST(completion_index(p) == 3);
    BOOST_TEST(index_failure_count(p) == 0);
    BOOST_TEST(completion_index(json::object()) == -1);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim
