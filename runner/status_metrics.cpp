#include "runner/status_metrics.h"

#include <fmt/format.h>

#include "locks/lock_record.h"

namespace envgate {
namespace {

using locks::LockState;

// A label value as the exposition format wants it: \\, \" and \n escaped.
std::string label_value(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

struct Family {
    const char* name;
    const char* help;
};

void header(std::string& out, const Family& f) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
}

void sample(std::string& out, const Family& f, const std::string& labels, double value) {
    out += fmt::format("{}{{{}}} {}\n", f.name, labels, value);
}

const Family k_state{"envgate_lock_state",
                     "Whether the environment's lock is in this state (free, held, failed)."};
const Family k_age{"envgate_lock_holder_age_seconds",
                   "Seconds since the lock's holder acquired it (held or failed locks)."};
const Family k_queue{"envgate_lock_queue_length", "Pipelines waiting in the lock's queue."};
const Family k_read{"envgate_lock_read_success",
                    "1 when the lock's store answered and its record was understood, else 0."};
const Family k_transitions{"envgate_lock_transitions",
                           "Holder changes of the lock so far (its lease transitions)."};

const Family k_result{"envgate_gate_last_run_result",
                      "Whether the gate's last run has this result (running, succeeded, failed)."};
const Family k_duration{"envgate_gate_last_run_duration_seconds",
                        "Seconds the gate's last run took, or has taken so far."};
const Family k_retries{"envgate_gate_last_run_retries",
                       "Failed runs of its migrations the gate's last run counted."};
const Family k_started{"envgate_gate_last_run_start_timestamp_seconds",
                       "When the gate's last run created its Job, in seconds since the epoch."};
const Family k_gates_read{"envgate_gate_read_success",
                          "1 when the environment's gate Jobs could be listed, else 0."};

double seconds(Duration d) {
    return std::chrono::duration<double>(d).count();
}

void render_gates(std::string& out, const std::vector<GateRuns>& gates) {
    auto labels = [](const GateRunStatus& r) {
        return "environment=\"" + label_value(r.environment) + "\",gate=\"" + label_value(r.gate) +
               "\"";
    };
    header(out, k_result);
    for (const auto& env : gates) {
        for (const auto& r : env.runs) {
            for (const char* result : {"running", "succeeded", "failed"}) {
                sample(out, k_result, labels(r) + ",result=\"" + result + "\"",
                       r.result == result ? 1 : 0);
            }
        }
    }
    header(out, k_duration);
    header(out, k_retries);
    header(out, k_started);
    for (const auto& env : gates) {
        for (const auto& r : env.runs) {
            sample(out, k_duration, labels(r), seconds(r.duration));
            sample(out, k_retries, labels(r), r.retries);
            sample(out, k_started, labels(r), seconds(r.started.time_since_epoch()));
        }
    }
    header(out, k_gates_read);
    for (const auto& env : gates) {
        sample(out, k_gates_read, "environment=\"" + label_value(env.environment) + "\"",
               env.error.empty() ? 1 : 0);
    }
}

}  // namespace

std::string render_status_prometheus(const std::vector<LockStatus>& locks,
                                     const std::vector<GateRuns>& gates, TimePoint now) {
    std::string out;
    auto env = [](const LockStatus& s) {
        return "environment=\"" + label_value(s.record.name) + "\"";
    };
    header(out, k_state);
    for (const auto& s : locks) {
        for (LockState state : {LockState::free, LockState::held, LockState::failed}) {
            const std::string labels = env(s) + ",state=\"" + locks::state_name(state) + "\"";
            sample(out, k_state, labels, s.error.empty() && s.record.state == state ? 1 : 0);
        }
    }
    header(out, k_age);
    for (const auto& s : locks) {
        if (s.error.empty() && s.record.state != LockState::free &&
            s.record.acquired_at != TimePoint{}) {
            const auto age = std::chrono::duration<double>(now - s.record.acquired_at).count();
            sample(out, k_age, env(s), std::max(0.0, age));
        }
    }
    header(out, k_queue);
    for (const auto& s : locks) {
        if (s.error.empty()) {
            sample(out, k_queue, env(s), static_cast<double>(s.record.waiters.size()));
        }
    }
    header(out, k_transitions);
    for (const auto& s : locks) {
        if (s.error.empty()) {
            sample(out, k_transitions, env(s), static_cast<double>(s.record.lease_transitions));
        }
    }
    header(out, k_read);
    for (const auto& s : locks) {
        sample(out, k_read, env(s), s.error.empty() ? 1 : 0);
    }
    if (!gates.empty()) {
        render_gates(out, gates);
    }
    out += "# EOF\n";
    return out;
}

}  // namespace envgate
