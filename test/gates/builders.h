// Small builders of Job and pod snapshots for the gate tests: a Job "mig" in namespace
// "gitlab" whose selector is its controller uid, and pods that Job selects.
#pragma once

#include <string>

#include "gates/snapshot.h"
#include "runner/base/vocab/time.h"

namespace envgate::gates::test {

inline TimePoint at(const char* rfc3339) {
    return *parse_rfc3339(rfc3339);
}
inline const TimePoint k_now = at("2025-05-29T08:00:00Z");

// The event of a verdict: its Failed event, else the Retrying event of the newest run it
// saw first (each run records its own).
inline std::optional<Event> event_of(const Verdict& v) {
    if (v.event) {
        return v.event;
    }
    for (auto it = v.runs.rbegin(); it != v.runs.rend(); ++it) {
        if (it->event) {
            return it->event;
        }
    }
    return std::nullopt;
}

inline Job job(std::string restart_policy = "OnFailure", std::optional<int> backoff_limit = 6) {
    Job j;
    j.name = "mig";
    j.namespace_ = "gitlab";
    j.uid = "job-uid";
    j.backoff_limit = backoff_limit;
    j.selector = {{"batch.kubernetes.io/controller-uid", "job-uid"}};
    j.restart_policy = std::move(restart_policy);
    j.active = 1;
    return j;
}

inline Condition cond(std::string type, std::string reason = "", std::string message = "",
                      std::string status = "True") {
    return Condition{std::move(type), std::move(status), std::move(reason), std::move(message),
                     at("2025-05-29T07:59:00Z")};
}

inline Job with_condition(Job j, Condition c) {
    j.conditions.push_back(std::move(c));
    return j;
}

inline Pod pod(const std::string& name, std::string phase = "Running",
               const std::string& controller_uid = "job-uid") {
    Pod p;
    p.name = name;
    p.namespace_ = "gitlab";
    p.uid = name + "-uid";
    p.labels = {{"batch.kubernetes.io/controller-uid", controller_uid},
                {"batch.kubernetes.io/job-name", "mig"}};
    p.finalizers = {"batch.kubernetes.io/job-tracking"};
    p.owner_uid = controller_uid;
    p.phase = std::move(phase);
    return p;
}

inline ContainerTerminated term(int exit_code, std::string reason = "Error",
                                std::string message = "boom",
                                const char* finished = "2025-05-29T07:58:00Z") {
    return ContainerTerminated{exit_code, std::move(reason), std::move(message), at(finished)};
}

// Waiting in CrashLoopBackOff after a failed run; `restarts` runs were restarted before.
inline ContainerStatus crashloop(std::string name, int restarts, int exit_code = 1,
                                 std::string message = "boom") {
    ContainerStatus c{std::move(name), restarts, {}, {}};
    c.state.waiting = ContainerWaiting{"CrashLoopBackOff", "back-off 10s restarting failed"};
    c.last_state.terminated = term(exit_code, "Error", std::move(message));
    return c;
}

inline ContainerStatus running(std::string name, int restarts = 0) {
    ContainerStatus c{std::move(name), restarts, {}, {}};
    c.state.running = true;
    if (restarts > 0) {
        c.last_state.terminated = term(1);
    }
    return c;
}

inline ContainerStatus terminated(std::string name, ContainerTerminated t, int restarts = 0) {
    ContainerStatus c{std::move(name), restarts, {}, {}};
    c.state.terminated = std::move(t);
    return c;
}

inline ContainerStatus waiting(std::string name, std::string reason, std::string message) {
    ContainerStatus c{std::move(name), 0, {}, {}};
    c.state.waiting = ContainerWaiting{std::move(reason), std::move(message)};
    return c;
}

inline Pod with_containers(Pod p, std::vector<ContainerStatus> app,
                           std::vector<ContainerStatus> init = {}) {
    p.containers = std::move(app);
    p.init_containers = std::move(init);
    return p;
}

inline Pod disrupted(Pod p, std::string reason, std::string message) {
    p.conditions.push_back(Condition{"DisruptionTarget", "True", std::move(reason),
                                     std::move(message), at("2025-05-29T07:59:30Z")});
    return p;
}

// activeDeadlineSeconds 1, started 10 s before k_now, no condition written yet.
inline Job past_deadline(Job j) {
    j.active_deadline_seconds = 1;
    j.start_time = k_now - std::chrono::seconds(10);
    return j;
}

inline Pod deleting(Pod p) {
    p.deletion_timestamp = at("2025-05-29T07:59:40Z");
    return p;
}

}  // namespace envgate::gates::test
