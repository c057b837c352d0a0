#include "gates/evaluate.h"

#include <algorithm>

#include "gates/counting.h"
#include "gates/failures.h"

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

const Condition* true_condition(const Job& job, std::string_view type) {
    for (const Condition& c : job.conditions) {
        if (c.type == type && c.status == "True"sv) {
            return &c;
        }
    }
    return nullptr;
}

bool same_failure(const Failure& a, const Failure& b) {
    Failure x = a;
    x.at = b.at;
    return x == b;
}

// Merges this snapshot's counts into `mem`; returns true when the observed count rose.
bool remember_counts(GateMemory& mem, Attempts& a, int failed_pods, int restarts) {
    int observed = failed_pods;
    for (const auto& [key, runs] : a.failed_runs) {
        observed = sat_add(observed, runs);
    }
    bool rose = observed > mem.observed_failures;
    mem.failed_runs = std::move(a.failed_runs);
    mem.failed_pods = failed_pods;
    mem.restarts = std::max(mem.restarts, restarts);
    mem.observed_failures = std::max(mem.observed_failures, observed);
    return rose;
}

void remember_failure(GateMemory& mem, const std::optional<Failure>& newest) {
    if (!newest) {
        return;
    }
    const std::optional<Failure>& last = mem.last_failure;
    std::string key = failure_key(*newest);
    auto seen = std::lower_bound(mem.failures_seen.begin(), mem.failures_seen.end(), key);
    bool fresh =
        (seen == mem.failures_seen.end() || *seen != key) && !(last && failure_key(*last) == key);
    if (seen == mem.failures_seen.end() || *seen != key) {
        mem.failures_seen.insert(seen, key);
    }
    if (!last || (!same_failure(*newest, *last) &&
                  (newest->at > last->at || (fresh && newest->at == last->at)))) {
        mem.last_failure = newest;
    }
}

Counts make_counts(const Attempts& a, int restarts, int failed_pods,
                   const std::optional<Failure>& last) {
    Counts c{restarts, a.restart_limit,     failed_pods, a.failed_pod_limit, 0, 0,
             0,        FailureKind::restart};
    int restart_left = std::max(0, c.restart_limit - restarts);
    int pod_left = std::max(0, c.failed_pod_limit - failed_pods);
    bool use_restarts = a.restarts_apply;
    if (use_restarts && restart_left != pod_left) {
        use_restarts = restart_left < pod_left;
    } else if (use_restarts) {
        use_restarts = !(last && last->kind == FailureKind::pod);
    }
    c.attempt = use_restarts ? restarts : failed_pods;
    c.limit = use_restarts ? c.restart_limit : c.failed_pod_limit;
    c.left = use_restarts ? restart_left : pod_left;
    c.nearer = use_restarts ? FailureKind::restart : FailureKind::pod;
    return c;
}

std::string attempt_text(const Counts& c) {
    return std::string(c.nearer == FailureKind::pod ? "pod " : "attempt ") +
           std::to_string(c.attempt) + " of " + std::to_string(c.limit) + " failed, " +
           std::to_string(c.left) + " left";
}

std::optional<std::string> failure_command(const GateMemory& mem) {
    if (!mem.last_failure) {
        return std::nullopt;
    }
    const Failure& f = *mem.last_failure;
    if (f.kind == FailureKind::restart && f.container) {
        return logs_command(mem.job_namespace, mem.job_name, *f.container);
    }
    return describe_command(mem.job_namespace, mem.job_name);
}

std::string last_failure_text(const GateMemory& mem) {
    return mem.last_failure ? describe_failure(*mem.last_failure) : "none observed";
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
    std::string out;
    for (const std::string& p : parts) {
        out += (out.empty() ? "" : sep) + p;
    }
    return out;
}

State state_of(const Job& job, const Attempts& a) {
    if (true_condition(job, "Failed") != nullptr) {
        return State::failed;
    }
    if (true_condition(job, "Complete") != nullptr ||
        true_condition(job, "SuccessCriteriaMet") != nullptr) {
        return State::succeeded;
    }
    if (true_condition(job, "FailureTarget") != nullptr) {
        return State::failing;
    }
    // Retrying while a failed run still counts against a limit. Once none does (the
    // crash-looping pod succeeded, or left with nothing counted), the Job just runs:
    // reporting "attempt 0" against remembered failures would read as a new retry.
    return a.restarts + a.failed_pods > 0 ? State::retrying : State::running;
}

struct Pass {
    Gate gate;
    const Job& job;
    std::vector<const Pod*> pods;
    std::string ref;  // "Job ns/name"
};

void explain_running(const Pass& p, Verdict& v) {
    std::vector<std::string> waiting = waiting_reasons(p.pods);
    v.progressing.reason = names(p.gate).running_reason;
    v.progressing.message = p.ref + " is running";
    std::string describe = describe_command(p.job.namespace_, p.job.name);
    if (!waiting.empty()) {
        v.progressing.message += ", but " + join(waiting, "; ") + ". Details: " + describe;
        v.command = describe;
    } else if (p.pods.empty()) {
        v.progressing.message += ", no pod yet (kubectl describe shows why: " + describe + ")";
    }
    if (v.memory.observed_failures > 0) {
        v.progressing.message +=
            " (after " + std::to_string(v.memory.observed_failures) + " failed attempt(s))";
    }
}

void explain_retrying(const Pass& p, Verdict& v, bool rose) {
    v.progressing.reason = names(p.gate).retry_reason;
    v.command = failure_command(v.memory);
    std::string m = attempt_text(v.counts);
    if (v.memory.last_failure) {
        m += ": " + last_failure_text(v.memory);
    }
    std::vector<std::string> waiting = waiting_reasons(p.pods);
    if (!waiting.empty()) {
        m += "; now " + join(waiting, "; ");
    }
    if (v.command) {
        m += ". " +
             std::string(v.memory.last_failure->kind == FailureKind::restart ? "Logs: "
                                                                             : "Details: ") +
             *v.command;
    }
    v.progressing.message = m;
    if (rose) {
        v.event = Event{"Warning", names(p.gate).retry_event, m};
    }
}

void explain_failing(const Pass& p, Verdict& v) {
    const Condition& target = *true_condition(p.job, "FailureTarget");
    v.progressing.reason = names(p.gate).running_reason;
    v.command = failure_command(v.memory);
    v.progressing.message =
        p.ref + " is failing: " + target.reason + ": " + target.message +
        "; its remaining pods are being stopped. Last failure: " + last_failure_text(v.memory) +
        " (" + attempt_text(v.counts) + ")" + (v.command ? ". Details: " + *v.command : "");
}

void explain_failed(const Pass& p, Verdict& v) {
    const Condition& failed = *true_condition(p.job, "Failed");
    v.phase = Phase::failed;
    v.progressing.status = false;
    v.progressing.reason = names(p.gate).failed_reason;
    v.command = describe_command(p.job.namespace_, p.job.name);
    v.progressing.message = p.ref + " failed: " + failed.reason + ": " + failed.message +
                            ". Last failure: " + last_failure_text(v.memory) + " (" +
                            attempt_text(v.counts) + "). Details: " + *v.command +
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
    if (v.memory.observed_failures > 0) {
        v.progressing.message +=
            " after " + std::to_string(v.memory.observed_failures) + " failed attempt(s)";
    }
    v.memory.completed = true;
}

Verdict evaluate_present(Gate gate, const Job& job, const std::vector<Pod>& pods,
                         const GateMemory& memory, TimePoint now) {
    Verdict v;
    v.memory = memory.job_uid.empty() || job.uid.empty() || memory.job_uid == job.uid
                   ? memory
                   : GateMemory{};
    v.memory.job_uid = job.uid;
    v.memory.job_namespace = job.namespace_;
    v.memory.job_name = job.name;
    Pass p{gate, job, select_pods(job, pods), "Job " + job.namespace_ + "/" + job.name};
    Attempts a = count_attempts(job, p.pods, std::move(v.memory.failed_runs));
    v.state = state_of(job, a);
    bool ending = v.state == State::failing || v.state == State::failed;
    int failed_pods = std::max(a.failed_pods, v.memory.failed_pods);
    int restarts = ending ? std::max(a.restarts, v.memory.restarts) : a.restarts;
    bool rose = remember_counts(v.memory, a, failed_pods, restarts);
    std::vector<std::string> tied;
    remember_failure(v.memory, newest_failure(job, p.pods, now, v.memory.failures_seen, &tied));
    for (auto& key : tied) {  // all failures of the newest second count as seen now
        auto at =
            std::lower_bound(v.memory.failures_seen.begin(), v.memory.failures_seen.end(), key);
        if (at == v.memory.failures_seen.end() || *at != key) {
            v.memory.failures_seen.insert(at, std::move(key));
        }
    }
    v.counts = make_counts(a, restarts, failed_pods, v.memory.last_failure);
    switch (v.state) {
        case State::running:
            explain_running(p, v);
            break;
        case State::retrying:
            explain_retrying(p, v, rose);
            break;
        case State::failing:
            explain_failing(p, v);
            break;
        case State::failed:
            explain_failed(p, v);
            break;
        case State::succeeded:
            explain_succeeded(p, v);
            break;
    }
    v.last_failure = v.memory.last_failure;
    return v;
}

Verdict evaluate_deleted(Gate gate, const GateMemory& memory) {
    Verdict v;
    v.memory = memory;
    v.counts.restarts = memory.restarts;
    v.counts.failed_pods = memory.failed_pods;
    v.last_failure = memory.last_failure;
    std::string ref = "Job " + memory.job_namespace + "/" + memory.job_name;
    if (memory.completed) {
        v.state = State::succeeded;
        v.phase = Phase::succeeded;
        v.progressing.reason = names(gate).complete_reason;
        v.progressing.message = ref + " completed and was deleted since";
        return v;
    }
    v.state = State::failed;
    v.phase = Phase::failed;
    v.progressing = {false, "JobDeleted",
                     ref + " was deleted before it completed (JobDeleted). Last failure: " +
                         last_failure_text(memory) + ". Rerunning the gate creates the Job again."};
    if (!memory.failure_recorded) {
        v.event = Event{"Warning", names(gate).failed_event, v.progressing.message};
        v.memory.failure_recorded = true;
    }
    return v;
}

}  // namespace

const char* phase_name(Phase phase) {
    switch (phase) {
        case Phase::upgrading:
            return "Upgrading";
        case Phase::failed:
            return "Failed";
        case Phase::succeeded:
            return "Succeeded";
    }
    return "Upgrading";
}

const char* state_name(State state) {
    switch (state) {
        case State::running:
            return "running";
        case State::retrying:
            return "retrying";
        case State::failing:
            return "failing";
        case State::failed:
            return "failed";
        case State::succeeded:
            return "succeeded";
    }
    return "running";
}

Verdict evaluate(Gate gate, const std::optional<Job>& job, const std::vector<Pod>& pods,
                 const GateMemory& memory, TimePoint now) {
    return job ? evaluate_present(gate, *job, pods, memory, now) : evaluate_deleted(gate, memory);
}

}  // namespace envgate::gates
