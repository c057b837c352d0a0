#include "runner/status_gates.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include "gates/memory_json.h"
#include "runner/connect/kube_session.h"
#include "runner/gating/manifest.h"
#include "runner/report/job_log.h"
#include "runner/run/reruns.h"

namespace envgate {
namespace {

using nlohmann::json;

std::optional<TimePoint> time_at(const json& object, const char* field) {
    if (!object.is_object() || !object.contains(field) || !object[field].is_string()) {
        return std::nullopt;
    }
    return parse_rfc3339(object[field].get<std::string>());
}

// Whether the Job has condition `type` with status True.
bool condition_true(const json& job, const char* type) {
    auto status = job.find("status");
    if (status == job.end() || !status->is_object()) {
        return false;
    }
    auto conditions = status->find("conditions");
    if (conditions == status->end() || !conditions->is_array()) {
        return false;
    }
    for (const auto& c : *conditions) {
        if (c.is_object() && c.value("type", "") == type && c.value("status", "") == "True") {
            return true;
        }
    }
    return false;
}

// When the Job ended: its completionTime, else the Failed condition's transition.
std::optional<TimePoint> ended_at(const json& job) {
    const json status = job.value("status", json::object());
    if (auto done = time_at(status, "completionTime")) {
        return done;
    }
    for (const auto& c : status.value("conditions", json::array())) {
        if (c.is_object() && c.value("type", "") == "Failed" && c.value("status", "") == "True") {
            return time_at(c, "lastTransitionTime");
        }
    }
    return std::nullopt;
}

// A label of `labels` holding a whole number (the counters envgate stamps on its Jobs).
std::optional<std::int64_t> number_label(const json& labels, const char* key) {
    auto it = labels.find(key);
    if (it == labels.end() || !it->is_string()) {
        return std::nullopt;
    }
    const std::string& text = it->get_ref<const std::string&>();
    std::int64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return n;
}

// Which of two Jobs of one gate is the later run. creationTimestamp has whole seconds,
// so a rerun in the same second as the run before it ties; then what envgate stamped on
// the Jobs decides: the fencing token of the lock hold that created the Job
// (envgate.dev/fence, the lock's lease_transitions: every take of the lock adds one)
// and the unlock it ran after (envgate.dev/unlock, the unlock's sequence number), a Job
// without them first; then the name, so the list's order never decides. The time stays
// first: a lock record set aside by hand starts its counters again.
using RunOrder =
    std::tuple<TimePoint, std::optional<std::int64_t>, std::optional<std::int64_t>, std::string>;

RunOrder run_order(const GateRunStatus& run, const json& labels) {
    return {run.started, number_label(labels, k_label_fence), number_label(labels, k_label_unlock),
            run.job};
}

std::optional<GateRunStatus> run_of(const std::string& environment, const json& job,
                                    TimePoint now) {
    const json meta = job.value("metadata", json::object());
    const json labels = meta.value("labels", json::object());
    auto started = time_at(meta, "creationTimestamp");
    if (!labels.contains(k_label_gate) || !labels[k_label_gate].is_string() || !started) {
        return std::nullopt;
    }
    GateRunStatus run;
    run.environment = environment;
    run.gate = labels[k_label_gate].get<std::string>();
    run.job = meta.value("name", "");
    run.started = *started;
    std::map<std::string, std::string> annotations;
    const json stored = meta.value("annotations", json::object());
    for (const auto& [k, v] : stored.items()) {
        if (v.is_string()) {
            annotations[k] = v.get<std::string>();
        }
    }
    auto memory = gates::memory_from_annotations(annotations);
    // The Job's own count of failed pods when the memory is not yet written (a running
    // restartPolicy Never Job: runner/gating/gate_pass.h, memory_kept_by_pods).
    const json status = job.value("status", json::object());
    const json failed_pods = status.is_object() ? status.value("failed", json(0)) : json(0);
    const int counted =
        failed_pods.is_number_integer()
            ? static_cast<int>(std::clamp<long long>(failed_pods.get<long long>(), 0, 1'000'000))
            : 0;
    run.retries = std::max(memory.is_ok() ? memory->attempts : 0, counted);
    // The Job's own conditions first: the gate does not write what they show
    // (runner/gating/gate_pass.h, only_what_the_job_shows).
    const bool completed = condition_true(job, "Complete") ||
                           condition_true(job, "SuccessCriteriaMet") ||
                           (memory.is_ok() && memory->completed);
    const bool failed = condition_true(job, "Failed") ||
                        (memory.is_ok() && memory->ended && memory->ended->type == "Failed");
    run.result = completed ? "succeeded" : failed ? "failed" : "running";
    auto end = completed || failed ? ended_at(job) : std::nullopt;
    run.duration = std::max(Duration::zero(), end.value_or(now) - *started);
    return run;
}

}  // namespace

std::vector<GateRunStatus> last_gate_runs(const std::string& environment,
                                          const std::vector<json>& jobs, TimePoint now) {
    std::map<std::string, std::pair<RunOrder, GateRunStatus>> newest;
    for (const auto& job : jobs) {
        auto run = run_of(environment, job, now);
        if (!run) {
            continue;
        }
        RunOrder order =
            run_order(*run, job.value("metadata", json::object()).value("labels", json::object()));
        const std::string gate = run->gate;
        auto it = newest.find(gate);
        if (it == newest.end() || it->second.first < order) {
            newest[gate] = {std::move(order), std::move(*run)};
        }
    }
    std::vector<GateRunStatus> out;
    for (auto& [gate, run] : newest) {
        out.push_back(std::move(run.second));
    }
    return out;
}

std::vector<GateRuns> read_gate_runs(const Config& config, const std::vector<std::string>& names,
                                     Context& ctx, const std::optional<std::string>& kubeconfig,
                                     const std::optional<std::string>& context,
                                     std::optional<Duration> budget) {
    std::vector<GateRuns> out;
    JobLog log(ctx.err, ctx.clock, log_settings_from(ctx.getenv, false));
    const TimePoint deadline = ctx.clock.now() + budget.value_or(Duration::zero());
    for (const auto& name : names) {
        const Environment* env = config.find_environment(name);
        if (env == nullptr) {
            continue;  // the global qa lock has no gates
        }
        GateRuns runs{name, {}, ""};
        std::optional<Duration> left;
        if (budget) {
            left = deadline - ctx.clock.now();
            if (*left <= Duration::zero()) {
                runs.error = "not read: the time given to read them (--timeout) ran out";
                out.push_back(std::move(runs));
                continue;
            }
        }
        auto session = ctx.env.connect_kube(
            {kubeconfig, context ? context : env->kube_context, left}, ctx.getenv, log);
        auto jobs = session
                        ? session->api->list(kube::jobs(env->namespace_),
                                             {std::string(k_label_environment) + "=" + name, ""})
                        : Result<kube::ObjectList>(session.status());
        if (jobs) {
            runs.runs = last_gate_runs(name, jobs->items, ctx.clock.now());
        } else {
            runs.error = jobs.status().message();
        }
        out.push_back(std::move(runs));
    }
    return out;
}

}  // namespace envgate
