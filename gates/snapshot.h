// Typed snapshots of a Kubernetes Job and its pods: only the fields the gate reads.
// gates/decode.h fills them from API JSON; tests may build them by hand. Absent
// optional fields stay empty, as Kubernetes omits empty values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/time.h"

namespace envgate::gates {

using Labels = std::map<std::string, std::string>;

// A Job or pod condition (`status.conditions[]`).
struct Condition {
    std::string type;
    std::string status;  // "True", "False", "Unknown"
    std::string reason;
    std::string message;
    std::optional<TimePoint> last_transition_time;
};

struct ContainerWaiting {
    std::string reason;
    std::string message;
};

struct ContainerTerminated {
    int exit_code = 0;
    std::string reason;
    std::string message;
    std::optional<TimePoint> finished_at;
};

// One of `state` / `lastState`: at most one of waiting, running, terminated.
struct ContainerState {
    std::optional<ContainerWaiting> waiting;
    bool running = false;
    std::optional<ContainerTerminated> terminated;
};

struct ContainerStatus {
    std::string name;
    int restart_count = 0;
    ContainerState state;
    ContainerState last_state;
};

struct Pod {
    std::string name;
    std::string namespace_;
    std::string uid;
    // metadata.resourceVersion as a number (0: absent or not a number): the revision of
    // the pod's last write, which orders failures that end in the same second.
    std::uint64_t resource_version = 0;
    Labels labels;
    std::vector<std::string> finalizers;
    std::string owner_uid;  // the controller ownerReference's uid, if any
    std::optional<TimePoint> deletion_timestamp;
    std::optional<int> deletion_grace_period_seconds;
    // Indexed Jobs: annotations batch.kubernetes.io/job-completion-index and
    // .../job-index-failure-count (failures of this index before this pod; 0 if absent).
    std::optional<int> completion_index;
    int index_failure_count = 0;
    std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
    std::string reason;
    std::string message;
    std::vector<Condition> conditions;
    std::vector<ContainerStatus> init_containers;  // sidecars included
    std::vector<ContainerStatus> containers;
};

// `spec.podFailurePolicy.rules[]`: only what decides whether a failed pod counts.
struct ExitCodeRule {
    std::optional<std::string> container_name;
    std::string op;  // In, NotIn
    std::vector<int> values;
};

struct PodConditionPattern {
    std::string type;
    std::string status = "True";
};

struct PodFailureRule {
    std::string action;  // FailJob, Ignore, Count, FailIndex
    std::optional<ExitCodeRule> on_exit_codes;
    std::vector<PodConditionPattern> on_pod_conditions;
};

struct Job {
    std::string name;
    std::string namespace_;
    std::string uid;
    std::map<std::string, std::string> annotations;
    std::optional<int> backoff_limit;  // missing: the API's default (default_backoff_limit)
    Labels selector;                   // spec.selector.matchLabels
    std::string restart_policy;        // spec.template.spec.restartPolicy
    std::optional<std::string> pod_replacement_policy;
    std::optional<std::vector<PodFailureRule>> pod_failure_policy;
    bool suspend = false;
    std::optional<std::string> managed_by;  // spec.managedBy
    bool indexed = false;                   // spec.completionMode Indexed
    std::optional<int> completions;
    std::optional<int> backoff_limit_per_index;
    std::optional<int> max_failed_indexes;
    std::optional<int> active_deadline_seconds;     // spec.activeDeadlineSeconds
    std::optional<int> ttl_seconds_after_finished;  // spec.ttlSecondsAfterFinished
    std::optional<TimePoint> start_time;            // status.startTime
    std::vector<Condition> conditions;
    std::optional<std::string> failed_indexes;  // status.failedIndexes, "1,3-5"
    int active = 0;
    int failed = 0;
    int succeeded = 0;
    std::vector<std::string> uncounted_failed;  // status.uncountedTerminatedPods.failed
};

}  // namespace envgate::gates
