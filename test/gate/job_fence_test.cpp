// Given a Job of the same spec created under an earlier hold of the lock, then it is
// adopted only when it has ended: Complete or Failed, or SuccessCriteriaMet /
// FailureTarget, which the controller writes first (a run right after a gate that saw
// them must not call the Job still running).
#include <boost/test/unit_test.hpp>

#include "runner/gating/job_fence.h"

using namespace envgate;
using nlohmann::json;

namespace {

json job_with(const char* fence, const char* condition) {
    json j = {{"metadata", {{"name", "post-1a2b3c4d"}, {"labels", {{k_label_fence, fence}}}}}};
    if (*condition != '\0') {
        j["status"]["conditions"] = json::array({{{"type", condition}, {"status", "True"}}});
    }
    return j;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(job_fence_suite)

BOOST_AUTO_TEST_CASE(adopts_an_older_hold_s_job_only_once_it_ended) {
    RenderedJob ours{"post-1a2b3c4d", "1a2b3c4d", "gitlab", job_with("3", "")};
    BOOST_TEST(check_job_fence(ours, job_with("2", "")).code() == Code::conflict);
    for (const char* ended : {"Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"}) {
        BOOST_TEST_CONTEXT(ended) {
            BOOST_TEST(check_job_fence(ours, job_with("2", ended)).is_ok());
        }
    }
    BOOST_TEST(check_job_fence(ours, job_with("3", "")).is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
