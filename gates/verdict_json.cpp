#include "gates/verdict_json.h"

#include "gates/memory_json.h"

namespace envgate::gates {
namespace {

using json = nlohmann::ordered_json;

json last_failure_json(const std::optional<Failure>& f) {
    if (!f) {
        return nullptr;
    }
    return {{"pod", f->pod},
            {"container", f->container ? json(*f->container) : json(nullptr)},
            {"kind", f->kind == FailureKind::pod ? "pod" : "restart"},
            {"reason", f->reason},
            {"exit_code", f->exit_code ? json(*f->exit_code) : json(nullptr)},
            {"message", f->message}};
}

json counts_json(const Counts& c) {
    json j = {{"restarts", c.restarts},
              {"restart_limit", c.restart_limit},
              {"failed_pods", c.failed_pods},
              {"failed_pod_limit", c.failed_pod_limit},
              {"attempt", c.attempt},
              {"limit", c.limit},
              {"left", c.left}};
    if (c.index) {
        j["index"] = *c.index;
    }
    return j;
}

}  // namespace

std::string encode_verdict(const Gate& gate, const Verdict& v) {
    json j = json::object();
    j["gate"] = names(gate).name;
    j["phase"] = phase_name(v.phase);
    j["state"] = state_name(v.state);
    j["progressing"] = {{"status", v.progressing.status ? "True" : "False"},
                        {"reason", v.progressing.reason},
                        {"message", v.progressing.message}};
    j["counts"] = counts_json(v.counts);
    j["last_failure"] = last_failure_json(v.last_failure);
    j["command"] = v.command ? json(*v.command) : json(nullptr);
    // The event to record: an ending verdict's own, else the newest counted run's.
    const Event* event = v.event ? &*v.event : nullptr;
    for (auto it = v.runs.rbegin(); event == nullptr && it != v.runs.rend(); ++it) {
        event = it->event ? &*it->event : nullptr;
    }
    auto event_json = [](const Event* e) {
        return e != nullptr
                   ? json{{"type", e->type}, {"reason", e->reason}, {"message", e->message}}
                   : json(nullptr);
    };
    j["event"] = event_json(event);
    // Each failed run this pass saw first: its line, command and event.
    j["runs"] = json::array();
    for (const SeenRun& r : v.runs) {
        j["runs"].push_back({{"key", r.key},
                             {"counted", r.counted},
                             {"message", r.message},
                             {"command", r.command ? json(*r.command) : json(nullptr)},
                             {"event", event_json(r.event ? &*r.event : nullptr)}});
    }
    // Re-read as ordered JSON: memory_to_json builds a (key-sorted) nlohmann::json.
    j["memory"] = json::parse(memory_to_json(v.memory).dump());
    return j.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace envgate::gates
