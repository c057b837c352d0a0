#include "runner/gating/gate_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <utility>

#include "gates/counting.h"
#include "gates/decode_json.h"
#include "gates/evaluate.h"
#include "gates/failures.h"
#include "gates/memory_json.h"
#include "gates/messages.h"
#include "gates/restarts.h"
#include "runner/base/exit_code.h"
#include "runner/base/exit_status.h"
#include "runner/gating/gate_pass.h"
#include "runner/gating/job_fence.h"
#include "runner/gating/job_snapshot.h"
#include "runner/gating/kept_logs.h"
#include "runner/gating/progress.h"
#include "runner/report/text.h"

namespace envgate {
namespace {

using nlohmann::json;

std::string label_selector(const json& match_labels) {
    std::string out;
    for (const auto& [k, v] : match_labels.items()) {
        if (v.is_string()) {
            out += (out.empty() ? "" : ",") + k + "=" + v.get<std::string>();
        }
    }
    return out;
}

// Whether the pod selector `match_labels` names the Job's uid (the controller-uid label
// the API server's defaulting adds), so that no pod created before the Job matches it.
bool selects_by_uid(const json& match_labels, const std::string& uid) {
    for (const char* label : {"batch.kubernetes.io/controller-uid", "controller-uid"}) {
        auto it = match_labels.find(label);
        if (!uid.empty() && it != match_labels.end() && it->is_string() && *it == uid) {
            return true;
        }
    }
    return false;
}

JobIdentity identity_of(const json& job) {
    const json& m = job.at("metadata");
    return {m.value("name", ""), m.value("namespace", ""), m.value("uid", "")};
}

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

struct GateRunner::Pass {
    std::optional<json> job;            // nullopt: the Job is gone
    std::optional<gates::Job> decoded;  // the Job as evaluated
    std::vector<gates::Pod> pods;       // what was evaluated
    gates::Verdict verdict;
    std::set<std::string> pod_uids;  // listed, or deleted as the watch last saw them
    bool consistent = true;          // false: no snapshot settled, nothing was evaluated
    std::uint64_t revision = 0;      // the store's revision the pair shows (0: not known)
    // With consistent false: the Job controller owes the Job a write that will bring a
    // pair from the watches; wait for it until then, and read the API after.
    std::optional<TimePoint> wait_until;
    // A pair from the caches taken back: they hold changes after it, which the next
    // pass looks at without waiting for another (the newest may be the last, a Job's
    // Failed condition).
    bool behind = false;
};

GateRunner::GateRunner(kube::KubeApi& api, KubeApiFactory watch_api, Clock& clock, JobLog& log)
    : m_api(api),
      m_watch_api(std::move(watch_api)),
      m_clock(clock),
      m_log(log),
      m_events(api, log) {}

namespace {

// Moves the pods the pod watch saw deleted into `deleted` (uids) and `departed`.
void absorb_deleted(ChangeWatch& watch, std::set<std::string>& deleted,
                    std::vector<json>& departed) {
    for (auto& gone : watch.take_deleted()) {
        if (const auto* meta = gone.contains("metadata") ? &gone["metadata"] : nullptr;
            meta != nullptr && meta->is_object()) {
            deleted.insert(meta->value("uid", ""));
        }
        departed.push_back(std::move(gone));
    }
}

// The pods as the pod watch holds them now, those that decode.
std::vector<gates::Pod> newest_pods(ChangeWatch& watch) {
    std::vector<gates::Pod> out;
    for (const json& item : watch.view(1).objects) {
        auto pod = gates::decode_pod_json(item, "pod");
        if (pod.is_ok()) {
            out.push_back(std::move(pod).value());
        }
    }
    return out;
}

// How long a retry's line waits, at most, for the kubelet to restart the container whose
// failed run it names while that run is still the container's current one.
constexpr Duration k_restart_bound = std::chrono::seconds(1);

// A verdict line names its failed run `kubectl logs pod/P -c C` without --previous while
// the run is its container's current, terminated one. For an OnFailure Job's retry the
// kubelet restarts that container next (the first time at once), after which that
// command shows the next run and `--previous` shows this one. So the line waits for the
// restart, at most k_restart_bound (real time, whatever the gate's clock), and names the
// run as the pod shows it then. True when it waited (a change it consumed is then the
// next pass's without a wait).
bool name_the_run_after_its_restart(ChangeWatch& watch, Clock& clock, gates::Verdict& v,
                                    const std::optional<gates::Job>& job,
                                    const std::function<int()>& pending_signal) {
    if (!job || job->restart_policy != "OnFailure" || v.state != gates::State::retrying ||
        !v.command || !v.last_failure || v.last_failure->kind != gates::FailureKind::restart ||
        v.command->find(" logs pod/") == std::string::npos || v.command->ends_with(" --previous")) {
        return false;
    }
    const auto real_until = std::chrono::steady_clock::now() + k_restart_bound;
    auto stop = [&] {
        return pending_signal() != 0 || std::chrono::steady_clock::now() >= real_until ? 1 : 0;
    };
    bool waited = false;
    while (stop() == 0) {
        std::vector<gates::Pod> pods = newest_pods(watch);
        std::vector<const gates::Pod*> listed;
        for (const auto& pod : pods) {
            listed.push_back(&pod);
        }
        auto now = gates::run_logs_command(v.memory.job_namespace, listed, *v.last_failure);
        if (!now || *now != *v.command) {
            std::vector<std::string*> texts{&v.progressing.message,
                                            v.event ? &v.event->message : nullptr};
            for (gates::SeenRun& run : v.runs) {
                if (run.command == v.command) {
                    texts.push_back(&run.message);
                    texts.push_back(run.event ? &run.event->message : nullptr);
                }
            }
            for (std::string* text : texts) {
                if (text != nullptr && now && text->ends_with(*v.command)) {
                    text->replace(text->size() - v.command->size(), v.command->size(), *now);
                }
            }
            for (gates::SeenRun& run : v.runs) {
                if (now && run.command == v.command) {
                    run.command = now;
                }
            }
            if (now) {
                v.command = std::move(now);
            }
            return waited;
        }
        waited = true;
        if (!watch.wait(clock.now() + k_restart_bound, stop)) {
            break;
        }
    }
    return waited;
}

}  // namespace

Result<GateRunner::Pass> GateRunner::observe(const GateRunSettings& settings, const JobIdentity& id,
                                             const json& selector, const gates::GateMemory& memory,
                                             ChangeWatch* watch,
                                             const std::optional<LastPass>& last,
                                             const std::vector<json>& departed,
                                             std::optional<TimePoint>& expect_until) {
    const std::string pods_of = label_selector(selector);
    if (watch == nullptr) {
        TRY_ASSIGN(JobSnapshot snap, read_job_snapshot(m_api, id, pods_of));
        return evaluate_snapshot(settings, id, std::move(snap), memory, departed);
    }
    // A pass from the caches stands when it changes nothing the gate keeps or acts on;
    // one that would act needs the Job and the pods as the store held them at one
    // revision: both caches taken back to each change in turn, up to the newest
    // revision both watches reached, if such a pair would act itself; else a read at
    // once (a GET beside the cached pods, a list beside the cached Job, else list and
    // GET), or, while the Job controller still owes the Job a write for a pod change
    // (job_write_expected), its event, which brings that pair.
    // So every count, event and memory write comes from a pair proved to be the API's
    // store at one revision.
    const CacheView jobs = watch->view(0);
    const CacheView pods = watch->view(1);
    if (jobs.usable && pods.usable) {
        const std::uint64_t newest = std::max(jobs.progress, pods.progress);
        TRY_ASSIGN(std::optional<Pass> next,
                   each_change(settings, id, memory, *watch, last, departed, newest));
        if (next) {
            return std::move(next).value();
        }
        TRY_ASSIGN(Pass cached,
                   evaluate_snapshot(settings, id, as_cached(id, jobs, pods), memory, departed));
        if (cached_pass_stands(cached.verdict, cached.job.has_value(), memory, last)) {
            cached.revision = last ? last->revision : 0;
            return cached;
        }
        // A pass that waits for a Job write, until expect_until (set by the first).
        auto wait_for_write = [&]() -> std::optional<Pass> {
            if (!expect_until) {
                expect_until = m_clock.now() + k_expected_write_bound;
            }
            if (m_clock.now() >= *expect_until) {
                return std::nullopt;
            }
            Pass waiting;
            waiting.consistent = false;
            waiting.wait_until = expect_until;
            return waiting;
        };
        // Not for a pod that failed on its own: its status is the evidence, read at once.
        if (cached.job && job_write_expected(*cached.job, pods.objects, jobs.progress) &&
            !pod_failed_after(pods.objects, jobs.progress)) {
            if (auto waiting = wait_for_write()) {
                return std::move(waiting).value();
            }
        }
        TRY_ASSIGN(JobSnapshot snap, read_job_beside_pods(m_api, id, pods_of, jobs, pods));
        // The Job read is the one cached, at the pods' revision: it held still from the
        // Job cache's progress up to there, so the pod changes in between are the Job
        // and its pods at their own revisions: each in turn, as above, rather than only
        // the newest (two restarts before the Job's next write are two retries).
        if (snap.consistent && snap.job && cached.job && snap.revision > jobs.progress) {
            if (watch->confirm(0, {*snap.job}, snap.revision)) {
                TRY_ASSIGN(next, each_change(settings, id, memory, *watch, last, departed, newest));
                if (next) {
                    return std::move(next).value();
                }
            } else if (auto written =
                           kube::resource_version_number(kube::resource_version_of(*snap.job));
                       written && *written > jobs.progress) {
                // The Job was written after its cache's progress (the controller's
                // tallies): its watch is about to deliver that write, after which the
                // pod changes since the last pass pair with it in turn. Wait for it, as
                // for a write the controller owes, rather than take only the newest.
                if (auto waiting = wait_for_write()) {
                    return std::move(waiting).value();
                }
            }
        }
        return evaluate_snapshot(settings, id, std::move(snap), memory, departed);
    }
    TRY_ASSIGN(JobSnapshot snap, read_job_snapshot(m_api, id, pods_of));
    return evaluate_snapshot(settings, id, std::move(snap), memory, departed);
}

Result<std::optional<GateRunner::Pass>> GateRunner::each_change(
    const GateRunSettings& settings, const JobIdentity& id, const gates::GateMemory& memory,
    ChangeWatch& watch, const std::optional<LastPass>& last, const std::vector<json>& departed,
    std::uint64_t newest) {
    // Each change in turn, up to the newest revision both watches reached: the first
    // pair that would act does; one that would not is passed over.
    for (std::uint64_t from = last ? last->revision : 0;;) {
        std::vector<CacheView> at = watch.views_at_next(from);
        if (at.size() != 2) {
            return std::optional<Pass>();
        }
        JobSnapshot pair = as_cached(id, at[0], at[1]);
        pair.revision = at[0].progress;
        TRY_ASSIGN(Pass joint, evaluate_snapshot(settings, id, std::move(pair), memory, departed));
        joint.behind = newest > joint.revision;
        // Not behind, it is the newest the caches hold too: no second evaluation.
        if (!joint.behind ||
            !cached_pass_stands(joint.verdict, joint.job.has_value(), memory, last)) {
            return std::optional<Pass>(std::move(joint));
        }
        if (joint.revision <= from) {
            return std::optional<Pass>();
        }
        from = joint.revision;
    }
}

Result<GateRunner::Pass> GateRunner::evaluate_snapshot(const GateRunSettings& settings,
                                                       const JobIdentity& id, JobSnapshot snap,
                                                       const gates::GateMemory& memory,
                                                       const std::vector<json>& departed) {
    Pass pass;
    pass.job = std::move(snap.job);
    pass.consistent = snap.consistent;
    pass.revision = snap.revision;
    if (!pass.consistent) {
        return pass;  // not evaluated: the Job changed during every pod list
    }
    std::vector<gates::Pod> pods;
    if (pass.job) {
        for (const auto& item : snap.pods) {
            TRY_ASSIGN(gates::Pod pod, gates::decode_pod_json(item, "pod"));
            pods.push_back(std::move(pod));
        }
        for (const auto& item : departed) {
            // Not beside a pair from before its deletion (the caches taken back): the pods
            // there show it as it was then, if it was there at all.
            auto deleted_at = kube::resource_version_number(kube::resource_version_of(item));
            if (snap.revision != 0 && deleted_at && *deleted_at > snap.revision) {
                continue;
            }
            auto pod = gates::decode_pod_json(item, "deleted pod");
            bool listed = pod.is_ok() && std::any_of(pods.begin(), pods.end(), [&](const auto& p) {
                              return p.uid == pod->uid;
                          });
            if (pod.is_ok() && !listed) {
                pods.push_back(std::move(pod).value());
            }
        }
    }
    for (const auto& pod : pods) {
        pass.pod_uids.insert(pod.uid);
    }
    std::optional<gates::Job> decoded;
    if (pass.job) {
        TRY_ASSIGN(decoded, gates::decode_job_json(*pass.job, "job " + id.name));
    }
    pass.verdict = gates::evaluate(settings.gate, decoded, pods, memory, m_clock.now());
    pass.pods = std::move(pods);
    pass.decoded = std::move(decoded);
    return pass;
}

Status GateRunner::remember(const GateRunSettings& settings, const JobIdentity& id, Pass& pass,
                            gates::GateMemory& memory, gates::GateMemory& saved, ChangeWatch* watch,
                            bool pods_gone) {
    const gates::Verdict& v = pass.verdict;
    // Events are recorded before the memory is saved: a crash in between records them
    // again under the same names, which the API refuses as AlreadyExists.
    // One event per counted run, named by the run: whoever records it again is refused.
    for (const gates::SeenRun& run : v.runs) {
        if (run.event) {
            m_events.record(id, *run.event, run.key, settings.instance, m_clock.now());
        }
    }
    if (v.event) {
        m_events.record(id, *v.event, "failed", settings.instance, m_clock.now());
    }
    // Not while the Job controller has still to record that the restart limit was
    // reached (gates/restarts.h): the pass that sees its condition saves the memory.
    // Nor while the pods still show all of it (gate_pass.h, memory_kept_by_pods).
    const bool news =
        pass.job && !only_what_the_job_shows(v.memory, saved) && v.memory != fresh_memory(v.memory);
    bool hold = pass.decoded && (gates::restart_limit_unrecorded(*pass.decoded, pass.pods) ||
                                 (!pods_gone && memory_kept_by_pods(*pass.decoded, v.state)));
    if (news && !hold && pass.decoded && watch != nullptr) {
        // The pods may have reached the limit since the pair this pass evaluated (one
        // taken back to an earlier change, or a change delivered meanwhile): the newest
        // the pod watch holds decides too.
        hold = gates::restart_limit_unrecorded(*pass.decoded, newest_pods(*watch));
    }
    if (news && !hold) {
        json annotations = json::object();
        for (const auto& [k, value] : gates::memory_annotations(v.memory)) {
            annotations[k] = value;
        }
        auto patched = m_api.patch(kube::jobs(id.namespace_, id.name),
                                   {{"metadata", {{"annotations", annotations}}}});
        if (!patched.is_ok() && patched.status().code() != Code::not_found) {
            return patched.status();
        }
        if (patched.is_ok() && watch != nullptr) {
            // The watch will deliver this write too: it changes nothing a pass reads.
            watch->ignore_version((*patched)["metadata"].value("resourceVersion", ""));
        }
        saved = v.memory;
    }
    memory = v.memory;
    return Status::ok();
}

void GateRunner::report_runs(const GateRunSettings& settings, const JobIdentity& id,
                             const std::vector<gates::Pod>& pods, const gates::Verdict& v,
                             StepReport& step) {
    const gates::GateNames& names = gates::names(settings.gate);
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
            step.history.push_back({m_clock.now(), gates::state_name(gates::State::retrying),
                                    names.retry_reason, run.message, run.command,
                                    run.counts.attempt, run.counts.limit});
        } else {
            m_log.line(Tone::plain, fmt::format("{}: not counted: {}", names.name, words));
        }
        if (run.command) {
            m_log.command(*run.command);
        }
        keep_run(m_api, m_log, id, pods, run, step);
    }
}

void GateRunner::report_change(const GateRunSettings& settings, const gates::Verdict& v,
                               const std::optional<gates::Job>& job, StepReport& step) {
    const gates::GateNames& names = gates::names(settings.gate);
    VerdictChange change{
        m_clock.now(), gates::state_name(v.state), v.progressing.reason, v.progressing.message,
        v.command,     v.counts.attempt,           v.counts.limit};
    if (v.state == gates::State::suspended) {
        // A suspension is said once, when the Job controller has acted on it (its
        // Suspended condition: the pods stopped), not by every pass that sees it
        // (spec.suspend before the condition, then the condition, then how long).
        const bool said = !step.history.empty() && step.history.back().state == change.state;
        const bool before_controller = job && !gates::managed_elsewhere(*job) &&
                                       gates::true_condition(*job, "Suspended") == nullptr;
        if (said || before_controller) {
            return;
        }
    }
    if (!step.history.empty()) {
        // A retry is said once, by its run's line: a later pass of the same retry (the
        // pod now gone, its container waiting) adds no line.
        const bool same_retry = v.state == gates::State::retrying && v.runs.empty() &&
                                step.history.back().state == change.state;
        if (same_retry || says_the_same(step.history.back(), change)) {
            return;
        }
    }
    m_log.line(tone_for_state(change.state), verdict_line(names, v));
    // Each line's command names its own run (its pod, --previous or not): printed with
    // every line, as it works at that moment.
    if (command_on_own_line(v)) {
        m_log.command(*v.command);
    }
    step.history.push_back(std::move(change));
}

GateResult GateRunner::finish(const GateRunSettings& settings, const JobIdentity& id,
                              StepReport step, int exit_code) {
    step.finished = m_clock.now();
    step.exit_code = exit_code;  // the gate's own, as a step's process has one
    std::string outcome;
    if (exit_code >= 128 && settings.on_cancel == OnCancel::remove && !id.name.empty()) {
        Status removed =
            m_api.remove(kube::jobs(id.namespace_, id.name), kube::Propagation::background);
        outcome = removed.is_ok() ? "The Job was deleted (--on-cancel=delete)."
                                  : "Deleting the Job failed: " + removed.message();
    } else if (exit_code >= 128) {
        outcome = "The Job was left running (pass --on-cancel=delete to delete it).";
    }
    if (!outcome.empty()) {
        step.message += " " + outcome;
        m_log.line(Tone::failing, outcome);  // the log says it too, not only the reports
    }
    return {exit_code, std::move(step), !id.name.empty()};
}

GateResult GateRunner::run(const GateRunSettings& settings, const RenderedJob& rendered) {
    const gates::GateNames& names = gates::names(settings.gate);
    StepReport step;
    step.name = names.name;
    step.kind = "gate";
    step.state = StepState::running;
    step.started = m_clock.now();
    step.job_name = rendered.name;
    // Ends the gate with `state`; `said` when the verdict line already told the log.
    auto fail = [&](StepState state, std::string reason, std::string message, int code,
                    bool said = false) {
        step.state = state;
        step.reason = std::move(reason);
        step.message = std::move(message);
        if (step.reason == "KubernetesApiError" && !settings.cluster.empty()) {
            step.message += " (" + settings.cluster + ")";
        }
        if (!said) {
            m_log.line(state == StepState::cancelled ? Tone::failing : Tone::failed,
                       fmt::format("{}: {}: {}", names.name, step.reason, step.message));
        }
        return code;
    };

    auto launched = launch(rendered);
    if (!launched) {
        Code c = launched.status().code();
        // A Job the API refuses as invalid (422) is a bad manifest, as `run`'s preflight
        // says: exit 2, like every other configuration error (the table's gate column).
        int code = exit_for(c, Stage::gate);
        return finish(
            settings, {}, step,
            fail(StepState::failed, c == Code::conflict ? "JobConflict" : "KubernetesApiError",
                 launched.status().message(), code));
    }
    const json& job = launched->job;
    JobIdentity id = identity_of(job);
    json selector = job["spec"]["selector"].value("matchLabels", json::object());
    auto stored = gates::memory_from_annotations(
        job["metadata"].value("annotations", std::map<std::string, std::string>{}));
    gates::GateMemory memory = stored.is_ok() ? *stored : gates::GateMemory{};
    gates::GateMemory saved = memory;  // what the Job's annotations hold

    TimePoint deadline = m_clock.now() + settings.timeout;
    kube::ReflectorOptions options;
    options.poll_interval = settings.poll_interval;
    ChangeWatch watch(m_watch_api, m_clock, options);
    // A Job this run created is, as of its creation's resourceVersion, the one object its
    // name selects, and no pod can carry its uid's label yet: both watches start there,
    // without a list.
    std::optional<kube::ObjectList> job_known;
    std::optional<kube::ObjectList> pods_known;
    if (const std::string created_at = kube::resource_version_of(job);
        launched->created && selects_by_uid(selector, id.uid) && !created_at.empty()) {
        job_known = kube::ObjectList{{job}, created_at};
        pods_known = kube::ObjectList{{}, created_at};
    }
    Status started =
        watch.start(kube::jobs(id.namespace_), {"", "metadata.name=" + id.name}, deadline,
                    ChangeWatch::KeepDeleted::no, counts_alike, std::move(job_known));
    if (started.is_ok()) {
        started = watch.start(kube::pods(id.namespace_), {label_selector(selector), ""}, deadline,
                              ChangeWatch::KeepDeleted::yes, nullptr, std::move(pods_known));
    }
    if (!started.is_ok()) {
        m_log.line(Tone::plain, "watching is not possible (" + started.message() +
                                    "); polling every " + format_duration(settings.poll_interval));
    }
    Duration resync = started.is_ok() ? settings.resync : settings.poll_interval;
    ChangeWatch* cache = started.is_ok() ? &watch : nullptr;
    if (cache != nullptr) {
        // The first pass evaluates from both caches rather than reading everything.
        watch.wait_listed(m_clock.now() + std::chrono::seconds(10), settings.pending_signal);
    }
    std::optional<LastPass> last_pass;  // what the last completed pass concluded
    // Until when a failed verdict waits for the pod watch to deliver a deletion that may
    // be in flight (set by the first such pass); each delivered change ends one wait.
    std::optional<TimePoint> settle_until;
    ProgressReporter progress(m_log, settings.progress_every, m_clock.now(), deadline);
    bool remembered_kept = false;     // the runs the memory holds are in the report
    std::set<std::string> seen_pods;  // the pods of the last completed pass
    std::set<std::string> deleted;    // every pod whose deletion the watch delivered
    std::vector<json> departed;       // deleted pods not yet seen by a completed pass
    // Until when a pass waits for a Job write the Job controller owes (observe()).
    std::optional<TimePoint> expect_until;
    bool skip_wait = false;  // a wait of this pass's took a change the next pass needs
    // Ends the gate when a signal is pending or its timeout passed: the exit code.
    auto interrupted = [&]() -> std::optional<int> {
        if (int sig = settings.pending_signal(); sig != 0) {
            return fail(StepState::cancelled, "Cancelled",
                        fmt::format("cancelled by signal {} while the gate waited on Job {}/{}.",
                                    sig, id.namespace_, id.name),
                        exit_for_signal(sig));
        }
        if (m_clock.now() >= deadline) {
            // The Job is not stopped: its pods go on (and retry) on their own. The step's
            // command stays the last verdict's (what to look at first); the message says
            // how to stop the Job.
            return fail(StepState::failed, "GateTimeout",
                        fmt::format("the gate's timeout of {} passed; last verdict: {}. The "
                                    "Job {}/{} was left as it is: its migration still runs "
                                    "(and retries). To stop it: kubectl -n {} delete job/{}",
                                    format_duration(settings.timeout),
                                    step.history.empty() ? std::string("none yet")
                                                         : step.history.back().message,
                                    id.namespace_, id.name, gates::shell_quote(id.namespace_),
                                    gates::shell_quote(id.name)),
                        k_exit_failed);
        }
        return std::nullopt;
    };
    while (true) {
        absorb_deleted(watch, deleted, departed);
        auto pass =
            observe(settings, id, selector, memory, cache, last_pass, departed, expect_until);
        if (pass && !pass->consistent) {
            // The Job kept changing during every pod list, or a write to it is on the way:
            // nothing is evaluated; the next change (or resync) tries again, signals and
            // the timeout still apply.
            if (auto code = interrupted()) {
                return finish(settings, id, step, *code);
            }
            watch.wait(std::min({deadline, m_clock.now() + resync,
                                 pass->wait_until.value_or(TimePoint::max())}),
                       settings.pending_signal);
            continue;
        }
        expect_until.reset();
        const bool ends =
            pass && (pass->verdict.state == gates::State::failed ||
                     (pass->verdict.state == gates::State::failing && !pass->verdict.last_failure));
        if (ends && deletion_may_be_in_flight(seen_pods, pass->pod_uids, deleted, !departed.empty(),
                                              pass->job ? accounted_pods(*pass->job) : 0)) {
            // Let the pod watch catch up (a wait ends when it delivers anything, a Job
            // change too), so the failure names that pod; bounded by k_settle_bound. A
            // failing verdict that names no failure waits too: the pod that failed the
            // Job may be gone already, its deletion still on the way.
            if (!settle_until) {
                settle_until = m_clock.now() + k_settle_bound;
            }
            if (m_clock.now() < *settle_until && settings.pending_signal() == 0) {
                watch.wait(*settle_until, settings.pending_signal);
                continue;
            }
        }
        if (!pass) {
            return finish(settings, id, step,
                          fail(StepState::failed, "KubernetesApiError", pass.status().message(),
                               k_exit_infra));
        }
        // A pod the last pass counted is gone (or its deletion came with this pass).
        const bool pods_gone =
            !departed.empty() ||
            std::any_of(seen_pods.begin(), seen_pods.end(),
                        [&](const auto& uid) { return pass->pod_uids.count(uid) == 0; });
        departed.clear();
        seen_pods = pass->pod_uids;
        if (cache != nullptr &&
            name_the_run_after_its_restart(*cache, m_clock, pass->verdict, pass->decoded,
                                           settings.pending_signal)) {
            skip_wait = true;
        }
        std::size_t said = step.history.size();
        last_pass = LastPass{pass->verdict.counts, pass->verdict.state,
                             std::max(pass->revision, last_pass ? last_pass->revision : 0)};
        if (!remembered_kept && pass->decoded) {
            // A rerun lists first the failed runs an earlier run of the gate counted on
            // this Job (its memory), then those it sees itself (kept_logs.h).
            remembered_kept = true;
            auto remembered = remembered_runs(*pass->decoded, pass->pods, memory);
            if (!remembered.empty()) {
                m_log.line(Tone::plain,
                           fmt::format("{}: {} failed run(s) an earlier run of the gate counted "
                                       "on this Job:",
                                       names.name, remembered.size()));
            }
            for (const gates::SeenRun& run : remembered) {
                keep_run(m_api, m_log, id, pass->pods, run, step);
            }
        }
        report_runs(settings, id, pass->pods, pass->verdict, step);
        report_change(settings, pass->verdict, pass->decoded, step);
        if (const auto& runs = pass->verdict.runs; !runs.empty()) {
            keep_run(m_api, m_log, id, pass->pods, runs.back(),
                     step);  // kept already, or the ending's
        }
        refresh_log_commands(id, pass->pods, step);
        Status kept = remember(settings, id, *pass, memory, saved, cache, pods_gone);
        if (!kept.is_ok()) {
            return finish(
                settings, id, step,
                fail(StepState::failed, "KubernetesApiError", kept.message(), k_exit_infra));
        }
        const gates::Verdict& v = pass->verdict;
        step.attempts = v.memory.attempts;
        step.command = v.command;
        if (v.state == gates::State::succeeded) {
            step.state = StepState::passed;
            step.message = v.progressing.message;
            return finish(settings, id, step, k_exit_success);
        }
        if (v.state == gates::State::failed) {
            return finish(settings, id, step,
                          fail(StepState::failed, v.progressing.reason, v.progressing.message,
                               k_exit_failed, true));
        }
        progress.after_pass(m_clock.now(), step.history.size() != said, names.name, pass->decoded,
                            pass->pods);
        if (auto code = interrupted()) {
            return finish(settings, id, step, *code);
        }
        if (!pass->behind && !std::exchange(skip_wait, false)) {
            watch.wait(std::min({deadline, m_clock.now() + resync, progress.next()}),
                       settings.pending_signal);
        }
    }
}

}  // namespace envgate
