// run.json: the whole RunReport, machine-readable, and its parser (the dashboard
// renders saved runs). Field names are part of the documented interface.
#include <nlohmann/json.hpp>

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

json change_json(const VerdictChange& h) {
    return {{"at", format_rfc3339_micro(h.at)},
            {"state", h.state},
            {"reason", h.reason},
            {"message", h.message},
            {"command", opt(h.command)},
            {"attempt", h.attempt},
            {"limit", h.limit}};
}

json failed_run_json(const FailedRun& f) {
    return {{"run", f.run},
            {"attempt", f.attempt},
            {"limit", f.limit},
            {"at", opt_time(f.at)},
            {"pod", f.pod},
            {"container", f.container},
            {"container_run", f.container_run},
            {"reason", f.reason},
            {"exit_code", f.exit_code ? json(*f.exit_code) : json(nullptr)},
            {"description", f.description},
            {"log_command", f.log_command},
            {"log_tail", f.log_tail},
            {"log_note", f.log_note},
            {"key", f.key},
            {"counted", f.counted},
            {"ignored_why", f.ignored_why},
            {"remembered", f.remembered},
            {"seen_by", f.seen_by}};
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

FailedRun failed_run_from(const json& j) {
    FailedRun f;
    f.run = j.value("run", 0);
    f.attempt = j.value("attempt", 0);
    f.limit = j.value("limit", 0);
    f.at = get_time(j, "at");
    f.pod = j.value("pod", "");
    f.container = j.value("container", "");
    f.container_run = j.value("container_run", -1);
    f.reason = j.value("reason", "");
    if (j.contains("exit_code") && !j.at("exit_code").is_null()) {
        f.exit_code = j.at("exit_code").get<int>();
    }
    f.description = j.value("description", "");
    f.log_command = j.value("log_command", "");
    f.log_tail = j.value("log_tail", "");
    f.log_note = j.value("log_note", "");
    f.key = j.value("key", "");
    f.counted = j.value("counted", true);
    f.ignored_why = j.value("ignored_why", "");
    f.remembered = j.value("remembered", false);
    f.seen_by = j.value("seen_by", "");
    return f;
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
