// The Warning events a gate records on its Job (spec/gates.md): events.k8s.io/v1
// with reportingController envgate, falling back to core v1 where that API is
// missing. Each event's name is derived from what it announces, so a restarted
// envgate that records it again gets AlreadyExists instead of a duplicate.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "gates/verdict.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/kube/kube_api.h"
#include "runner/report/job_log.h"

namespace envgate {

struct JobIdentity {
    std::string name;
    std::string namespace_;
    std::string uid;
};

// A name unique to this announcement on this Job: `<job>.envgate-<hash8>`, hashed
// over the Job's uid, the event reason and `what` it announces (a failed run's key, or
// the Job's failure), so one run's event is one event, whoever records it again.
std::string gate_event_name(const JobIdentity& job, const gates::Event& event,
                            const std::string& what);

// The events.k8s.io/v1 Event object.
nlohmann::json events_v1_event(const JobIdentity& job, const gates::Event& event,
                               const std::string& name, const std::string& instance, TimePoint now);

// The same event as a core v1 Event (what `kubectl describe` lists on older servers).
nlohmann::json core_v1_event(const JobIdentity& job, const gates::Event& event,
                             const std::string& name, const std::string& instance, TimePoint now);

// Records `event` once: AlreadyExists counts as recorded.
Status record_gate_event(kube::KubeApi& api, const JobIdentity& job, const gates::Event& event,
                         const std::string& what, const std::string& instance, TimePoint now);

// Records a gate's events best effort. Events are for `kubectl describe` readers; the
// gate's verdict is in the Job's annotations and the job log. So a refused Event
// (403 without RBAC for events, a 500) never fails the gate: the first refusal logs
// one warning naming the cause, later ones are silent, and gating goes on.
class GateEventRecorder {
  public:
    GateEventRecorder(kube::KubeApi& api, JobLog& log) : m_api(api), m_log(log) {}

    void record(const JobIdentity& job, const gates::Event& event, const std::string& what,
                const std::string& instance, TimePoint now);
    int refused() const { return m_refused; }

  private:
    kube::KubeApi& m_api;
    JobLog& m_log;
    int m_refused = 0;
};

}  // namespace envgate
