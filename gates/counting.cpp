#include "gates/counting.h"

#include <algorithm>

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

bool has_condition(const Pod& pod, const std::string& type, const std::string& status) {
    return std::any_of(pod.conditions.begin(), pod.conditions.end(),
                       [&](const Condition& c) { return c.type == type && c.status == status; });
}

bool exit_code_matches(const ExitCodeRule& rule, const Pod& pod) {
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
    return std::any_of(pod.containers.begin(), pod.containers.end(), matches) ||
           std::any_of(pod.init_containers.begin(), pod.init_containers.end(), matches);
}

bool rule_matches(const PodFailureRule& rule, const Pod& pod) {
    if (rule.on_exit_codes) {
        return exit_code_matches(*rule.on_exit_codes, pod);
    }
    return std::any_of(
        rule.on_pod_conditions.begin(), rule.on_pod_conditions.end(),
        [&](const PodConditionPattern& p) { return has_condition(pod, p.type, p.status); });
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

// Merges one container's failed runs into `a` (at least what was remembered) and adds
// them to the restart sum while its pod is Pending or Running.
void count_container(Attempts& a, const Pod& pod, const ContainerStatus& c, std::string& key) {
    int runs = stopped_by_deletion(pod, c) ? c.restart_count : failed_runs(c);
    bool active = is_active_phase(pod);
    if (runs == 0 && !active) {
        return;  // nothing to remember, nothing to add
    }
    assign_run_key(key, pod, c);
    auto it = a.failed_runs.find(key);
    if (it != a.failed_runs.end()) {
        runs = it->second = std::max(it->second, runs);
    } else if (runs > 0) {
        a.failed_runs.emplace(key, runs);
    }
    if (active) {
        a.restarts = sat_add(a.restarts, runs);
    }
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
    if (!job.pod_failure_policy) {
        return false;
    }
    for (const PodFailureRule& rule : *job.pod_failure_policy) {
        if (rule_matches(rule, pod)) {
            return rule.action == "Ignore"sv;
        }
    }
    return false;
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

bool stopped_by_deletion(const Pod& pod, const ContainerStatus& c) {
    if (!pod.deletion_timestamp || !c.state.terminated) {
        return false;
    }
    const ContainerTerminated& t = *c.state.terminated;
    return (t.exit_code == 137 || t.exit_code == 143) && t.reason != "OOMKilled"sv;
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
    int limit = job.backoff_limit.value_or(k_default_backoff_limit);
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
        if (!a.restarts_apply) {
            continue;
        }
        for (const auto* list : {&pod->init_containers, &pod->containers}) {
            for (const ContainerStatus& c : *list) {
                count_container(a, *pod, c, key);
            }
        }
    }
    return a;
}

}  // namespace envgate::gates
