// Operations on stored objects shared by the API handlers, the Job controller, the
// kubelet and the fault API: graceful deletion, pod disruption and Event recording.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "test/kubesim/store.h"

namespace kubesim {

struct DeleteOptions {
    std::optional<int64_t> grace_seconds;
    std::string precondition_rv;
    std::string precondition_uid;
    std::string propagation;  // Background (default), Foreground, Orphan
};

// Deletes as the API server does: pods get deletionTimestamp = now + grace (the kubelet
// finishes them), objects with finalizers keep a deletionTimestamp until the finalizers
// are gone, others are removed at once. Returns the object as last stored.
Result<json> delete_object(Store& store, const std::string& resource, const std::string& ns,
                           const std::string& name, const DeleteOptions& options);
// Adds the DisruptionTarget condition (`reason`, `message`) to a pod and deletes it
// gracefully: preemption and API eviction.
Result<json> disrupt_pod(Store& store, const std::string& ns, const std::string& name,
                         const std::string& reason, const std::string& message);
// Records a core v1 Event about `involved` (a stored object) from `component`.
void record_event(Store& store, const json& involved, const std::string& type,
                  const std::string& reason, const std::string& message,
                  const std::string& component);
// Sets or replaces the condition of `type` in `conditions` (an array); the transition
// time changes only when the status does.
void set_condition(json& conditions, const json& condition);

}  // namespace kubesim
