// run.json: the whole RunReport, machine-readable, and its parser (the dashboard
// renders saved runs). Field names are part of the documented interface.
#include <nlohmann/json.hpp>
#include <tuple>

#include "runner/base/utf8.h"
#include "runner/report/render.h"

namespace envgate {
namespace {

using nlohmann::json;

json opt(const std::optional<std::string>& v) {
    return v ? json(*v) : json(nullptr);
}
json opt_time(const std::optional<TimePoint>& t) {
    return t ? json(format_rfc3339_micro(*t)) : json(nullptr);
}

std::optional<std::string> get_opt(const json& j, const char* key) {
    if (!j.contains(key) || j.at(key).is_null()) {
        return std::nullopt;
    }
    return j.at(key).get<std::string>();
}

std::optional<TimePoint> get_time(const json& j, const char* key) {
    auto s = get_opt(j, key);
    return s ? parse_rfc3339(*s) : std::nullopt;
}

// One member of a FailedRun as the run.json key `key`.
template <typename M>
struct Field {
    const char* key;
    M FailedRun::*member;
};
template <typename M>
Field(const char*, M FailedRun::*) -> Field<M>;

// A failed run's keys: failed_run_json writes this one list and failed_run_from reads
// it, a key absent from a saved run leaving the member as a new FailedRun has it.
constexpr auto k_failed_run_fields = std::tuple{Field{"run", &FailedRun::run},
                                                Field{"attempt", &FailedRun::attempt},
                                                Field{"limit", &FailedRun::limit},
                                                Field{"at", &FailedRun::at},
                                                Field{"pod", &FailedRun::pod},
                                                Field{"container", &FailedRun::container},
                                                Field{"container_run", &FailedRun::container_run},
                                                Field{"reason", &FailedRun::reason},
                                                Field{"exit_code", &FailedRun::exit_code},
                                                Field{"description", &FailedRun::description},
                                                Field{"log_command", &FailedRun::log_command},
                                                Field{"log_tail", &FailedRun::log_tail},
                                                Field{"log_note", &FailedRun::log_note},
                                                Field{"key", &FailedRun::key},
                                                Field{"counted", &FailedRun::counted},
                                                Field{"ignored_why", &FailedRun::ignored_why},
                                                Field{"remembered", &FailedRun::remembered},
                                                Field{"seen_by", &FailedRun::seen_by}};

template <typename T>
json value_json(const T& value) {
    return value;
}
json value_json(const std::optional<TimePoint>& t) {
    return opt_time(t);
}
json value_json(const std::optional<int>& v) {
    return v ? json(*v) : json(nullptr);
}

template <typename T>
void read_value(const json& j, const char* key, T& out) {
    out = j.value(key, out);
}
void read_value(const json& j, const char* key, std::optional<TimePoint>& out) {
    out = get_time(j, key);
}
void read_value(const json& j, const char* key, std::optional<int>& out) {
    if (j.contains(key) && !j.at(key).is_null()) {
        out = j.at(key).get<int>();
    }
}

json failed_run_json(const FailedRun& f) {
    json out = json::object();
    std::apply([&](const auto&... field) { ((out[field.key] = value_json(f.*field.member)), ...); },
               k_failed_run_fields);
    return out;
}

FailedRun failed_run_from(const json& j) {
    FailedRun f;
    std::apply([&](const auto&... field) { (read_value(j, field.key, f.*field.member), ...); },
               k_failed_run_fields);
    return f;
}

json change_json(const VerdictChange& h) {
    return {{"at", format_rfc3339_micro(h.at)},
            {"state", h.state},
            {"reason", h.reason},
            {"message", h.message},
            {"command", opt(h.command)},
            {"attempt", h.attempt},
            {"limit", h.limit}};
}

json step_json(const StepReport& s) {
    json history = json::array();
    for (const auto& h : s.history) {
        history.push_back(change_json(h));
    }
    json failed_runs = json::array();
    for (const auto& f : s.failed_runs) {
        failed_runs.push_back(failed_run_json(f));
    }
    return {{"name", s.name},
            {"kind", s.kind},
            {"state", step_state_name(s.state)},
            {"file", s.file},
            {"started", opt_time(s.started)},
            {"finished", opt_time(s.finished)},
            {"seconds", s.seconds()},
            {"attempts", s.attempts},
            {"job", opt(s.job_name)},
            {"reason", s.reason},
            {"message", s.message},
            {"command", opt(s.command)},
            {"exit_code", s.exit_code ? json(*s.exit_code) : json(nullptr)},
            {"skipped_why", s.skipped_why},
            {"history", history},
            {"failed_runs", failed_runs},
            {"failed_runs_forgotten", s.failed_runs_forgotten}};
}

StepReport step_from(const json& j) {
    StepReport s;
    s.name = j.at("name").get<std::string>();
    s.kind = j.value("kind", "");
    s.state = parse_step_state(j.at("state").get<std::string>()).value_or(StepState::skipped);
    s.file = j.value("file", "");
    s.started = get_time(j, "started");
    s.finished = get_time(j, "finished");
    s.attempts = j.value("attempts", 0);
    s.job_name = get_opt(j, "job");
    s.reason = j.value("reason", "");
    s.message = j.value("message", "");
    s.command = get_opt(j, "command");
    if (j.contains("exit_code") && !j.at("exit_code").is_null()) {
        s.exit_code = j.at("exit_code").get<int>();
    }
    s.skipped_why = j.value("skipped_why", "");
    for (const auto& h : j.value("history", json::array())) {
        s.history.push_back({get_time(h, "at").value_or(TimePoint{}), h.value("state", ""),
                             h.value("reason", ""), h.value("message", ""), get_opt(h, "command"),
                             h.value("attempt", 0), h.value("limit", 0)});
    }
    for (const auto& f : j.value("failed_runs", json::array())) {
        s.failed_runs.push_back(failed_run_from(f));
    }
    s.failed_runs_forgotten = j.value("failed_runs_forgotten", 0);
    return s;
}

}  // namespace

json run_json_document(const RunReport& r) {
    json steps = json::array();
    for (const auto& s : r.steps) {
        steps.push_back(step_json(s));
    }
    const StepReport* failed = r.failed_step();
    json j = {{"schema", "envgate.run/v1"},
              {"environment", r.environment},
              {"namespace", r.namespace_},
              {"result", run_result_name(r.result)},
              {"failed_step", failed ? json(failed->name) : json(nullptr)},
              {"started", format_rfc3339_micro(r.started)},
              {"finished", format_rfc3339_micro(r.finished)},
              {"pipeline_url", opt(r.pipeline_url)},
              {"job_url", opt(r.job_url)},
              {"environments_url", opt(r.environments_url)},
              {"lock",
               {{"name", r.lock.name},
                {"state", lock_state_name(r.lock.state)},
                {"holder", r.lock.holder},
                {"holder_pipeline_url", opt(r.lock.holder_pipeline_url)},
                {"holder_job_url", opt(r.lock.holder_job_url)},
                {"unlock_command", opt(r.lock.unlock_command)},
                {"update_error", opt(r.lock.update_error)}}},
              {"steps", steps}};
    return j;
}

std::string render_run_json(const RunReport& r) {
    return dump_json(run_json_document(r), 2) + "\n";
}

Result<RunReport> parse_run_json(const std::string& text, const std::string& origin) {
    try {
        json j = json::parse(text);
        RunReport r;
        r.environment = j.at("environment").get<std::string>();
        r.namespace_ = j.value("namespace", "");
        r.result = parse_run_result(j.at("result").get<std::string>()).value_or(RunResult::failed);
        r.started = get_time(j, "started").value_or(TimePoint{});
        r.finished = get_time(j, "finished").value_or(TimePoint{});
        r.pipeline_url = get_opt(j, "pipeline_url");
        r.job_url = get_opt(j, "job_url");
        r.environments_url = get_opt(j, "environments_url");
        const json& l = j.at("lock");
        r.lock.name = l.value("name", "");
        r.lock.state = locks::parse_state(l.value("state", "free")).value_or(LockState::free);
        r.lock.holder = l.value("holder", "");
        r.lock.holder_pipeline_url = get_opt(l, "holder_pipeline_url");
        r.lock.holder_job_url = get_opt(l, "holder_job_url");
        r.lock.unlock_command = get_opt(l, "unlock_command");
        r.lock.update_error = get_opt(l, "update_error");
        for (const auto& s : j.at("steps")) {
            r.steps.push_back(step_from(s));
        }
        return r;
    } catch (const json::exception& e) {
        return Status(Code::invalid, origin + ": not an envgate run.json: " + e.what());
    }
}

}  // namespace envgate
