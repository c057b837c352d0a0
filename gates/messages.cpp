#include "gates/messages.h"

#include <algorithm>

#include "gates/counting.h"
#include "gates/failures.h"
#include "gates/waiting.h"
#include "runner/base/vocab/time.h"

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

// Why a count passed its limit: the controller acts on what it has seen, so runs (or
// pods) can fail in between; empty when the count is within the limit.
std::string past_limit_text(const Counts& c) {
    if (c.index || c.limit <= 0 || c.attempt <= c.limit) {
        return "";
    }
    const int more = c.attempt - c.limit;
    const std::string limit = std::to_string(c.limit);
    if (c.nearer == FailureKind::pod) {
        return "the limit was reached at pod " + limit + "; " + std::to_string(more) +
               " more failed before the Job controller stopped the Job's pods";
    }
    return "the limit was reached at attempt " + limit + "; the container ran " +
           (more == 1 ? std::string("once more") : std::to_string(more) + " more times") +
           " before the Job controller stopped its pod";
}

std::string past_limit_suffix(const Counts& c) {
    std::string past = past_limit_text(c);
    return past.empty() ? "" : "; " + past;
}

std::string attempt_text(const Counts& c) {
    if (c.index) {
        return "index " + std::to_string(*c.index) + ": attempt " + std::to_string(c.attempt) +
               " of " + std::to_string(c.limit) + " failed, " + std::to_string(c.left) + " left";
    }
    if (c.limit == 2147483647) {  // backoffLimitPerIndex: no overall limit
        return std::to_string(c.attempt) + " failed pod(s) in all";
    }
    return std::string(c.nearer == FailureKind::pod ? "pod " : "attempt ") +
           std::to_string(c.attempt) + " of " + std::to_string(c.limit) + " failed, " +
           std::to_string(c.left) + " left";
}

// What a line says to see more of the last failure: the command that shows that run's
// log now (`logs`), else its pod's status while the pod is there, else the Job's, with
// a note that the pod is gone and where the tail of its log was kept.
struct FailureCommand {
    std::optional<std::string> command;
    bool logs = false;
    std::string note;  // "; pod P is gone: ..." or empty

    // "; pod P is gone: .... Logs: kubectl ..." (what follows the failure's text).
    std::string text() const {
        return command ? note + (logs ? ". Logs: " : ". Details: ") + *command : note;
    }
};

FailureCommand failure_command(const std::string& ns, const std::string& job, const Failure& f,
                               const std::vector<const Pod*>& pods) {
    if (f.pod.empty()) {  // a failed pod no pass listed: the Job's events name it
        return {describe_command(ns, job), false, ""};
    }
    // Named by pod: `kubectl logs job/...` reads whichever pod kubectl picks, and its
    // newest run, not necessarily the failed one (and waits for a pod once it is gone).
    if (auto logs = run_logs_command(ns, pods, f)) {
        return {std::move(logs), true, ""};
    }
    if (live_pod(pods, f.pod) != nullptr) {
        return {describe_pod_command(ns, f.pod), false, ""};
    }
    return {describe_command(ns, job), false,
            "; pod " + f.pod +
                " is gone: the last lines of its log, read when the gate saw the failure, "
                "are in this job log and the reports"};
}

FailureCommand failure_command(const GateMemory& mem, const std::vector<const Pod*>& pods) {
    if (!mem.last_failure) {
        return {};
    }
    return failure_command(mem.job_namespace, mem.job_name, *mem.last_failure, pods);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : sep) + p;
    }
    return out;
}

// What the message adds for Jobs the counts alone do not describe: failed indexes (those
// the pods show failed too, so that the line reads the same once the controller wrote
// them), and who manages a Job the built-in controller leaves alone.
std::string notes(const Pass& p) {
    const Job& job = p.job;
    std::string out;
    if (std::string failed = failed_indexes_text(job, p.pods); !failed.empty()) {
        out += "; failed indexes: " + failed;
        if (job.max_failed_indexes) {
            out += " (maxFailedIndexes " + std::to_string(*job.max_failed_indexes) + ")";
        }
    }
    if (managed_elsewhere(job)) {
        out += "; the Job is managed by " + *job.managed_by +
               ", not the built-in Job controller: counted from its status, its pods run "
               "where that controller runs them";
    }
    return out;
}

void explain_running(const Pass& p, Verdict& v) {
    std::vector<std::string> waiting = waiting_reasons(p.pods);
    v.progressing.reason = names(p.gate).running_reason;
    v.progressing.message = p.ref + " is running";
    std::string describe = describe_command(p.job.namespace_, p.job.name);
    if (const Pod* pod = first_waiting_pod(p.pods)) {
        v.command = describe_pod_command(p.job.namespace_, pod->name);
        v.progressing.message += ", but " + join(waiting, "; ") + ". Details: " + *v.command;
    } else if (p.pods.empty() && !managed_elsewhere(p.job)) {
        v.progressing.message += ", no pod yet (kubectl describe shows why: " + describe + ")";
    }
    if (v.memory.attempts > 0) {
        v.progressing.message +=
            " (after " + std::to_string(v.memory.attempts) + " failed attempt(s))";
    }
    v.progressing.message += notes(p);
}

void explain_suspended(const Pass& p, Verdict& v) {
    const Condition* c = true_condition(p.job, "Suspended");
    v.progressing.reason = p.ending.reason;
    v.progressing.message = p.ref + " is suspended";
    if (c != nullptr && c->last_transition_time && *c->last_transition_time <= p.now) {
        v.progressing.message += " for " + format_duration(p.now - *c->last_transition_time);
    }
    v.command = describe_command(p.job.namespace_, p.job.name);
    v.progressing.message += " (" + p.ending.reason + ": " + p.ending.message +
                             "); its pods were stopped without counting as failures, and the "
                             "gate goes on once spec.suspend is false again. Details: " +
                             *v.command;
    if (v.memory.attempts > 0) {
        v.progressing.message +=
            " (after " + std::to_string(v.memory.attempts) + " failed attempt(s))";
    }
}

// Why a count fell with this run: an OnFailure pod that failed as a whole takes its
// restarts out of the restart count.
std::string dropped_text(const SeenRun& run) {
    if (run.restarts_dropped == 0) {
        return "";
    }
    return "; its " + std::to_string(run.restarts_dropped) + " restart(s) no longer count " +
           "against backoffLimit (the Job controller counts the restarts of running and " +
           "pending pods only)";
}

// The line of one failed run: its own count, text and command.
void explain_run(const Pass& p, const std::vector<std::string>& waiting, SeenRun& run) {
    const FailureCommand more = failure_command(p.job.namespace_, p.job.name, run.failure, p.pods);
    run.command = more.command;
    std::string m;
    if (!run.counted) {
        m = run_text(run) + " (" + run.ignored_why +
            ": the Job controller does not count it against the Job's limits)";
    } else {
        m = attempt_text(run.counts);
        if (std::string past = past_limit_text(run.counts); !past.empty()) {
            m += " (" + past + ")";
        }
        m += ": " + run_text(run) + dropped_text(run);
    }
    if (!waiting.empty()) {
        m += "; now " + join(waiting, "; ");
    }
    m += notes(p) + more.text();
    run.message = std::move(m);
}

// The words and events of the runs a pass saw first: each its line; each counted one a
// Retrying event, but the one an ending verdict names itself (its Failed event follows)
// and, ending, those whose end no pass saw.
void explain_runs(const Pass& p, Verdict& v) {
    if (v.runs.empty()) {
        return;
    }
    const std::vector<std::string> waiting = waiting_reasons(p.pods);
    const bool ending = v.state == State::failing || v.state == State::failed;
    for (std::size_t i = 0; i < v.runs.size(); ++i) {
        SeenRun& run = v.runs[i];
        explain_run(p, waiting, run);
        const bool named_by_ending = ending && i + 1 == v.runs.size();
        // Ending, a run no pass saw end is no retry the gate saw: the Failed event that
        // follows tells of the Job.
        if (run.counted && !named_by_ending && (!ending || run.seen_end)) {
            run.event = Event{"Warning", names(p.gate).retry_event, run.message};
        }
    }
}

// The newest counted run this pass saw first, or nullptr.
const SeenRun* newest_counted(const Verdict& v) {
    for (auto it = v.runs.rbegin(); it != v.runs.rend(); ++it) {
        if (it->counted) {
            return &*it;
        }
    }
    return nullptr;
}

void explain_retrying(const Pass& p, Verdict& v) {
    v.progressing.reason = names(p.gate).retry_reason;
    if (const SeenRun* run = newest_counted(v)) {
        // Its line says it all: the verdict is that line.
        v.progressing.message = run->message;
        v.command = run->command;
        return;
    }
    const FailureCommand more = failure_command(v.memory, p.pods);
    v.command = more.command;
    std::string m = attempt_text(v.counts);
    if (std::string past = past_limit_text(v.counts); !past.empty()) {
        m += " (" + past + ")";
    }
    if (v.memory.last_failure) {
        m += ": " + last_failure_text(v.memory);
    }
    std::vector<std::string> waiting = waiting_reasons(p.pods);
    if (!waiting.empty()) {
        m += "; now " + join(waiting, "; ");
    }
    m += notes(p);
    if (!v.command && managed_elsewhere(p.job)) {
        v.command = describe_command(p.job.namespace_, p.job.name);
        m += ". Details: " + *v.command;
    } else {
        m += more.text();
    }
    v.progressing.message = m;
}

// The counts say nothing useful once a FailJob rule ended the Job: no attempt was spent.
std::string spent_text(const Pass& p, const Verdict& v) {
    return p.ending.reason == "PodFailurePolicy"
               ? ""
               : " (" + attempt_text(v.counts) + past_limit_suffix(v.counts) + ")";
}

void explain_failing(const Pass& p, Verdict& v) {
    v.progressing.reason = names(p.gate).running_reason;
    FailureCommand more =
        p.ending.reason == "PodFailurePolicy"
            ? FailureCommand{describe_command(p.job.namespace_, p.job.name), false, ""}
            : failure_command(v.memory, p.pods);
    v.command = more.command;
    v.progressing.message =
        p.ref + " is failing: " + p.ending.reason + ": " + p.ending.message + notes(p) +
        "; its remaining pods are being stopped. Last failure: " + last_failure_text(v.memory) +
        spent_text(p, v) + more.text();
}

// Events outlive their Job by the API server's event TTL (an hour by default): a failed
// Job that ttlSecondsAfterFinished deletes sooner is described by its events, which still
// answer once it is gone; otherwise `kubectl describe` says more (pods and events).
constexpr int k_event_ttl_seconds = 3600;

bool deleted_soon(const Job& job) {
    return job.ttl_seconds_after_finished && *job.ttl_seconds_after_finished < k_event_ttl_seconds;
}

std::string details_of_failed(const Job& job) {
    return deleted_soon(job) ? events_command(job.namespace_, job.name)
                             : describe_command(job.namespace_, job.name);
}

std::string ttl_note(const Job& job) {
    if (!deleted_soon(job)) {
        return "";
    }
    return " (ttlSecondsAfterFinished " + std::to_string(*job.ttl_seconds_after_finished) +
           " deletes the Job and its pods " +
           format_duration(std::chrono::seconds(*job.ttl_seconds_after_finished)) +
           " after it failed; its events outlive it)";
}

void explain_failed(const Pass& p, Verdict& v) {
    v.phase = Phase::failed;
    v.progressing.status = false;
    v.progressing.reason = names(p.gate).failed_reason;
    v.command = details_of_failed(p.job);
    v.progressing.message = p.ref + " failed: " + p.ending.reason + ": " + p.ending.message +
                            notes(p) + ". Last failure: " + last_failure_text(v.memory) +
                            spent_text(p, v) + ". Details: " + *v.command + ttl_note(p.job) +
                            ". A change to the Job spec reruns the gate with a new Job.";
    if (!v.memory.failure_recorded) {
        v.event = Event{"Warning", names(p.gate).failed_event, v.progressing.message};
        v.memory.failure_recorded = true;
    }
}

void explain_succeeded(const Pass& p, Verdict& v) {
    v.phase = Phase::succeeded;
    v.progressing.reason = names(p.gate).complete_reason;
    v.progressing.message = p.ref + " completed";
    if (v.memory.attempts > 0) {
        v.progressing.message +=
            " after " + std::to_string(v.memory.attempts) + " failed attempt(s)";
    }
    v.memory.completed = true;
}

}  // namespace

std::string run_text(const SeenRun& run) {
    if (run.seen_end) {
        return describe_failure(run.failure);
    }
    if (run.number > 0) {
        return "container " + run.failure.container.value_or("?") + " of pod " + run.failure.pod +
               " failed (its run " + std::to_string(run.number) +
               "); it restarted before the gate saw that run end, so how it ended is not known";
    }
    return "a pod of the Job failed and was gone before the gate listed it (the Job's "
           "status.failed counts it)";
}

void explain(const Pass& p, Verdict& v) {
    explain_runs(p, v);
    switch (v.state) {
        case State::running:
            return explain_running(p, v);
        case State::suspended:
            return explain_suspended(p, v);
        case State::retrying:
            return explain_retrying(p, v);
        case State::failing:
            return explain_failing(p, v);
        case State::failed:
            return explain_failed(p, v);
        case State::succeeded:
            return explain_succeeded(p, v);
    }
}

std::string last_failure_text(const GateMemory& mem) {
    return mem.last_failure ? describe_failure(*mem.last_failure) : "none observed";
}

const Condition* true_condition(const Job& job, std::string_view type) {
    for (const Condition& c : job.conditions) {
        if (c.type == type && c.status == "True"sv) {
            return &c;
        }
    }
    return nullptr;
}

}  // namespace envgate::gates
