#include "runner/report/run_report.h"

#include "runner/base/vocab/enum_names.h"

namespace envgate {
namespace {

constexpr EnumName<StepState> k_step_state_names[] = {{StepState::passed, "passed"},
                                                      {StepState::failed, "failed"},
                                                      {StepState::skipped, "skipped"},
                                                      {StepState::cancelled, "cancelled"},
                                                      {StepState::running, "running"}};

constexpr EnumName<RunResult> k_run_result_names[] = {{RunResult::success, "success"},
                                                      {RunResult::failed, "failed"},
                                                      {RunResult::cancelled, "cancelled"}};

}  // namespace

const char* step_state_name(StepState s) {
    return name_of(k_step_state_names, s, "unknown");
}

const char* run_result_name(RunResult r) {
    return name_of(k_run_result_names, r, "unknown");
}

std::optional<StepState> parse_step_state(std::string_view name) {
    return value_of(k_step_state_names, name);
}

std::optional<RunResult> parse_run_result(std::string_view name) {
    return value_of(k_run_result_names, name);
}

const char* lock_state_name(LockState s) {
    return locks::state_name(s);
}

bool FailedRun::same_run(const FailedRun& other) const {
    return container_run >= 0 && container_run == other.container_run && pod == other.pod &&
           container == other.container;
}

bool StepReport::retried() const {
    for (const auto& h : history) {
        if (h.state == "retrying") {
            return true;
        }
    }
    return false;
}

double StepReport::seconds() const {
    if (!started || !finished) {
        return 0;
    }
    return std::chrono::duration<double>(*finished - *started).count();
}

std::string StepReport::duration_text() const {
    if (!started || !finished) {
        return "-";
    }
    return format_duration(*finished - *started);
}

const StepReport* RunReport::failed_step() const {
    for (const auto& s : steps) {
        if (s.state == StepState::failed || s.state == StepState::cancelled) {
            return &s;
        }
    }
    return nullptr;
}

void mark_cancelled(StepReport& step, int signal_number) {
    step.state = StepState::cancelled;
    step.message = "cancelled by signal " + std::to_string(signal_number) +
                   (step.message.empty() ? "" : ": " + step.message);
    step.reason = "Cancelled";
}

RunReport masked(const RunReport& report, const std::function<std::string(std::string)>& mask) {
    RunReport r = report;
    auto opt = [&](std::optional<std::string>& v) {
        if (v) {
            v = mask(*v);
        }
    };
    for (StepReport& s : r.steps) {
        s.message = mask(s.message);
        s.reason = mask(s.reason);
        s.skipped_why = mask(s.skipped_why);
        opt(s.command);
        for (VerdictChange& h : s.history) {
            h.message = mask(h.message);
            opt(h.command);
        }
        for (FailedRun& f : s.failed_runs) {
            f.description = mask(f.description);
            f.log_command = mask(f.log_command);
            f.log_tail = mask(f.log_tail);
            f.log_note = mask(f.log_note);
            f.seen_by = mask(f.seen_by);
        }
    }
    r.lock.holder = mask(r.lock.holder);
    opt(r.lock.holder_pipeline_url);
    opt(r.lock.holder_job_url);
    opt(r.lock.unlock_command);
    opt(r.lock.update_error);
    opt(r.pipeline_url);
    opt(r.job_url);
    opt(r.environments_url);
    return r;
}

std::optional<std::string> environments_page(const std::optional<std::string>& project_url) {
    if (!project_url || project_url->empty()) {
        return std::nullopt;
    }
    return *project_url + "/-/environments";
}

std::vector<Link> run_links(const RunReport& r) {
    std::vector<Link> out;
    for (const auto& [label, url] : {std::pair{"pipeline", r.pipeline_url},
                                     {"job", r.job_url},
                                     {"environments", r.environments_url}}) {
        if (url && !url->empty()) {
            out.push_back({label, *url});
        }
    }
    return out;
}

std::string unlock_hint(const RunReport& r) {
    return "It stays held after the failure until a person unlocks it: run the manual job "
           "envgate-unlock-" +
           r.lock.name +
           " of the pipeline with the variable ENVGATE_UNLOCK_REASON (why it is safe), or, "
           "with the lock store's and the cluster's credentials, the CLI:";
}

}  // namespace envgate
