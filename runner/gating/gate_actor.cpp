#include "runner/gating/gate_actor.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "gates/counting.h"
#include "gates/failures.h"
#include "gates/memory.h"
#include "gates/memory_json.h"
#include "gates/messages.h"
#include "runner/base/exit_code.h"
#include "runner/base/exit_status.h"
#include "runner/gating/gate_pass.h"
#include "runner/gating/kept_logs.h"
#include "runner/gating/remembered.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

using nlohmann::json;

// Whether a verdict's command goes on a line of its own: a retry's or a failure's; a
// gate that waits (running, suspended) names it in its message.
bool command_on_own_line(const gates::Verdict& v) {
    return v.command && v.state != gates::State::running && v.state != gates::State::suspended;
}

// The line of a verdict change. A command printed on a line of its own is not named in
// the message too.
std::string verdict_line(const gates::GateNames& names, const gates::Verdict& v) {
    const bool own_line = command_on_own_line(v);
    return fmt::format(
        "{}: {} ({}): {}", names.name, gates::state_name(v.state), v.progressing.reason,
        own_line ? without_command(v.progressing.message, *v.command) : v.progressing.message);
}

}  // namespace

GateActor::GateActor(kube::KubeApi& api, Clock& clock, JobLog& log, const GateRunSettings& settings,
                     const std::string& job_name)
    : m_api(api), m_clock(clock), m_log(log), m_settings(settings), m_events(api, log) {
    m_step.name = gates::names(settings.gate).name;
    m_step.kind = "gate";
    m_step.state = StepState::running;
    m_step.started = m_clock.now();
    m_step.job_name = job_name;
}

void GateActor::start_heartbeat(TimePoint deadline) {
    m_progress.emplace(m_log, m_settings.progress_every, m_clock.now(), deadline);
}

void GateActor::note(const std::string& text) {
    m_log.line(Tone::plain, text);
}

void GateActor::report_remembered(const gates::Job& job, const std::vector<gates::Pod>& pods,
                                  const gates::GateMemory& memory) {
    if (std::exchange(m_remembered_kept, true)) {
        return;
    }
    // A rerun lists first the failed runs an earlier run of the gate counted on this Job
    // (its memory): as the pods still show them, else as the memory remembers them
    // (remembered.h); then those it sees itself.
    auto remembered = remembered_listing(job, pods, memory);
    if (!remembered.empty()) {
        m_log.line(Tone::plain,
                   fmt::format("{}: {} failed run(s) an earlier run of the gate counted "
                               "on this Job:",
                               m_step.name, remembered.size()));
    }
    if (memory.runs_forgotten > 0) {
        m_step.failed_runs_forgotten = memory.runs_forgotten;
        m_log.line(Tone::plain,
                   fmt::format("{}: {} older failed run(s) are no longer remembered (the "
                               "gate's memory keeps the newest {}): those whose pods are "
                               "gone are not listed",
                               m_step.name, memory.runs_forgotten, gates::k_remembered_runs));
    }
    for (const RememberedListing& listed : remembered) {
        if (listed.shown) {
            keep_run(m_api, m_log, m_id, pods, listed.run, m_step, &m_early);
        } else {
            keep_remembered_run(m_log, listed, m_step);
        }
    }
}

void GateActor::report_pass(const std::optional<gates::Job>& job,
                            const std::vector<gates::Pod>& pods, const gates::Verdict& v) {
    report_runs(pods, v);
    report_change(v, job);
    if (!v.runs.empty()) {
        keep_run(m_api, m_log, m_id, pods, v.runs.back(), m_step,
                 &m_early);  // kept already, or the ending's
    }
    refresh_log_commands(m_id, pods, m_step);
}

void GateActor::read_ended_runs(const std::vector<gates::Pod>& pods) {
    envgate::read_ended_runs(m_api, m_id, pods, m_early);
}

void GateActor::note_kept(gates::GateMemory& memory,
                          const std::vector<gates::SeenRun>& runs) const {
    for (const gates::SeenRun& run : runs) {
        auto kept = std::find_if(m_step.failed_runs.begin(), m_step.failed_runs.end(),
                                 [&](const FailedRun& f) { return f.key == run.key; });
        const bool tail = kept != m_step.failed_runs.end() && !kept->log_tail.empty();
        gates::note_kept(memory, run.key, m_settings.job_url, tail);
    }
}

void GateActor::record_events(const gates::Verdict& v) {
    // One event per counted run, named by the run: whoever records it again is refused.
    for (const gates::SeenRun& run : v.runs) {
        if (run.event) {
            m_events.record(m_id, *run.event, run.key, m_settings.instance, m_clock.now());
        }
    }
    if (v.event) {
        m_events.record(m_id, *v.event, "failed", m_settings.instance, m_clock.now());
    }
}

Result<std::optional<std::string>> GateActor::save_memory(const gates::GateMemory& memory) {
    json annotations = json::object();
    for (const auto& [k, value] : gates::memory_annotations(memory)) {
        annotations[k] = value;
    }
    auto patched = m_api.patch(kube::jobs(m_id.namespace_, m_id.name),
                               {{"metadata", {{"annotations", annotations}}}});
    if (!patched.is_ok()) {
        if (patched.status().code() == Code::not_found) {
            return std::optional<std::string>();
        }
        return patched.status();
    }
    return std::optional<std::string>((*patched)["metadata"].value("resourceVersion", ""));
}

void GateActor::take_counts(const gates::Verdict& v) {
    m_step.attempts = v.memory.attempts;
    m_step.command = v.command;
}

void GateActor::heartbeat(bool spoke, const std::optional<gates::Job>& job,
                          const std::vector<gates::Pod>& pods) {
    m_progress->after_pass(m_clock.now(), spoke, gates::names(m_settings.gate).name, job, pods);
}

void GateActor::report_runs(const std::vector<gates::Pod>& pods, const gates::Verdict& v) {
    const gates::GateNames& names = gates::names(m_settings.gate);
    const bool ending = v.state == gates::State::failing || v.state == gates::State::failed;
    for (std::size_t i = 0; i < v.runs.size(); ++i) {
        const gates::SeenRun& run = v.runs[i];
        if (ending && i + 1 == v.runs.size()) {
            break;  // the ending's own line names it (report_change), then it is kept
        }
        const std::string words =
            run.command ? without_command(run.message, *run.command) : run.message;
        if (run.counted) {
            m_log.line(Tone::retrying, fmt::format("{}: {} ({}): {}", names.name,
                                                   gates::state_name(gates::State::retrying),
                                                   names.retry_reason, words));
            m_step.history.push_back({m_clock.now(), gates::state_name(gates::State::retrying),
                                      names.retry_reason, run.message, run.command,
                                      run.counts.attempt, run.counts.limit});
        } else {
            m_log.line(Tone::plain, fmt::format("{}: not counted: {}", names.name, words));
        }
        if (run.command) {
            m_log.command(*run.command);
        }
        keep_run(m_api, m_log, m_id, pods, run, m_step, &m_early);
    }
}

void GateActor::report_change(const gates::Verdict& v, const std::optional<gates::Job>& job) {
    const gates::GateNames& names = gates::names(m_settings.gate);
    VerdictChange change{
        m_clock.now(), gates::state_name(v.state), v.progressing.reason, v.progressing.message,
        v.command,     v.counts.attempt,           v.counts.limit};
    if (v.state == gates::State::suspended) {
        // A suspension is said once, when the Job controller has acted on it (its
        // Suspended condition: the pods stopped), not by every pass that sees it
        // (spec.suspend before the condition, then the condition, then how long).
        const bool said = !m_step.history.empty() && m_step.history.back().state == change.state;
        const bool before_controller = job && !gates::managed_elsewhere(*job) &&
                                       gates::true_condition(*job, "Suspended") == nullptr;
        if (said || before_controller) {
            return;
        }
    }
    if (!m_step.history.empty()) {
        // A retry is said once, by its run's line: a later pass of the same retry (the
        // pod now gone, its container waiting) adds no line.
        const bool same_retry = v.state == gates::State::retrying && v.runs.empty() &&
                                m_step.history.back().state == change.state;
        if (same_retry || says_the_same(m_step.history.back(), change)) {
            return;
        }
    }
    m_log.line(tone_for_state(change.state), verdict_line(names, v));
    // Each line's command names its own run (its pod, --previous or not): printed with
    // every line, as it works at that moment.
    if (command_on_own_line(v)) {
        m_log.command(*v.command);
    }
    m_step.history.push_back(std::move(change));
}

int GateActor::fail(StepState state, std::string reason, std::string message, int code, bool said) {
    m_step.state = state;
    m_step.reason = std::move(reason);
    m_step.message = std::move(message);
    if (m_step.reason == "KubernetesApiError" && !m_settings.cluster.empty()) {
        m_step.message += " (" + m_settings.cluster + ")";
    }
    if (!said) {
        m_log.line(state == StepState::cancelled ? Tone::failing : Tone::failed,
                   fmt::format("{}: {}: {}", m_step.name, m_step.reason, m_step.message));
    }
    return code;
}

GateResult GateActor::launch_failed(const Status& status) {
    const Code c = status.code();
    // A Job the API refuses as invalid (422) is a bad manifest, as `run`'s preflight
    // says: exit 2, like every other configuration error (the table's gate column).
    return close(fail(StepState::failed, c == Code::conflict ? "JobConflict" : "KubernetesApiError",
                      status.message(), exit_for(c, Stage::gate)));
}

GateResult GateActor::finish(Why why, const std::string& detail, int signal,
                             const gates::Verdict* v) {
    switch (why) {
        case Why::succeeded:
            m_step.state = StepState::passed;
            m_step.message = v->progressing.message;
            return close(k_exit_success);
        case Why::failed:
            return close(fail(StepState::failed, v->progressing.reason, v->progressing.message,
                              k_exit_failed, true));
        case Why::cancelled:
            return close(
                fail(StepState::cancelled, "Cancelled",
                     fmt::format("cancelled by signal {} while the gate waited on Job {}/{}.",
                                 signal, m_id.namespace_, m_id.name),
                     exit_for_signal(signal)));
        case Why::timed_out:
            return close(timed_out());
        default:
            return close(fail(StepState::failed, "KubernetesApiError", detail, k_exit_infra));
    }
}

int GateActor::timed_out() {
    // The Job is not stopped: its pods go on (and retry) on their own. The step's command
    // stays the last verdict's (what to look at first); the message says how to stop the
    // Job, and the log prints that command on a line of its own, as every command it
    // prints, so that it is copied whole.
    const std::string stop =
        fmt::format("kubectl -n {} delete job/{}", gates::shell_quote(m_id.namespace_),
                    gates::shell_quote(m_id.name));
    const std::string told = fmt::format(
        "the gate's timeout of {} passed; last verdict: {}. The Job {}/{} was left as it is: "
        "its migration still runs (and retries). To stop it:",
        format_duration(m_settings.timeout),
        m_step.history.empty() ? std::string("none yet") : m_step.history.back().message,
        m_id.namespace_, m_id.name);
    const int code = fail(StepState::failed, "GateTimeout", told + " " + stop, k_exit_failed, true);
    m_log.line(Tone::failed, fmt::format("{}: {}: {}", m_step.name, m_step.reason, told));
    m_log.command(stop);
    return code;
}

GateResult GateActor::close(int exit_code) {
    m_step.finished = m_clock.now();
    m_step.exit_code = exit_code;  // the gate's own, as a step's process has one
    std::string outcome;
    if (exit_code >= 128 && m_settings.on_cancel == OnCancel::remove && !m_id.name.empty()) {
        Status removed =
            m_api.remove(kube::jobs(m_id.namespace_, m_id.name), kube::Propagation::background);
        outcome = removed.is_ok() ? "The Job was deleted (--on-cancel=delete)."
                                  : "Deleting the Job failed: " + removed.message();
    } else if (exit_code >= 128) {
        outcome = "The Job was left running (pass --on-cancel=delete to delete it).";
    }
    if (!outcome.empty()) {
        m_step.message += " " + outcome;
        m_log.line(Tone::failing, outcome);  // the log says it too, not only the reports
    }
    return {exit_code, std::move(m_step), !m_id.name.empty()};
}

}  // namespace envgate
