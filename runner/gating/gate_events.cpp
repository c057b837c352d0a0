#include "runner/gating/gate_events.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>

namespace envgate {
namespace {

using nlohmann::json;

constexpr size_t k_note_limit = 1024;  // events.k8s.io/v1 `note` is at most 1 kB

std::string cut_note(const std::string& text) {
    if (text.size() <= k_note_limit) {
        return text;
    }
    size_t n = k_note_limit - 3;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) {
        --n;
    }
    return text.substr(0, n) + "...";
}

json job_reference(const JobIdentity& job) {
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"name", job.name},
            {"namespace", job.namespace_},
            {"uid", job.uid}};
}

// What an Event says alike in both APIs: its name and namespace, the gate's reason and
// type, and which envgate reported it; each API adds its own keys.
json event_object(const char* api_version, const JobIdentity& job, const gates::Event& event,
                  const std::string& name, const std::string& instance) {
    return {{"apiVersion", api_version},
            {"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", job.namespace_}}},
            {"reason", event.reason},
            {"type", event.type},
            {"reportingInstance", instance}};
}

}  // namespace

std::string gate_event_name(const JobIdentity& job, const gates::Event& event,
                            const std::string& what) {
    Poco::SHA2Engine engine(Poco::SHA2Engine::SHA_256);
    engine.update(job.uid + "\n" + event.reason + "\n" + what);
    return job.name + ".envgate-" + Poco::DigestEngine::digestToHex(engine.digest()).substr(0, 8);
}

json events_v1_event(const JobIdentity& job, const gates::Event& event, const std::string& name,
                     const std::string& instance, TimePoint now) {
    json e = event_object("events.k8s.io/v1", job, event, name, instance);
    e.update({{"eventTime", format_rfc3339_micro(now)},
              {"reportingController", "envgate"},
              {"action", "Gate"},
              {"note", cut_note(event.message)},
              {"regarding", job_reference(job)}});
    return e;
}

json core_v1_event(const JobIdentity& job, const gates::Event& event, const std::string& name,
                   const std::string& instance, TimePoint now) {
    json e = event_object("v1", job, event, name, instance);
    e.update({{"involvedObject", job_reference(job)},
              {"message", event.message},
              {"source", {{"component", "envgate"}}},
              {"reportingComponent", "envgate"},
              {"firstTimestamp", format_rfc3339(now)},
              {"lastTimestamp", format_rfc3339(now)},
              {"count", 1}});
    return e;
}

Status record_gate_event(kube::KubeApi& api, const JobIdentity& job, const gates::Event& event,
                         const std::string& what, const std::string& instance, TimePoint now) {
    std::string name = gate_event_name(job, event, what);
    kube::ResourceRef v1{"events.k8s.io/v1", "events", job.namespace_, ""};
    auto created = api.create(v1, events_v1_event(job, event, name, instance, now));
    if (created.is_ok() || created.status().code() == Code::already_exists) {
        return Status::ok();
    }
    if (created.status().code() != Code::not_found) {
        return created.status();
    }
    // No events.k8s.io/v1 on this server: record through the core API.
    auto core = api.create(kube::core_events(job.namespace_),
                           core_v1_event(job, event, name, instance, now));
    if (core.is_ok() || core.status().code() == Code::already_exists) {
        return Status::ok();
    }
    return core.status();
}

void GateEventRecorder::record(const JobIdentity& job, const gates::Event& event,
                               const std::string& what, const std::string& instance,
                               TimePoint now) {
    Status recorded = record_gate_event(m_api, job, event, what, instance, now);
    if (recorded.is_ok()) {
        return;
    }
    if (m_refused++ == 0) {
        m_log.line(Tone::retrying, "warning: the gate's Events cannot be recorded (" +
                                       recorded.message() +
                                       "); gating goes on, the verdict is in the Job's "
                                       "annotations and this log");
    }
}

}  // namespace envgate
