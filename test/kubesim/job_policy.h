// The Job controller's pure rules (Kubernetes 1.31+ pkg/controller/job), taking plain
// JSON objects and `now`: which pods are active, terminating or failed, the two
// backoffLimit tests, podFailurePolicy matching and the pod-failure back-off.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kubesim {

using nlohmann::json;

bool pod_terminal(const json& pod);
bool pod_active(const json& pod);       // not terminal and no deletionTimestamp
bool pod_terminating(const json& pod);  // deletionTimestamp and not terminal
bool has_tracking_finalizer(const json& pod);
// isPodFailed: phase Failed, or (unless only failed pods are replaced) being deleted.
bool pod_failed(const json& pod, const json& job);
// Σ restartCount over init and app containers of Pending/Running pods against the
// limit: `>= backoffLimit`, or `> 0` when it is 0. OnFailure Jobs only.
bool past_backoff_limit_on_failure(const json& job, const std::vector<json>& pods);

struct PolicyMatch {
    std::string action;  // FailJob, Ignore, Count ("" = no rule matched)
    std::string message;
};
// The first podFailurePolicy rule matching a failed pod, with the controller's message.
PolicyMatch match_pod_failure_policy(const json& job, const json& pod);
// The condition of `type` in the Job status with status True, or nullptr.
const json* find_true_condition(const json& job, const std::string& type);
// Indexed Jobs (indexed_job_utils.go): the completion index of a pod (annotation
// batch.kubernetes.io/job-completion-index; -1 when absent or bad), the failures of its
// index before it (batch.kubernetes.io/job-index-failure-count; 0 when absent or bad),
// and index sets as the API writes them ("1,3-5").
int completion_index(const json& pod);
int index_failure_count(const json& pod);
std::set<int> parse_indexes(const std::string& text);
std::string format_indexes(const std::set<int>& indexes);

// Pod-failure back-off for the `failures`-th failure since the last success (unscaled):
// 10 s doubling, capped at 10 minutes.
std::chrono::seconds pod_failure_backoff(int failures);

}  // namespace kubesim
