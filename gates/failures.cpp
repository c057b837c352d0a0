#include "gates/failures.h"

#include <algorithm>
#include <string_view>

#include "gates/counting.h"
#include "runner/base/vocab/shell_quote.h"

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

const Condition* find_condition(const std::vector<Condition>& list, std::string_view type) {
    for (const Condition& c : list) {
        if (c.type == type && c.status == "True"sv) {
            return &c;
        }
    }
    return nullptr;
}

bool job_is_ending(const Job& job) {
    return find_condition(job.conditions, "FailureTarget") != nullptr ||
           find_condition(job.conditions, "Failed") != nullptr;
}

// Exit codes of killed containers say how they were killed, not how the migration ended.
bool exit_code_trusted(const ContainerTerminated& t, bool pod_disrupted) {
    if (t.reason == "ContainerStatusUnknown"sv) {
        return false;
    }
    return !(pod_disrupted && (t.exit_code == 137 || t.exit_code == 143));
}

// The newest failed run of a container: its current state, else its last state. A run
// killed and not restarted (its pod's deletion or eviction stopped it) is not a failure:
// the one before it may be.
const ContainerTerminated* failed_run(const ContainerStatus& c) {
    if (c.state.terminated && c.state.terminated->exit_code != 0 && !killed_not_restarted(c)) {
        return &*c.state.terminated;
    }
    if (c.last_state.terminated && c.last_state.terminated->exit_code != 0) {
        return &*c.last_state.terminated;
    }
    return nullptr;
}

// The newest run of `c` as its pod's failure shows it: its current state, or, while it
// waits after a run the kubelet could no longer locate, that run (lastState).
const ContainerTerminated* pod_run(const Pod& pod, const ContainerStatus& c) {
    if (c.state.terminated) {
        return &*c.state.terminated;
    }
    return waits_after_unlocated_run(pod, c) ? &*c.last_state.terminated : nullptr;
}

// The first container whose newest run failed; with ContainerRuns::own, only one whose
// run ended with the pod (the others' failed runs are runs of their own).
const ContainerStatus* first_failed_container(const Pod& pod,
                                              ContainerRuns runs = ContainerRuns::in_pod) {
    for (const auto* list : {&pod.containers, &pod.init_containers}) {
        for (const ContainerStatus& c : *list) {
            const ContainerTerminated* t = pod_run(pod, c);
            if (t != nullptr && t->exit_code != 0 &&
                (runs == ContainerRuns::in_pod || ended_with_pod(pod, c) || !c.state.terminated)) {
                return &c;
            }
        }
    }
    return nullptr;
}

// The reason a pod failure is reported under: its disruption's, else the pod's, else
// Deleted for a deleted pod whose container the deletion killed, else its failed
// container's, else Deleted or Failed.
std::string_view pod_failure_reason(const Pod& pod, const Condition* disruption,
                                    const ContainerStatus* c) {
    if (disruption != nullptr) {
        return disruption->reason;
    }
    if (!pod.reason.empty()) {
        return pod.reason;
    }
    if (c != nullptr && stopped_by_deletion(pod, *c)) {
        return "Deleted";  // the same pod, told alike before and after its kill
    }
    if (c != nullptr && !pod_run(pod, *c)->reason.empty()) {
        return pod_run(pod, *c)->reason;
    }
    return pod.deletion_timestamp ? "Deleted" : "Failed";
}

Failure pod_failure(const Pod& pod, ContainerRuns runs = ContainerRuns::in_pod) {
    const Condition* disruption = find_condition(pod.conditions, "DisruptionTarget");
    const ContainerStatus* c = first_failed_container(pod, runs);
    Failure f;
    f.pod = pod.name;
    f.kind = FailureKind::pod;
    if (c != nullptr) {
        const ContainerTerminated& t = *pod_run(pod, *c);
        bool disrupted = disruption != nullptr || !pod.reason.empty() || pod.deletion_timestamp;
        f.container = c->name;
        f.exit_code = t.exit_code;
        f.exit_code_trusted = exit_code_trusted(t, disrupted);
        f.message = t.message;
        f.at = t.finished_at;
    }
    f.reason = std::string(pod_failure_reason(pod, disruption, c));
    if (disruption != nullptr) {
        f.message = disruption->message;
        f.at = disruption->last_transition_time ? disruption->last_transition_time : f.at;
    } else if (!pod.reason.empty() || c == nullptr || pod_run(pod, *c)->reason.empty()) {
        f.message = pod.message;
    }
    if (!f.at) {
        f.at = deleted_at(pod);
    }
    return f;
}

// When a pod failed as a whole: its disruption, else its failed container, else when it
// turned not Ready, else when it was deleted (the controller's order, backoff_utils.go).
std::optional<TimePoint> pod_failure_time(const Pod& pod,
                                          ContainerRuns runs = ContainerRuns::in_pod) {
    const Condition* disruption = find_condition(pod.conditions, "DisruptionTarget");
    if (disruption != nullptr && disruption->last_transition_time) {
        return disruption->last_transition_time;
    }
    const ContainerStatus* c = first_failed_container(pod, runs);
    if (c != nullptr && pod_run(pod, *c)->finished_at) {
        return pod_run(pod, *c)->finished_at;
    }
    for (const Condition& ready : pod.conditions) {
        if (ready.type == "Ready"sv && ready.status == "False"sv && ready.last_transition_time &&
            pod.phase == "Failed"sv) {
            return ready.last_transition_time;
        }
    }
    return deleted_at(pod);
}

// A failure found in a snapshot, before it is spelled out: the pod, and for a restart
// the container whose newest failed run it is.
struct Candidate {
    const Pod* pod = nullptr;
    const ContainerStatus* container = nullptr;
    TimePoint at;
};

Failure restart_failure(const Pod& pod, const ContainerStatus& c) {
    const ContainerTerminated& t = *failed_run(c);
    return Failure{pod.name,  c.name,       FailureKind::restart,
                   t.reason,  t.exit_code,  exit_code_trusted(t, false),
                   t.message, t.finished_at};
}

Failure spell_out(const Candidate& c) {
    return c.container != nullptr ? restart_failure(*c.pod, *c.container) : pod_failure(*c.pod);
}

// failure_key(spell_out(c)) into `key` without spelling the failure out (ties can be
// many pods; the buffer is reused).
void candidate_key(const Candidate& c, std::string& key) {
    const ContainerStatus* container = c.container;
    std::string_view reason;
    if (container != nullptr) {
        reason = failed_run(*container)->reason;
    } else {
        container = first_failed_container(*c.pod);
        reason = pod_failure_reason(*c.pod, find_condition(c.pod->conditions, "DisruptionTarget"),
                                    container);
    }
    key.assign(c.pod->name).append("/");
    if (container != nullptr) {
        key.append(container->name);
    }
    key.append("/").append(reason);
}

// Keeps the candidates of the newest timestamp, in list order.
void consider(std::vector<Candidate>& top, const Candidate& next) {
    if (top.empty() || next.at > top.front().at) {
        top.assign(1, next);
    } else if (next.at == top.front().at) {
        top.push_back(next);
    }
}

// More failures than this in one second is a mass disruption (a node drain): any of
// them names it well, so the last listed wins and none is remembered, which bounds the
// work per pass and the keys kept in the Job's annotations.
constexpr std::size_t k_max_tie = 8;

const Candidate& pick(const std::vector<Candidate>& top, const std::vector<std::string>& seen,
                      std::vector<std::string>* tied) {
    if (top.size() == 1 || top.size() > k_max_tie) {
        return top.back();
    }
    const Candidate* chosen = nullptr;
    std::string key;
    for (auto it = top.rbegin(); it != top.rend(); ++it) {
        candidate_key(*it, key);
        if (std::binary_search(seen.begin(), seen.end(), key)) {
            continue;
        }
        if (chosen == nullptr) {
            chosen = &*it;
        }
        if (tied != nullptr) {
            tied->push_back(key);
        }
    }
    return chosen != nullptr ? *chosen : top.back();
}

const char* pod_verb(const std::string& reason) {
    if (reason == "PreemptionByScheduler"sv || reason == "PreemptionByKubeScheduler"sv ||
        reason == "Preempting"sv) {
        return "was preempted";
    }
    if (reason == "TerminationByKubelet"sv) {
        return "was evicted by the kubelet";
    }
    if (reason == "Evicted"sv) {
        return "was evicted";
    }
    if (reason == "EvictionByEvictionAPI"sv) {
        return "was evicted through the Eviction API";
    }
    if (reason == "DeletionByTaintManager"sv || reason == "DeletionByDeviceTaintManager"sv) {
        return "was deleted for a NoExecute taint";
    }
    if (reason == "DeletionByPodGC"sv) {
        return "was deleted by PodGC";
    }
    if (reason == "Deleted"sv) {
        return "was deleted";
    }
    return "failed";
}

std::string restart_text(const Failure& f) {
    std::string code = std::to_string(f.exit_code.value_or(0));
    std::string c = f.container.value_or("?");
    if (!f.exit_code_trusted) {
        return "container " + c + " was killed (" + f.reason + ", exit code " + code +
               " is not the migration's own)";
    }
    std::string s = "container " + c + " exited " + code + " (" + f.reason + ")";
    std::string_view msg = f.message;
    while (!msg.empty() && (msg.back() == ' ' || msg.back() == '\n' || msg.back() == '\r')) {
        msg.remove_suffix(1);
    }
    return s + (msg.empty() ? ", no termination message" : ": " + std::string(msg));
}

}  // namespace

std::string shell_quote(std::string_view text) {
    return quote_for_shell(text, "abcdefghijklmnopqrstuvwxyz0123456789.-");
}

namespace {

// `ref` as kubectl names it: job/NAME or pod/NAME.
std::string logs_of(const std::string& ns, const std::string& ref, const std::string& container,
                    Run run) {
    return "kubectl -n " + shell_quote(ns) + " logs " + ref + " -c " + shell_quote(container) +
           (run == Run::previous ? " --previous" : "");
}

}  // namespace

std::string logs_command(const std::string& ns, const std::string& job,
                         const std::string& container, Run run) {
    return logs_of(ns, "job/" + shell_quote(job), container, run);
}

std::string pod_logs_command(const std::string& ns, const std::string& pod,
                             const std::string& container, Run run) {
    return logs_of(ns, "pod/" + shell_quote(pod), container, run);
}

Run run_of(const std::vector<const Pod*>& pods, const Failure& f) {
    for (const Pod* pod : pods) {
        if (pod->name != f.pod) {
            continue;
        }
        for (const auto* list : {&pod->containers, &pod->init_containers}) {
            for (const ContainerStatus& c : *list) {
                if (f.container && c.name == *f.container && c.state.terminated &&
                    failed_run(c) == &*c.state.terminated) {
                    return Run::current;
                }
            }
        }
    }
    return Run::previous;
}

std::optional<Run> shows_run(const ContainerStatus& c, int run) {
    const int r = c.restart_count;
    const bool back_off = !c.state.running && !c.state.terminated && c.last_state.terminated;
    if (c.last_state.terminated && run == (back_off ? r + 1 : r)) {
        return Run::previous;
    }
    if (run == r + 1 && (c.state.terminated || back_off)) {
        return Run::current;
    }
    return std::nullopt;
}

const Pod* live_pod(const std::vector<const Pod*>& pods, const std::string& name) {
    for (const Pod* pod : pods) {
        if (pod->name == name) {
            return pod->deletion_timestamp ? nullptr : pod;
        }
    }
    return nullptr;
}

namespace {

// Whether the terminated run `t` is the one `f` describes, or a later run of the same
// container that failed alike (the line that counts it names the newest failed run;
// `f.at` may be the time a pass first saw it, when the run has no finishedAt).
bool is_run_of(const ContainerTerminated& t, const Failure& f) {
    return t.exit_code == f.exit_code.value_or(t.exit_code) && t.reason == f.reason &&
           t.message == f.message && (!t.finished_at || !f.at || *t.finished_at >= *f.at);
}

}  // namespace

std::optional<std::string> run_logs_command(const std::string& ns,
                                            const std::vector<const Pod*>& pods, const Failure& f) {
    const Pod* pod = live_pod(pods, f.pod);
    if (pod == nullptr || !f.container) {
        return std::nullopt;
    }
    for (const auto* list : {&pod->containers, &pod->init_containers}) {
        for (const ContainerStatus& c : *list) {
            if (c.name != *f.container) {
                continue;
            }
            if (f.kind == FailureKind::pod) {
                // A pod that failed as a whole ran its container once more at most: the
                // current one, when the exit code is the migration's own.
                if (!f.exit_code_trusted || !c.state.terminated) {
                    return std::nullopt;
                }
                return pod_logs_command(ns, f.pod, c.name, Run::current);
            }
            const ContainerTerminated* t = failed_run(c);
            if (t == nullptr || !is_run_of(*t, f)) {
                return std::nullopt;  // a later run of the container replaced it
            }
            const bool back_off = !c.state.running && !c.state.terminated;
            const bool current = c.state.terminated && t == &*c.state.terminated;
            const int run = current || back_off ? c.restart_count + 1 : c.restart_count;
            auto which = shows_run(c, run);
            if (!which) {
                return std::nullopt;
            }
            return pod_logs_command(ns, f.pod, c.name, *which);
        }
    }
    return std::nullopt;
}

std::string describe_command(const std::string& ns, const std::string& job) {
    return "kubectl -n " + shell_quote(ns) + " describe " + "job/" + shell_quote(job);
}

std::string describe_pod_command(const std::string& ns, const std::string& pod) {
    return "kubectl -n " + shell_quote(ns) + " describe " + "pod/" + shell_quote(pod);
}

std::string events_command(const std::string& ns, const std::string& name) {
    return "kubectl -n " + shell_quote(ns) +
           " get events --field-selector involvedObject.name=" + shell_quote(name);
}

namespace {

bool has_failed_run(const Job& job, const Pod& pod) {
    if (job.restart_policy != "OnFailure"sv) {
        return false;
    }
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
        for (const ContainerStatus& c : *list) {
            if (failed_run(c) != nullptr) {
                return true;
            }
        }
    }
    return false;
}

}  // namespace

std::string failure_key(const Failure& f) {
    return f.pod + "/" + f.container.value_or("") + "/" + f.reason;
}

std::optional<Failure> newest_failure(const Job& job, const std::vector<const Pod*>& pods,
                                      TimePoint now, const std::vector<std::string>& seen,
                                      std::vector<std::string>* tied) {
    std::vector<Candidate> top;
    bool ending = job_is_ending(job);
    for (const Pod* pod : pods) {
        if (removed_by_suspension(job, *pod)) {
            continue;  // the suspension stopped it: no failure of the migration
        }
        if (is_pod_failed(job, *pod) && !ignored_by_policy(job, *pod)) {
            // Its own failure: disrupted (evicted, preempted, drained), or failed with
            // nobody deleting it. A pod that reached Failed only because it was deleted
            // (the controller stopping it) carries the kill's exit code, not a failure.
            bool own = find_condition(pod->conditions, "DisruptionTarget") != nullptr ||
                       (pod->phase == "Failed"sv && !pod->deletion_timestamp);
            // A pod deleted with no reason of its own while its containers crash-looped
            // is the controller giving up on those runs (its status may not say so
            // yet): the last failure stays the container's, not "was deleted".
            if (own || (!ending && !has_failed_run(job, *pod))) {
                consider(top, {pod, nullptr, pod_failure_time(*pod).value_or(now)});
                continue;
            }
        }
        // A pod Failed with nobody deleting it ended as a whole (above); one the Job's
        // deletion stopped keeps the failed runs it had, which are the last failure.
        if (job.restart_policy != "OnFailure"sv ||
            (pod->phase == "Failed"sv && !pod->deletion_timestamp)) {
            continue;
        }
        for (const auto* list : {&pod->init_containers, &pod->containers}) {
            for (const ContainerStatus& c : *list) {
                if (const ContainerTerminated* t = failed_run(c)) {
                    consider(top, {pod, &c, t->finished_at.value_or(now)});
                }
            }
        }
    }
    if (top.empty()) {
        return std::nullopt;
    }
    const Candidate& best = pick(top, seen, tied);
    Failure out = spell_out(best);
    out.at = best.at;
    return out;
}

std::optional<ShownRun> shown_failed_run(const Pod& pod, const ContainerStatus& c) {
    const ContainerTerminated* t = failed_run(c);
    if (t == nullptr) {
        return std::nullopt;
    }
    const bool back_off = !c.state.running && !c.state.terminated;
    const bool current = c.state.terminated && t == &*c.state.terminated;
    return ShownRun{restart_failure(pod, c),
                    current || back_off ? sat_add(c.restart_count, 1) : c.restart_count};
}

ContainerRuns container_runs(const Job& job) {
    return job.restart_policy == "OnFailure"sv ? ContainerRuns::own : ContainerRuns::in_pod;
}

Failure pod_failure_of(const Pod& pod, ContainerRuns runs) {
    Failure f = pod_failure(pod, runs);
    f.at = pod_failure_time(pod, runs);
    return f;
}

bool failed_on_its_own(const Pod& pod, bool job_ending) {
    return find_condition(pod.conditions, "DisruptionTarget") != nullptr ||
           (pod.phase == "Failed"sv && !pod.deletion_timestamp) || !job_ending;
}

std::string describe_failure(const Failure& f) {
    if (f.kind == FailureKind::restart) {
        return restart_text(f);
    }
    std::string s = "pod " + f.pod + " " + pod_verb(f.reason) + " (" + f.reason + ")";
    std::string_view msg = f.message;
    while (!msg.empty() && (msg.back() == ' ' || msg.back() == '\n')) {
        msg.remove_suffix(1);
    }
    s += msg.empty() ? ", no message" : ": " + std::string(msg);
    if (f.container && f.exit_code) {
        std::string code = std::to_string(*f.exit_code);
        s += f.exit_code_trusted ? "; container " + *f.container + " exited " + code
                                 : "; container " + *f.container + " exit code " + code +
                                       " comes from the kill, not from the migration";
    }
    return s;
}

}  // namespace envgate::gates
