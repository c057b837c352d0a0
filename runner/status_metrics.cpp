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
    bool one_hot = false;
};

const Family k_state{"envgate_lock_state",
                     "Whether the environment's lock is in this state (free, held, failed, or "
                     "unknown when it could not be read).",
                     true};
const Family k_age{"envgate_lock_holder_age_seconds",
                   "Seconds since the lock's holder acquired it (held or failed locks)."};
const Family k_queue{"envgate_lock_queue_length", "Pipelines waiting in the lock's queue."};
const Family k_read{"envgate_lock_read_success",
                    "1 when the lock's store answered and its record was understood, else 0."};
const Family k_transitions{"envgate_lock_transitions",
                           "Holder changes of the lock so far (its lease transitions)."};

const Family k_result{"envgate_gate_last_run_result",
                      "Whether the gate's last run has this result (running, succeeded, failed).",
                      true};
const Family k_duration{"envgate_gate_last_run_duration_seconds",
                        "Seconds the gate's last run took, or has taken so far."};
const Family k_retries{
    "envgate_gate_last_run_retries",
    "Failed runs the gate's last run counted against the Job's limit (attempts)."};
const Family k_started{"envgate_gate_last_run_start_timestamp_seconds",
                       "When the gate's last run created its Job, in seconds since the epoch."};
const Family k_gates_read{"envgate_gate_read_success",
                          "1 when the environment's gate Jobs could be listed, else 0."};

double seconds(Duration d) {
    return std::chrono::duration<double>(d).count();
}

// The families, in the order they are written, with their samples appended to.
class Families {
  public:
    MetricFamily& operator[](const Family& f) {
        for (auto& family : m_families) {
            if (family.name == f.name) {
                return family;
            }
        }
        return m_families.emplace_back(MetricFamily{f.name, f.help, f.one_hot, {}});
    }
    std::vector<MetricFamily> take() { return std::move(m_families); }

  private:
    std::vector<MetricFamily> m_families;
};

using Labels = std::vector<std::pair<std::string, std::string>>;

void add_gates(Families& out, const std::vector<GateRuns>& gates) {
    auto labels = [](const GateRunStatus& r) {
        return Labels{{"environment", r.environment}, {"gate", r.gate}};
    };
    out[k_result];
    for (const auto& env : gates) {
        for (const auto& r : env.runs) {
            for (const char* result : {"running", "succeeded", "failed"}) {
                Labels l = labels(r);
                l.emplace_back("result", result);
                out[k_result].samples.push_back({l, r.result == result ? 1.0 : 0.0});
            }
        }
    }
    out[k_duration];
    out[k_retries];
    out[k_started];
    for (const auto& env : gates) {
        for (const auto& r : env.runs) {
            out[k_duration].samples.push_back({labels(r), seconds(r.duration)});
            out[k_retries].samples.push_back({labels(r), static_cast<double>(r.retries)});
            out[k_started].samples.push_back({labels(r), seconds(r.started.time_since_epoch())});
        }
    }
    out[k_gates_read];
    for (const auto& env : gates) {
        out[k_gates_read].samples.push_back(
            {{{"environment", env.environment}}, env.error.empty() ? 1.0 : 0.0});
    }
}

void add_locks(Families& out, const std::vector<LockStatus>& locks, TimePoint now) {
    auto env = [](const LockStatus& s) { return Labels{{"environment", s.record.name}}; };
    out[k_state];
    for (const auto& s : locks) {
        for (LockState state : {LockState::free, LockState::held, LockState::failed}) {
            Labels l = env(s);
            l.emplace_back("state", locks::state_name(state));
            out[k_state].samples.push_back(
                {l, s.error.empty() && s.record.state == state ? 1.0 : 0.0});
        }
        // One-hot still: a lock that could not be read is in no known state, so a query
        // such as `envgate_lock_state{state="free"} == 1` never counts it as free.
        Labels l = env(s);
        l.emplace_back("state", "unknown");
        out[k_state].samples.push_back({l, s.error.empty() ? 0.0 : 1.0});
    }
    out[k_age];
    for (const auto& s : locks) {
        if (s.error.empty() && s.record.state != LockState::free &&
            s.record.acquired_at != TimePoint{}) {
            out[k_age].samples.push_back(
                {env(s), std::max(0.0, seconds(now - s.record.acquired_at))});
        }
    }
    out[k_queue];
    out[k_transitions];
    for (const auto& s : locks) {
        if (s.error.empty()) {
            out[k_queue].samples.push_back({env(s), static_cast<double>(s.record.waiters.size())});
        }
    }
    for (const auto& s : locks) {
        if (s.error.empty()) {
            out[k_transitions].samples.push_back(
                {env(s), static_cast<double>(s.record.lease_transitions)});
        }
    }
    out[k_read];
    for (const auto& s : locks) {
        out[k_read].samples.push_back({env(s), s.error.empty() ? 1.0 : 0.0});
    }
}

}  // namespace

std::vector<MetricFamily> status_metric_families(const std::vector<LockStatus>& locks,
                                                 const std::vector<GateRuns>& gates,
                                                 TimePoint now) {
    Families out;
    add_locks(out, locks, now);
    if (!gates.empty()) {
        add_gates(out, gates);
    }
    return out.take();
}

std::string render_status_prometheus(const std::vector<LockStatus>& locks,
                                     const std::vector<GateRuns>& gates, TimePoint now) {
    std::string out;
    for (const MetricFamily& f : status_metric_families(locks, gates, now)) {
        out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
        for (const MetricSample& sample : f.samples) {
            std::string labels;
            for (const auto& [name, value] : sample.labels) {
                labels += (labels.empty() ? "" : ",") + name + "=\"" + label_value(value) + "\"";
            }
            out += fmt::format("{}{{{}}} {}\n", f.name, labels, sample.value);
        }
    }
    out += "# EOF\n";
    return out;
}

}  // namespace envgate
