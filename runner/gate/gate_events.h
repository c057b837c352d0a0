// The Warning events a gate records on its Job (spec/gates.md): events.k8s.io/v1
// with reportingController envgate, falling back to core v1 where that API is
// missing. Each event's name is derived from what it announces, so a restarted
// envgate that records it again gets AlreadyExists instead of a duplicate.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gates/status.h"
#include "gates/time.h"
#include "gates/verdict.h"
#include "runner/kube/kube_api.h"

namespace envgate {

struct JobIdentity {
    std::string name;
    std::string namespace_;
    std::string uid;
};

// A name unique to this announcement on this Job: `<job>.envgate-<hash8>`, hashed
// over the Job's uid, the event reason and the memory's counts.
std::string gate_event_name(const JobIdentity& job, const gates::Event& event,
                            const gates::GateMemory& memory);

// The events.k8s.io/v1 Event object.
nlohmann::json events_v1_event(const JobIdentity& job, const gates::Event& event,
                               const std::string& name, const std::string& instance, TimePoint now);

// The same event as a core v1 Event (what `kubectl describe` lists on older servers).
nlohmann::json core_v1_event(const JobIdentity& job, const gates::Event& event,
                             const std::string& name, const std::string& instance, TimePoint now);

// Records `event` once: AlreadyExists counts as recorded.
Status record_gate_event(kube::KubeApi& api, const JobIdentity& job, const gates::Event& event,
                         const gates::GateMemory& memory, const std::string& instance,
                         TimePoint now);

}  // namespace envgate
