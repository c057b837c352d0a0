#include "gates/restarts.h"

#include <algorithm>

#include "gates/counting.h"
#include "gates/messages.h"

namespace envgate::gates {

long long pod_restarts(const Pod& pod) {
    long long restarts = 0;
    for (const auto* statuses : {&pod.init_containers, &pod.containers}) {
        for (const ContainerStatus& c : *statuses) {
            restarts += std::max(c.restart_count, 0);
        }
    }
    return restarts;
}

bool restart_limit_unrecorded(const Job& job, const std::vector<Pod>& pods) {
    if (job.restart_policy != "OnFailure" ||
        (job.managed_by && *job.managed_by != k_job_controller)) {
        return false;  // another controller's Job: its timing is not this one's
    }
    for (const char* recorded : {"FailureTarget", "Failed", "Complete"}) {
        if (true_condition(job, recorded) != nullptr) {
            return false;
        }
    }
    long long restarts = 0;
    for (const Pod& pod : pods) {
        if (pod.phase == "Running" || pod.phase == "Pending") {
            restarts += pod_restarts(pod);
        }
    }
    int limit = job.backoff_limit.value_or(k_default_backoff_limit);
    return limit <= 0 ? restarts > 0 : restarts >= limit;
}

int container_run(const std::vector<Pod>& pods, const Failure& failure, Run which) {
    for (const auto& pod : pods) {
        if (pod.name != failure.pod) {
            continue;
        }
        if (!failure.container || failure.kind == FailureKind::pod) {
            return 0;
        }
        for (const auto* list : {&pod.containers, &pod.init_containers}) {
            for (const auto& c : *list) {
                if (c.name == *failure.container) {
                    bool before_current = which == Run::previous && !c.state.waiting;
                    return c.restart_count + (before_current ? 0 : 1);
                }
            }
        }
    }
    return -1;
}

}  // namespace envgate::gates
