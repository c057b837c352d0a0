#include "gates/memory_json.h"

#include <algorithm>

#include "gates/json_reader.h"
#include "runner/base/vocab/cluster_keys.h"

namespace envgate::gates {
namespace {

using namespace json_read;

// How a failure's kind is written: "restart" (also when absent) or "pod".
Status read_failure_kind(const json& j, std::string_view key, const std::string& p,
                         FailureKind& out) {
    std::string kind = "restart";
    TRY(read_string(j, key, p, kind));
    if (kind != "restart" && kind != "pod") {
        return {Code::invalid, child(p, key) + ": expected \"restart\" or \"pod\", got \"" +
                                   kind.substr(0, 40) + "\""};
    }
    out = kind == "pod" ? FailureKind::pod : FailureKind::restart;
    return Status::ok();
}

// A remembered run's key: what identifies it, so never empty.
Status read_run_key(const json& j, std::string_view key, const std::string& p, std::string& out) {
    TRY(read_string(j, key, p, out));
    if (out.empty()) {
        return {Code::invalid, child(p, key) + ": expected the run's key, got none"};
    }
    return Status::ok();
}

// The keys of the last-failure annotation and of a remembered run: each list is read by
// read_fields and written by fields_json, so that reader and writer cannot drift apart.
constexpr auto k_failure_fields =
    std::tuple{field("pod", &Failure::pod, read_string),
               field("container", &Failure::container, read_string),
               field("kind", &Failure::kind, read_failure_kind),
               field("reason", &Failure::reason, read_string),
               field("exit_code", &Failure::exit_code, read_int),
               field("exit_code_trusted", &Failure::exit_code_trusted, read_bool),
               field("message", &Failure::message, read_string),
               field("at", &Failure::at, read_time)};

constexpr auto k_remembered_run_fields =
    std::tuple{field("key", &RememberedRun::key, read_run_key),
               field("pod", &RememberedRun::pod, read_string),
               field("container", &RememberedRun::container, read_string),
               field("run", &RememberedRun::number, read_count),
               field("index", &RememberedRun::index, read_count),
               field("counted", &RememberedRun::counted, read_bool),
               field("attempt", &RememberedRun::attempt, read_count),
               field("limit", &RememberedRun::limit, read_count),
               field("text", &RememberedRun::text, read_string),
               field("at", &RememberedRun::at, read_time),
               field("seen_by", &RememberedRun::seen_by, read_string),
               field("tail_kept", &RememberedRun::tail_kept, read_bool)};

// A member's JSON value: times in RFC 3339 with microseconds, an absent optional null.
json value_json(TimePoint t) {
    return format_rfc3339_micro(t);
}
json value_json(FailureKind kind) {
    return kind == FailureKind::pod ? "pod" : "restart";
}
template <typename T>
json value_json(const T& value) {
    return value;
}
template <typename T>
json value_json(const std::optional<T>& value) {
    return value ? value_json(*value) : json(nullptr);
}

template <typename S, typename... M>
json fields_json(const S& s, const std::tuple<Field<S, M>...>& fields) {
    json out = json::object();
    std::apply(
        [&](const auto&... f) { ((out[std::string(f.key)] = value_json(s.*f.member)), ...); },
        fields);
    return out;
}

json runs_to_json(const std::vector<RememberedRun>& runs) {
    json out = json::array();
    for (const RememberedRun& r : runs) {
        out.push_back(fields_json(r, k_remembered_run_fields));
    }
    return out;
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
        TRY(read_fields(item, ip, k_remembered_run_fields, r));
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
    TRY(read_fields(j, p, k_failure_fields, f));
    m.last_failure = std::move(f);
    return Status::ok();
}

Status with_source(const Status& s, std::string_view source) {
    return s.is_ok() ? s : s.with_context(std::string(source));
}

}  // namespace

json failure_to_json(const Failure& f) {
    return fields_json(f, k_failure_fields);
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
