// The Job controller's steps, called in order by JobController::sync_job: decide a
// finish condition, delete active pods of a failing Job, count terminated pods through
// the tracking finalizer, create missing pods after the pod-failure back-off.
#include <map>
#include <set>

#include "test/kubesim/controller.h"
#include "test/kubesim/controller_util.h"
#include "test/kubesim/job_policy.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/resources.h"

namespace kubesim {

using SteadyClock = std::chrono::steady_clock;
using namespace controller_util;  // NOLINT: the controller's own helpers

std::optional<json> JobController::decide_finish(const json& job, const std::vector<json>& pods) {
    const json& status = job["status"];
    json uncounted = status.value("uncountedTerminatedPods", json::object());
    json unc_failed = uncounted.value("failed", json::array());
    json unc_succeeded = uncounted.value("succeeded", json::array());
    int64_t failed = status.value("failed", 0) + static_cast<int64_t>(unc_failed.size());
    int64_t succeeded = status.value("succeeded", 0) + static_cast<int64_t>(unc_succeeded.size());
    for (const auto& pod : pods) {
        if (!has_tracking_finalizer(pod)) {
            continue;
        }
        std::string uid = uid_of(pod);
        if (pod["status"].value("phase", "") == "Succeeded" && !in_list(unc_succeeded, uid)) {
            ++succeeded;
        } else if (pod_failed(pod, job) && !in_list(unc_failed, uid)) {
            PolicyMatch m = pod_terminal(pod) ? match_pod_failure_policy(job, pod) : PolicyMatch{};
            if (m.action == "FailJob") {
                return failure_condition("FailureTarget", "PodFailurePolicy", m.message);
            }
            if (m.action != "Ignore") {
                ++failed;
            }
        }
    }
    if (auto per_index = decide_per_index(job)) {
        return per_index;
    }
    if (failed > job["spec"].value("backoffLimit", 6) || past_backoff_limit_on_failure(job, pods)) {
        return failure_condition("FailureTarget", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit");
    }
    if (job["spec"].contains("activeDeadlineSeconds") && status.contains("startTime")) {
        auto deadline = std::chrono::seconds(job["spec"]["activeDeadlineSeconds"].get<int64_t>());
        Memory& mem = m_memory[uid_of(job)];
        if (mem.started_at == SteadyTime{}) {
            mem.started_at = SteadyClock::now();  // when this controller set startTime
        }
        auto due = mem.started_at + scaled(deadline, m_time_scale);
        if (SteadyClock::now() >= due) {
            return failure_condition("FailureTarget", "DeadlineExceeded",
                                     "Job was active longer than specified deadline");
        }
        wake_at(due);
    }
    if (succeeded >= job["spec"].value("completions", 1)) {
        return failure_condition("SuccessCriteriaMet", "CompletionsReached",
                                 "Reached expected number of succeeded pods");
    }
    return std::nullopt;
}

namespace {

bool per_index_limit(const json& job) {
    return job["spec"].value("completionMode", "") == "Indexed" &&
           job["spec"].contains("backoffLimitPerIndex");
}

}  // namespace

std::optional<json> JobController::decide_per_index(const json& job) {
    if (!per_index_limit(job)) {
        return std::nullopt;
    }
    std::set<int> failed = parse_indexes(job["status"].value("failedIndexes", ""));
    std::set<int> done = parse_indexes(job["status"].value("completedIndexes", ""));
    const json& spec = job["spec"];
    if (spec.contains("maxFailedIndexes") &&
        static_cast<int64_t>(failed.size()) > spec["maxFailedIndexes"].get<int64_t>()) {
        return failure_condition("FailureTarget", "MaxFailedIndexesExceeded",
                                 "Job has exceeded the specified maximal number of failed indexes");
    }
    if (!failed.empty() &&
        static_cast<int64_t>(failed.size() + done.size()) >= spec.value("completions", 1)) {
        return failure_condition("FailureTarget", "FailedIndexes", "Job has failed indexes");
    }
    return std::nullopt;
}

void JobController::delete_active(const json& job, const std::vector<json>& pods) {
    for (const auto& pod : pods) {
        if (!pod_active(pod)) {
            continue;
        }
        auto r = delete_object(m_store, "pods", pod["metadata"].value("namespace", ""),
                               name_of(pod), {});
        if (r) {
            record_event(m_store, job, "Normal", "SuccessfulDelete", "Deleted pod: " + name_of(pod),
                         "job-controller");
        }
    }
}

bool JobController::sync_suspension(const json& job, const std::vector<json>& pods) {
    bool suspend = job["spec"].value("suspend", false);
    bool wrote = false;
    for (const auto& pod : pods) {
        if (!suspend || !pod_active(pod)) {
            continue;
        }
        remove_finalizer(pod);
        if (delete_object(m_store, "pods", pod["metadata"].value("namespace", ""), name_of(pod),
                          {})) {
            record_event(m_store, job, "Normal", "SuccessfulDelete", "Deleted pod: " + name_of(pod),
                         "job-controller");
        }
        wrote = true;
    }
    bool known = false;  // a Suspended condition exists
    bool is_true = false;
    for (const auto& c : job["status"].value("conditions", json::array())) {
        if (c.value("type", "") == "Suspended") {
            known = true;
            is_true = c.value("status", "") == "True";
        }
    }
    if (suspend == is_true || (!suspend && !known)) {
        return wrote;  // in step, or never suspended
    }
    json next = failure_condition("Suspended", suspend ? "JobSuspended" : "JobResumed",
                                  suspend ? "Job suspended" : "Job resumed");
    next["status"] = suspend ? "True" : "False";
    (void)write_status(job, [&](json& st) {
        json kept = json::array();
        for (const auto& c : st.value("conditions", json::array())) {
            if (c.value("type", "") != "Suspended") {
                kept.push_back(c);
            }
        }
        kept.push_back(next);
        st["conditions"] = kept;
    });
    record_event(m_store, job, "Normal", suspend ? "Suspended" : "Resumed",
                 suspend ? "Job suspended" : "Job resumed", "job-controller");
    return true;
}

bool JobController::track_terminated(const json& job, const std::vector<json>& pods) {
    bool failing = find_true_condition(job, "FailureTarget") != nullptr;
    json uncounted = job["status"].value("uncountedTerminatedPods", json::object());
    json unc_failed = uncounted.value("failed", json::array());
    json unc_succeeded = uncounted.value("succeeded", json::array());
    std::vector<json> release;
    Memory& mem = m_memory[uid_of(job)];
    bool per_index = per_index_limit(job);
    std::set<int> failed_indexes = parse_indexes(job["status"].value("failedIndexes", ""));
    std::set<int> completed = parse_indexes(job["status"].value("completedIndexes", ""));
    for (const auto& pod : pods) {
        if (!has_tracking_finalizer(pod)) {
            continue;
        }
        std::string uid = uid_of(pod);
        bool succeeded = pod["status"].value("phase", "") == "Succeeded";
        if (succeeded) {
            if (!in_list(unc_succeeded, uid)) {
                unc_succeeded.push_back(uid);
                mem.failures = 0;
            }
            completed.insert(completion_index(pod));
        } else if (pod_failed(pod, job) || (failing && !pod_terminal(pod))) {
            if (match_pod_failure_policy(job, pod).action != "Ignore" || !pod_terminal(pod)) {
                if (!in_list(unc_failed, uid)) {
                    unc_failed.push_back(uid);
                }
                // isIndexFailed: this failure used up the index's budget.
                if (per_index && index_failure_count(pod) >=
                                     job["spec"]["backoffLimitPerIndex"].get<int64_t>()) {
                    failed_indexes.insert(completion_index(pod));
                }
            }
            ++mem.failures;
            mem.last_failure = SteadyClock::now();
        } else {
            continue;
        }
        release.push_back(pod);
    }
    if (release.empty()) {
        return false;
    }
    // 1. Record the UIDs, 2. remove the finalizers, 3. move the UIDs into the counters.
    (void)write_status(job, [&](json& st) {
        st["uncountedTerminatedPods"] = {{"failed", unc_failed}, {"succeeded", unc_succeeded}};
    });
    for (const auto& pod : release) {
        remove_finalizer(pod);
    }
    (void)write_status(job, [&](json& st) {
        int64_t failed = st.value("failed", 0) + static_cast<int64_t>(unc_failed.size());
        int64_t succeeded = st.value("succeeded", 0) + static_cast<int64_t>(unc_succeeded.size());
        st.erase("failed");
        st.erase("succeeded");
        if (failed > 0) {
            st["failed"] = failed;
        }
        if (succeeded > 0) {
            st["succeeded"] = succeeded;
        }
        st["uncountedTerminatedPods"] = json::object();
        if (job["spec"].value("completionMode", "") == "Indexed") {
            completed.erase(-1);
            failed_indexes.erase(-1);
            st["completedIndexes"] = format_indexes(completed);
            if (per_index) {
                st["failedIndexes"] = format_indexes(failed_indexes);
            }
        }
    });
    return true;
}

namespace {

// Indexed Jobs: the indexes that need a pod now (neither completed nor failed nor held
// by an active pod), lowest first, at most `room`; with the failures each index had.
std::vector<std::pair<int, int>> free_indexes(const json& job, const std::vector<json>& pods,
                                              int room) {
    std::set<int> taken = parse_indexes(job["status"].value("completedIndexes", ""));
    taken.merge(parse_indexes(job["status"].value("failedIndexes", "")));
    std::map<int, int> failures;
    for (const auto& pod : pods) {
        int ix = completion_index(pod);
        if (pod_active(pod) || pod_terminating(pod) ||
            pod["status"].value("phase", "") == "Succeeded") {
            taken.insert(ix);
        }
        bool counted =
            pod_failed(pod, job) && match_pod_failure_policy(job, pod).action != "Ignore";
        failures[ix] = std::max(failures[ix], index_failure_count(pod) + (counted ? 1 : 0));
    }
    std::vector<std::pair<int, int>> out;
    for (int ix = 0;
         ix < job["spec"].value("completions", 1) && static_cast<int>(out.size()) < room; ++ix) {
        if (taken.count(ix) == 0) {
            out.emplace_back(ix, failures[ix]);
        }
    }
    return out;
}

// What the controller adds to an Indexed Job's pod (addCompletionIndexAnnotation,
// addIndexFailureCountAnnotation, addCompletionIndexEnvVariables).
void mark_index(json& pod, const std::string& job, int index, int failures) {
    std::string ix = std::to_string(index);
    pod["metadata"]["name"] = job + "-" + ix + "-" + new_uid().substr(0, 5);
    pod["metadata"]["generateName"] = job + "-" + ix + "-";
    pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] = ix;
    pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] =
        std::to_string(failures);
    pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = ix;
    for (auto& c : pod["spec"]["containers"]) {
        c["env"].push_back({{"name", "JOB_COMPLETION_INDEX"}, {"value", ix}});
    }
}

}  // namespace

int JobController::create_pods(const json& job, const std::vector<json>& pods, int active,
                               int succeeded, int terminating) {
    const json& spec = job["spec"];
    if (spec.value("suspend", false)) {
        return 0;
    }
    if (spec.contains("podFailurePolicy") || spec.value("podReplacementPolicy", "") == "Failed") {
        active += terminating;
    }
    int want =
        std::min<int>(spec.value("parallelism", 1), spec.value("completions", 1) - succeeded);
    Memory& mem = m_memory[uid_of(job)];
    if (want > active && mem.failures > 0) {
        auto due = mem.last_failure + scaled(pod_failure_backoff(mem.failures), m_time_scale);
        if (SteadyClock::now() < due) {
            wake_at(due);
            return 0;
        }
    }
    std::vector<std::pair<int, int>> slots;  // (completion index or -1, its failures)
    if (spec.value("completionMode", "") == "Indexed") {
        slots = free_indexes(job, pods, want - active);
    } else {
        slots.assign(std::max(0, want - active), {-1, 0});
    }
    static const ResourceInfo& pods_info = *find_resource("", "v1", "pods");
    int created = 0;
    for (const auto& [index, failures] : slots) {
        const json& tmpl = spec["template"];
        json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
        pod["metadata"] = tmpl.value("metadata", json::object());
        std::string ns = job["metadata"].value("namespace", "");
        pod["metadata"]["name"] = name_of(job) + "-" + new_uid().substr(0, 5);
        pod["metadata"]["generateName"] = name_of(job) + "-";
        pod["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
        pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                               {"kind", "Job"},
                                               {"name", name_of(job)},
                                               {"uid", uid_of(job)},
                                               {"controller", true},
                                               {"blockOwnerDeletion", true}}};
        pod["spec"] = tmpl["spec"];
        if (index >= 0) {
            mark_index(pod, name_of(job), index, failures);
        }
        if (!prepare_create(pods_info, ns, false, pod).is_ok()) {
            return created;
        }
        auto r = m_store.create("pods", pod);
        if (r) {
            ++created;
            record_event(m_store, job, "Normal", "SuccessfulCreate", "Created pod: " + name_of(*r),
                         "job-controller");
        }
    }
    return created;
}

}  // namespace kubesim
