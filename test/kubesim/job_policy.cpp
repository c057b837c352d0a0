// The Job controller's rules: see job_policy.h.
#include "test/kubesim/job_policy.h"

#include <algorithm>

namespace kubesim {

namespace {

// `j[key]`, or an empty object when `j` has no such key: reading a missing field of a
// const json with operator[] is undefined behaviour (and an assertion in debug builds).
const json& sub(const json& j, const char* key) {
    static const json k_empty = json::object();
    if (!j.is_object()) {
        return k_empty;
    }
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? k_empty : *it;
}

}  // namespace

bool pod_terminal(const json& pod) {
    std::string phase = sub(pod, "status").value("phase", "");
    return phase == "Succeeded" || phase == "Failed";
}

bool pod_active(const json& pod) {
    return !pod_terminal(pod) && !sub(pod, "metadata").contains("deletionTimestamp");
}

bool pod_terminating(const json& pod) {
    return !pod_terminal(pod) && sub(pod, "metadata").contains("deletionTimestamp");
}

bool has_tracking_finalizer(const json& pod) {
    for (const auto& f : sub(pod, "metadata").value("finalizers", json::array())) {
        if (f == "batch.kubernetes.io/job-tracking") {
            return true;
        }
    }
    return false;
}

bool pod_failed(const json& pod, const json& job) {
    std::string phase = sub(pod, "status").value("phase", "");
    if (phase == "Failed") {
        return true;
    }
    bool only_failed = sub(job, "spec").contains("podFailurePolicy") ||
                       sub(job, "spec").value("podReplacementPolicy", "") == "Failed";
    if (only_failed) {
        return false;
    }
    return sub(pod, "metadata").contains("deletionTimestamp") && phase != "Succeeded";
}

bool past_backoff_limit_on_failure(const json& job, const std::vector<json>& pods) {
    if (sub(sub(sub(job, "spec"), "template"), "spec").value("restartPolicy", "") != "OnFailure") {
        return false;
    }
    int64_t sum = 0;
    for (const auto& pod : pods) {
        std::string phase = sub(pod, "status").value("phase", "");
        if (phase != "Running" && phase != "Pending") {
            continue;
        }
        for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
            for (const auto& c : sub(pod, "status").value(list, json::array())) {
                sum += c.value("restartCount", 0);
            }
        }
    }
    int64_t limit = sub(job, "spec").value("backoffLimit", 6);
    return limit == 0 ? sum > 0 : sum >= limit;
}

namespace {

bool exit_codes_match(const json& rule, int code) {
    const json& on = sub(rule, "onExitCodes");
    const json& values = sub(on, "values");
    bool in = std::find(values.begin(), values.end(), json(code)) != values.end();
    return on.value("operator", "In") == "In" ? in : !in;
}

// The first terminated container (app, then init) with a non-zero exit code matching.
std::optional<std::pair<std::string, int>> matching_container(const json& rule, const json& pod) {
    std::string only = sub(rule, "onExitCodes").value("containerName", "");
    for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
        for (const auto& c : sub(pod, "status").value(list, json::array())) {
            if (!sub(c, "state").contains("terminated")) {
                continue;
            }
            int code = sub(sub(c, "state"), "terminated").value("exitCode", 0);
            std::string name = c.value("name", "");
            if (code == 0 || (!only.empty() && name != only)) {
                continue;
            }
            if (exit_codes_match(rule, code)) {
                return std::make_pair(name, code);
            }
        }
    }
    return std::nullopt;
}

}  // namespace

namespace {

int annotation_number(const json& pod, const char* key, int absent) {
    const json& a = sub(sub(pod, "metadata"), "annotations");
    if (!a.contains(key) || !a[key].is_string()) {
        return absent;
    }
    const std::string& text = a[key].get_ref<const std::string&>();
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return absent;
    }
    return std::stoi(text);
}

}  // namespace

int completion_index(const json& pod) {
    return annotation_number(pod, "batch.kubernetes.io/job-completion-index", -1);
}

int index_failure_count(const json& pod) {
    return annotation_number(pod, "batch.kubernetes.io/job-index-failure-count", 0);
}

std::set<int> parse_indexes(const std::string& text) {
    std::set<int> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(',', pos);
        std::string part =
            text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        std::size_t dash = part.find('-');
        try {
            int first = std::stoi(part.substr(0, dash));
            int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
            for (int i = first; i <= last && i - first < 100000; ++i) {
                out.insert(i);
            }
        } catch (const std::exception&) {
            // a malformed interval is skipped, as the controller does
        }
        pos = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
}

std::string format_indexes(const std::set<int>& indexes) {
    std::string out;
    for (auto it = indexes.begin(); it != indexes.end();) {
        int first = *it;
        int last = first;
        while (++it != indexes.end() && *it == last + 1) {
            ++last;
        }
        out += (out.empty() ? "" : ",") + std::to_string(first);
        if (last != first) {
            out += "-" + std::to_string(last);
        }
    }
    return out;
}

PolicyMatch match_pod_failure_policy(const json& job, const json& pod) {
    if (!sub(job, "spec").contains("podFailurePolicy")) {
        return {};
    }
    const json& rules = sub(sub(job, "spec"), "podFailurePolicy").value("rules", json::array());
    std::string pod_ref =
        sub(pod, "metadata").value("namespace", "") + "/" + sub(pod, "metadata").value("name", "");
    for (size_t i = 0; i < rules.size(); ++i) {
        const json& rule = rules[i];
        std::string action = rule.value("action", "");
        if (rule.contains("onExitCodes")) {
            auto m = matching_container(rule, pod);
            if (m) {
                return {action, "Container " + m->first + " for pod " + pod_ref +
                                    " failed with exit code " + std::to_string(m->second) +
                                    " matching " + action + " rule at index " + std::to_string(i)};
            }
        }
        for (const auto& pattern : rule.value("onPodConditions", json::array())) {
            for (const auto& c : sub(pod, "status").value("conditions", json::array())) {
                if (c.value("type", "") == pattern.value("type", "") &&
                    c.value("status", "") == pattern.value("status", "True")) {
                    return {action, "Pod " + pod_ref + " has condition " +
                                        pattern.value("type", "") + " matching " + action +
                                        " rule at index " + std::to_string(i)};
                }
            }
        }
    }
    return {};
}

const json* find_true_condition(const json& job, const std::string& type) {
    if (!job.contains("status") || !sub(job, "status").contains("conditions")) {
        return nullptr;
    }
    for (const auto& c : sub(sub(job, "status"), "conditions")) {
        if (c.value("type", "") == type && c.value("status", "") == "True") {
            return &c;
        }
    }
    return nullptr;
}

std::chrono::seconds pod_failure_backoff(int failures) {
    int64_t d = 10;
    for (int i = 1; i < failures; ++i) {
        d *= 2;
        if (d >= 600) {
            return std::chrono::seconds(600);
        }
    }
    return std::chrono::seconds(d);
}

}  // namespace kubesim
