#include "gates/memory_json.h"

#include <algorithm>

#include "gates/json_reader.h"

namespace envgate::gates {
namespace {

using namespace json_read;

json optional_time(const std::optional<TimePoint>& t) {
    return t ? json(format_rfc3339_micro(*t)) : json(nullptr);
}

Status read_failure(const json& j, const std::string& p, Failure& f) {
    TRY(expect_object(j, p));
    std::string kind = "restart";
    TRY(read_string(j, "pod", p, f.pod));
    TRY(read_string(j, "container", p, f.container));
    TRY(read_string(j, "kind", p, kind));
    if (kind != "restart" && kind != "pod") {
        return {Code::invalid, child(p, "kind") + ": expected \"restart\" or \"pod\", got \"" +
                                   kind.substr(0, 40) + "\""};
    }
    f.kind = kind == "pod" ? FailureKind::pod : FailureKind::restart;
    TRY(read_string(j, "reason", p, f.reason));
    TRY(read_int(j, "exit_code", p, f.exit_code));
    TRY(read_bool(j, "exit_code_trusted", p, f.exit_code_trusted));
    TRY(read_string(j, "message", p, f.message));
    TRY(read_time(j, "at", p, f.at));
    return Status::ok();
}

json remembered_run_to_json(const RememberedRun& r) {
    return {{"key", r.key},
            {"pod", r.pod},
            {"container", r.container ? json(*r.container) : json(nullptr)},
            {"run", r.number},
            {"index", r.index ? json(*r.index) : json(nullptr)},
            {"counted", r.counted},
            {"attempt", r.attempt},
            {"limit", r.limit},
            {"text", r.text},
            {"at", optional_time(r.at)},
            {"seen_by", r.seen_by},
            {"tail_kept", r.tail_kept}};
}

json runs_to_json(const std::vector<RememberedRun>& runs) {
    json out = json::array();
    for (const RememberedRun& r : runs) {
        out.push_back(remembered_run_to_json(r));
    }
    return out;
}

Status read_remembered_run(const json& j, const std::string& p, RememberedRun& r) {
    TRY(expect_object(j, p));
    TRY(read_string(j, "key", p, r.key));
    if (r.key.empty()) {
        return {Code::invalid, child(p, "key") + ": expected the run's key, got none"};
    }
    TRY(read_string(j, "pod", p, r.pod));
    TRY(read_string(j, "container", p, r.container));
    TRY(read_count(j, "run", p, r.number));
    TRY(read_count(j, "index", p, r.index));
    TRY(read_bool(j, "counted", p, r.counted));
    TRY(read_count(j, "attempt", p, r.attempt));
    TRY(read_count(j, "limit", p, r.limit));
    TRY(read_string(j, "text", p, r.text));
    TRY(read_time(j, "at", p, r.at));
    TRY(read_string(j, "seen_by", p, r.seen_by));
    TRY(read_bool(j, "tail_kept", p, r.tail_kept));
    return Status::ok();
}

json counts_to_json(const GateMemory& m) {
    return {{"job", {{"uid", m.job_uid}, {"namespace", m.job_namespace}, {"name", m.job_name}}},
            {"observed_failures", m.observed_failures},
            {"restarts", m.restarts},
            {"failed_pods", m.failed_pods},
            {"attempts", m.attempts},
            {"failed_runs", m.failed_runs},
            {"failures_seen", m.failures_seen},
            {"pods_failed", m.pods_failed},
            {"runs", runs_to_json(m.runs.list())},
            {"runs_forgotten", m.runs_forgotten},
            {"failure_recorded", m.failure_recorded},
            {"completed", m.completed},
            {"ended", m.ended ? json{{"type", m.ended->type},
                                     {"reason", m.ended->reason},
                                     {"message", m.ended->message}}
                              : json(nullptr)}};
}

Status read_counts(const json& j, const std::string& p, GateMemory& m) {
    TRY(expect_object(j, p));
    if (const json* job = field(j, "job")) {
        std::string jp = child(p, "job");
        TRY(expect_object(*job, jp));
        TRY(read_string(*job, "uid", jp, m.job_uid));
        TRY(read_string(*job, "namespace", jp, m.job_namespace));
        TRY(read_string(*job, "name", jp, m.job_name));
    }
    TRY(read_count(j, "observed_failures", p, m.observed_failures));
    TRY(read_count(j, "restarts", p, m.restarts));
    TRY(read_count(j, "failed_pods", p, m.failed_pods));
    TRY(read_count(j, "attempts", p, m.attempts));
    if (const json* runs = field(j, "failed_runs")) {
        std::string rp = child(p, "failed_runs");
        TRY(expect_object(*runs, rp));
        for (const auto& [key, value] : runs->items()) {
            TRY(read_count(*runs, key, rp, m.failed_runs[key]));
        }
    }
    TRY(read_string_list(j, "failures_seen", p, m.failures_seen));
    TRY(read_string_list(j, "pods_failed", p, m.pods_failed));
    std::sort(m.pods_failed.begin(), m.pods_failed.end());
    // Absent from memory written before runs were remembered: none known.
    TRY(read_array(j, "runs", p, [&](const json& item, const std::string& ip) {
        RememberedRun r;
        TRY(read_remembered_run(item, ip, r));
        m.runs.edit().push_back(std::move(r));
        return Status::ok();
    }));
    TRY(read_count(j, "runs_forgotten", p, m.runs_forgotten));
    TRY(read_bool(j, "failure_recorded", p, m.failure_recorded));
    TRY(read_bool(j, "completed", p, m.completed));
    if (const json* ended = field(j, "ended"); ended != nullptr && !ended->is_null()) {
        std::string ep = child(p, "ended");
        TRY(expect_object(*ended, ep));
        EndedBy e;
        TRY(read_string(*ended, "type", ep, e.type));
        TRY(read_string(*ended, "reason", ep, e.reason));
        TRY(read_string(*ended, "message", ep, e.message));
        m.ended = std::move(e);
    }
    return Status::ok();
}

Status read_last_failure(const json& j, const std::string& p, GateMemory& m) {
    if (j.is_null()) {
        return Status::ok();
    }
    Failure f;
    TRY(read_failure(j, p, f));
    m.last_failure = std::move(f);
    return Status::ok();
}

Status with_source(const Status& s, std::string_view source) {
    return s.is_ok() ? s : s.with_context(std::string(source));
}

}  // namespace

json failure_to_json(const Failure& f) {
    return {{"pod", f.pod},
            {"container", f.container ? json(*f.container) : json(nullptr)},
            {"kind", f.kind == FailureKind::pod ? "pod" : "restart"},
            {"reason", f.reason},
            {"exit_code", f.exit_code ? json(*f.exit_code) : json(nullptr)},
            {"exit_code_trusted", f.exit_code_trusted},
            {"message", f.message},
            {"at", optional_time(f.at)}};
}

json memory_to_json(const GateMemory& m) {
    json j = counts_to_json(m);
    j["last_failure"] = m.last_failure ? failure_to_json(*m.last_failure) : json(nullptr);
    return j;
}

Result<GateMemory> memory_from_json(const json& j, std::string_view source) {
    GateMemory m;
    Status s = read_counts(j, "", m);
    if (s.is_ok()) {
        if (const json* lf = field(j, "last_failure")) {
            s = read_last_failure(*lf, ".last_failure", m);
        }
    }
    TRY(with_source(s, source));
    return m;
}

std::string encode_memory(const GateMemory& memory) {
    return memory_to_json(memory).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<GateMemory> decode_memory(std::string_view text, std::string_view source) {
    TRY_ASSIGN(json j, parse(text, source));
    return memory_from_json(j, source);
}

std::map<std::string, std::string> memory_annotations(const GateMemory& memory) {
    std::map<std::string, std::string> out;
    out[k_observed_failures_annotation] =
        counts_to_json(memory).dump(-1, ' ', false, json::error_handler_t::replace);
    if (memory.last_failure) {
        out[k_last_failure_annotation] = failure_to_json(*memory.last_failure)
                                             .dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return out;
}

Result<GateMemory> memory_from_annotations(const std::map<std::string, std::string>& annotations) {
    GateMemory m;
    auto counts = annotations.find(k_observed_failures_annotation);
    if (counts != annotations.end()) {
        std::string source = std::string("annotation ") + k_observed_failures_annotation;
        TRY_ASSIGN(json j, parse(counts->second, source));
        TRY(with_source(read_counts(j, "", m), source));
    }
    auto last = annotations.find(k_last_failure_annotation);
    if (last != annotations.end()) {
        std::string source = std::string("annotation ") + k_last_failure_annotation;
        TRY_ASSIGN(json j, parse(last->second, source));
        TRY(with_source(read_last_failure(j, "", m), source));
    }
    return m;
}

}  // namespace envgate::gates
