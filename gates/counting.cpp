#include "gates/counting.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

bool has_condition(const Pod& pod, const std::string& type, const std::string& status) {
    return std::any_of(pod.conditions.begin(), pod.conditions.end(),
                       [&](const Condition& c) { return c.type == type && c.status == status; });
}

bool has_condition(const Pod& pod, std::string_view type, std::string_view status,
                   std::string_view reason) {
    return std::any_of(pod.conditions.begin(), pod.conditions.end(), [&](const Condition& c) {
        return c.type == type && c.status == status && c.reason == reason;
    });
}

// When a pod's failure as a whole began, as far as it says: its DisruptionTarget's time,
// else the time it turned not Ready.
std::optional<TimePoint> pod_failure_began(const Pod& pod) {
    for (const char* type : {"DisruptionTarget", "Ready"}) {
        for (const Condition& c : pod.conditions) {
            if (c.type == type && c.status == (type == "Ready"sv ? "False" : "True") &&
                c.last_transition_time) {
                return c.last_transition_time;
            }
        }
    }
    return std::nullopt;
}

// The first container (app containers first, then init) whose terminated run matches
// the onExitCodes requirement `rule`; a container still stopping has no exit code yet.
const ContainerStatus* exit_code_match(const ExitCodeRule& rule, const Pod& pod) {
    auto matches = [&](const ContainerStatus& c) {
        if (!c.state.terminated || c.state.terminated->exit_code == 0) {
            return false;
        }
        if (rule.container_name && *rule.container_name != c.name) {
            return false;
        }
        int code = c.state.terminated->exit_code;
        bool in = std::find(rule.values.begin(), rule.values.end(), code) != rule.values.end();
        return rule.op == "NotIn"sv ? !in : in;
    };
    for (const auto* list : {&pod.containers, &pod.init_containers}) {
        auto it = std::find_if(list->begin(), list->end(), matches);
        if (it != list->end()) {
            return &*it;
        }
    }
    return nullptr;
}

const Condition* condition_match(const PodFailureRule& rule, const Pod& pod) {
    for (const Condition& c : pod.conditions) {
        for (const PodConditionPattern& p : rule.on_pod_conditions) {
            if (c.type == p.type && c.status == p.status) {
                return &c;
            }
        }
    }
    return nullptr;
}

bool rule_matches(const PodFailureRule& rule, const Pod& pod) {
    if (rule.on_exit_codes) {
        return exit_code_match(*rule.on_exit_codes, pod) != nullptr;
    }
    return condition_match(rule, pod) != nullptr;
}

// The first rule matching `pod` and its position, or nullptr.
const PodFailureRule* first_rule(const Job& job, const Pod& pod, std::size_t& index) {
    if (!job.pod_failure_policy) {
        return nullptr;
    }
    for (index = 0; index < job.pod_failure_policy->size(); ++index) {
        if (rule_matches((*job.pod_failure_policy)[index], pod)) {
            return &(*job.pod_failure_policy)[index];
        }
    }
    return nullptr;
}

bool has_finalizer(const Pod& pod) {
    return std::find(pod.finalizers.begin(), pod.finalizers.end(), k_tracking_finalizer) !=
           pod.finalizers.end();
}

bool only_replace_failed_pods(const Job& job) {
    return job.pod_failure_policy.has_value() ||
           job.pod_replacement_policy.value_or("") == "Failed"sv;
}

bool is_active_phase(const Pod& pod) {
    return pod.phase == "Pending"sv || pod.phase == "Running"sv;
}

void assign_run_key(std::string& key, const Pod& pod, const ContainerStatus& c) {
    key.assign(pod.uid.empty() ? pod.name : pod.uid).append("/").append(c.name);
}

// The failed runs of `c` that are runs of their own: not the newest when it ended with
// its pod, nor the one before when the pod's failure cut it (the kubelet restarted the
// run its eviction killed before it published the phase Failed, or removed its container
// and counted that run in restartCount itself).
int own_failed_runs(const Pod& pod, const ContainerStatus& c) {
    // Waiting after a run the kubelet could no longer locate is no back-off: restartCount
    // counts that run already.
    const bool unlocated = waits_after_unlocated_run(pod, c);
    const bool newest_ended = ended_with_pod(pod, c);
    int runs = newest_ended || unlocated ? c.restart_count : failed_runs(c);
    // lastState is the run before the current one, counted above, unless the container
    // waits to restart after it (then it is the newest run, which ended with the pod).
    const bool before_counted = !newest_ended || !c.state.waiting || unlocated;
    if (before_counted && cut_by_pod_failure(pod, c)) {
        runs = std::max(runs - 1, 0);
    }
    return runs;
}

// Merges one container's failed runs into `a` (at least what was remembered) and adds
// them to the restart sum while its pod is Pending or Running; returns those runs.
int count_container(Attempts& a, const Pod& pod, const ContainerStatus& c, std::string& key) {
    // A pod that failed as a whole (evicted, node shutdown: phase Failed without being
    // restarted) is one failed pod; its last run ended with it and is not also a failed
    // container run (the controller counts restarts of Pending/Running pods only). So is
    // a run killed and not restarted, also while its pod still shows Running: the kubelet
    // publishes an eviction's kill before the phase Failed. A run that failed on its own
    // before a deletion stopped the pod is a failed run.
    int runs = own_failed_runs(pod, c);
    bool active = is_active_phase(pod);
    if (runs == 0 && !active) {
        return 0;  // nothing to remember, nothing to add
    }
    assign_run_key(key, pod, c);
    auto it = a.failed_runs.find(key);
    if (it != a.failed_runs.end()) {
        if (runs > it->second) {
            a.rose.emplace_back(key, it->second);
        }
        runs = it->second = std::max(it->second, runs);
    } else if (runs > 0) {
        a.rose.emplace_back(key, 0);
        a.failed_runs.emplace(key, runs);
    }
    if (active) {
        a.restarts = sat_add(a.restarts, runs);
    }
    return runs;
}

bool per_index(const Job& job) {
    return job.indexed && job.backoff_limit_per_index.has_value();
}

// backoffLimitPerIndex: a pod of index i carries the failures of i before it; a failed
// one adds itself.
int pod_index_failures(const Job& job, const Pod& pod) {
    bool failed = is_pod_failed(job, pod) && !ignored_by_policy(job, pod);
    return sat_add(pod.index_failure_count, failed ? 1 : 0);
}

// Keeps the index with the most failures (the lowest on a tie).
void count_index(Attempts& a, const Job& job, const Pod& pod) {
    if (!per_index(job) || !pod.completion_index) {
        return;
    }
    int failures = pod_index_failures(job, pod);
    if (failures == 0) {
        return;
    }
    if (!a.index || failures > a.index_failures ||
        (failures == a.index_failures && *pod.completion_index < *a.index)) {
        a.index = pod.completion_index;
        a.index_failures = failures;
    }
    a.index_limit = sat_add(*job.backoff_limit_per_index, 1);
}

}  // namespace

bool selects(const Job& job, const Pod& pod) {
    if (!job.namespace_.empty() && !pod.namespace_.empty() && job.namespace_ != pod.namespace_) {
        return false;
    }
    if (job.selector.empty()) {
        return !job.uid.empty() && pod.owner_uid == job.uid;
    }
    return std::all_of(job.selector.begin(), job.selector.end(), [&](const auto& kv) {
        auto it = pod.labels.find(kv.first);
        return it != pod.labels.end() && it->second == kv.second;
    });
}

std::vector<const Pod*> select_pods(const Job& job, const std::vector<Pod>& pods) {
    std::vector<const Pod*> out;
    for (const Pod& p : pods) {
        if (selects(job, p)) {
            out.push_back(&p);
        }
    }
    return out;
}

bool ignored_by_policy(const Job& job, const Pod& pod) {
    std::size_t index = 0;
    const PodFailureRule* rule = first_rule(job, pod, index);
    return rule != nullptr && rule->action == "Ignore"sv;
}

std::optional<std::string> ignore_reason(const Job& job, const Pod& pod) {
    std::size_t index = 0;
    const PodFailureRule* rule = first_rule(job, pod, index);
    if (rule == nullptr || rule->action != "Ignore"sv) {
        return std::nullopt;
    }
    std::string out = "podFailurePolicy rule " + std::to_string(index) + " (Ignore) matches ";
    if (rule->on_exit_codes) {
        const ContainerStatus& c = *exit_code_match(*rule->on_exit_codes, pod);
        return out + "exit code " + std::to_string(c.state.terminated->exit_code) +
               " of container " + c.name;
    }
    return out + "its condition " + condition_match(*rule, pod)->type;
}

std::optional<std::string> fail_job_message(const Job& job, const std::vector<const Pod*>& pods) {
    if (!job.pod_failure_policy) {
        return std::nullopt;
    }
    for (const Pod* pod : pods) {
        std::size_t index = 0;
        const PodFailureRule* rule =
            is_pod_failed(job, *pod) ? first_rule(job, *pod, index) : nullptr;
        if (rule == nullptr || rule->action != "FailJob"sv) {
            continue;
        }
        std::string at = " matching FailJob rule at index " + std::to_string(index);
        std::string who = pod->namespace_ + "/" + pod->name;
        if (rule->on_exit_codes) {
            const ContainerStatus& c = *exit_code_match(*rule->on_exit_codes, *pod);
            return "Container " + c.name + " for pod " + who + " failed with exit code " +
                   std::to_string(c.state.terminated->exit_code) + at;
        }
        return "Pod " + who + " has condition " + condition_match(*rule, *pod)->type + at;
    }
    return std::nullopt;
}

namespace {

using IndexRanges = std::vector<std::pair<long long, long long>>;  // [first, last]

// status.failedIndexes ("1,3-5") as ranges; parts not in the API's form are left out.
IndexRanges parse_index_ranges(const std::string& text) {
    IndexRanges ranges;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find(',', at);
        std::string part = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? text.size() : end + 1;
        std::size_t dash = part.find('-');
        try {
            long long first = std::stoll(part.substr(0, dash));
            long long last = dash == std::string::npos ? first : std::stoll(part.substr(dash + 1));
            if (first >= 0 && last >= first) {
                ranges.emplace_back(first, last);
            }
        } catch (const std::exception&) {
            // not the API's form: counted from the pods alone
        }
    }
    return ranges;
}

// The failed indexes of status.failedIndexes and those a failed pod takes past
// backoffLimitPerIndex, increasing, overlapping and adjacent ranges merged.
IndexRanges failed_index_ranges(const Job& job, const std::vector<const Pod*>& pods) {
    IndexRanges ranges = parse_index_ranges(job.failed_indexes.value_or(""));
    for (const Pod* pod : pods) {
        if (pod->completion_index && is_pod_failed(job, *pod) && !ignored_by_policy(job, *pod) &&
            sat_add(pod->index_failure_count, 1) > *job.backoff_limit_per_index) {
            ranges.emplace_back(*pod->completion_index, *pod->completion_index);
        }
    }
    std::sort(ranges.begin(), ranges.end());
    IndexRanges merged;
    for (const auto& r : ranges) {
        if (!merged.empty() && r.first <= merged.back().second + 1) {
            merged.back().second = std::max(merged.back().second, r.second);
        } else {
            merged.push_back(r);
        }
    }
    return merged;
}

}  // namespace

int failed_index_count(const Job& job, const std::vector<const Pod*>& pods) {
    if (!per_index(job)) {
        return 0;
    }
    long long count = 0;
    for (const auto& [first, last] : failed_index_ranges(job, pods)) {
        count += last - first + 1;
    }
    return static_cast<int>(std::min<long long>(count, 2147483647LL));
}

std::string failed_indexes_text(const Job& job, const std::vector<const Pod*>& pods) {
    const std::string& status = job.failed_indexes.value_or("");
    if (!per_index(job)) {
        return status;
    }
    std::string out;
    for (const auto& [first, last] : failed_index_ranges(job, pods)) {
        out += (out.empty() ? "" : ",") + std::to_string(first);
        if (last > first) {
            out += (last == first + 1 ? "," : "-") + std::to_string(last);
        }
    }
    return out.empty() ? status : out;
}

int index_failures(const Job& job, const std::vector<const Pod*>& pods, int index) {
    int failures = 0;
    for (const Pod* pod : pods) {
        if (pod->completion_index == index) {
            failures = std::max(failures, pod_index_failures(job, *pod));
        }
    }
    return failures;
}

int backoff_limit(const Job& job) {
    if (job.backoff_limit) {
        return *job.backoff_limit;
    }
    return job.backoff_limit_per_index ? 2147483647 : k_default_backoff_limit;
}

bool managed_elsewhere(const Job& job) {
    return job.managed_by && *job.managed_by != k_job_controller;
}

std::optional<TimePoint> deleted_at(const Pod& pod) {
    if (!pod.deletion_timestamp) {
        return std::nullopt;
    }
    return *pod.deletion_timestamp -
           std::chrono::seconds(pod.deletion_grace_period_seconds.value_or(0));
}

bool removed_by_suspension(const Job& job, const Pod& pod) {
    if (!pod.deletion_timestamp || has_condition(pod, "DisruptionTarget", "True")) {
        return false;
    }
    for (const Condition& c : job.conditions) {
        if (c.type != "Suspended"sv) {
            continue;
        }
        if (c.status == "True"sv) {
            return true;
        }
        return c.last_transition_time && *deleted_at(pod) <= *c.last_transition_time;
    }
    return job.suspend;
}

bool is_pod_failed(const Job& job, const Pod& pod) {
    if (pod.phase == "Failed"sv) {
        return true;
    }
    if (only_replace_failed_pods(job)) {
        return false;
    }
    return pod.deletion_timestamp.has_value() && pod.phase != "Succeeded"sv;
}

bool newest_run_failed(const ContainerStatus& c) {
    if (c.state.terminated) {
        return c.state.terminated->exit_code != 0;
    }
    return c.state.waiting && c.last_state.terminated && c.last_state.terminated->exit_code != 0;
}

bool killed_not_restarted(const ContainerStatus& c) {
    if (!c.state.terminated) {
        return false;
    }
    const ContainerTerminated& t = *c.state.terminated;
    return (t.exit_code == 137 || t.exit_code == 143) && t.reason != "OOMKilled"sv;
}

bool ended_with_pod(const Pod& pod, const ContainerStatus& c) {
    return killed_not_restarted(c) || (pod.phase == "Failed"sv && !pod.deletion_timestamp);
}

bool failed_as_a_whole(const Pod& pod) {
    if (pod.deletion_timestamp) {
        return false;
    }
    return pod.phase == "Failed"sv ||
           (is_active_phase(pod) && has_condition(pod, "Ready", "False", "PodFailed"));
}

bool waits_after_unlocated_run(const Pod& pod, const ContainerStatus& c) {
    if (!c.state.waiting || !c.last_state.terminated || !failed_as_a_whole(pod)) {
        return false;
    }
    const ContainerTerminated& t = *c.last_state.terminated;
    return t.exit_code == 137 && t.reason == "ContainerStatusUnknown"sv;
}

bool cut_by_pod_failure(const Pod& pod, const ContainerStatus& c) {
    if (!c.last_state.terminated || !failed_as_a_whole(pod)) {
        return false;
    }
    const ContainerTerminated& t = *c.last_state.terminated;
    if ((t.exit_code != 137 && t.exit_code != 143) || t.reason == "OOMKilled"sv) {
        return false;
    }
    const std::optional<TimePoint> began = pod_failure_began(pod);
    return !began || !t.finished_at || *t.finished_at >= *began;
}

bool stopped_by_deletion(const Pod& pod, const ContainerStatus& c) {
    return pod.deletion_timestamp && killed_not_restarted(c);
}

int failed_runs(const ContainerStatus& c) {
    return sat_add(c.restart_count, newest_run_failed(c) ? 1 : 0);
}

std::string run_key(const Pod& pod, const ContainerStatus& c) {
    std::string key;
    assign_run_key(key, pod, c);
    return key;
}

Attempts count_attempts(const Job& job, const std::vector<const Pod*>& pods, RunCounts remembered) {
    Attempts a;
    int limit = backoff_limit(job);
    a.restarts_apply = job.restart_policy == "OnFailure"sv;
    a.restart_limit = std::max(limit, 1);
    a.failed_pod_limit = sat_add(limit, 1);
    a.failed_runs = std::move(remembered);
    a.failed_pods = sat_add(job.failed, static_cast<int>(job.uncounted_failed.size()));
    const auto& uncounted = job.uncounted_failed;
    std::string key;  // reused: one allocation for every container's key
    for (const Pod* pod : pods) {
        if (is_pod_failed(job, *pod) && has_finalizer(*pod) && !ignored_by_policy(job, *pod) &&
            std::find(uncounted.begin(), uncounted.end(), pod->uid) == uncounted.end()) {
            a.failed_pods = sat_add(a.failed_pods, 1);
        }
        count_index(a, job, *pod);
        if (!a.restarts_apply) {
            continue;
        }
        const bool stopped = pod->deletion_timestamp &&
                             !has_condition(*pod, "DisruptionTarget", "True") &&
                             !removed_by_suspension(job, *pod);
        int runs = 0;
        for (const auto* list : {&pod->init_containers, &pod->containers}) {
            for (const ContainerStatus& c : *list) {
                runs = sat_add(runs, count_container(a, *pod, c, key));
                if (stopped) {
                    a.deleted_restarts = sat_add(a.deleted_restarts, c.restart_count);
                }
            }
        }
        if (pod->phase == "Succeeded"sv) {
            a.finished_restarts = std::max(a.finished_restarts, runs);
        }
    }
    return a;
}

}  // namespace envgate::gates
