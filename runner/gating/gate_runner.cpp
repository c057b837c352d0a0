#include "runner/gating/gate_runner.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <set>
#include <utility>

#include "gates/decode_json.h"
#include "gates/evaluate.h"
#include "gates/failures.h"
#include "gates/memory_json.h"
#include "gates/restarts.h"
#include "gates/runs.h"
#include "runner/gating/gate_actor.h"
#include "runner/gating/gate_pass.h"
#include "runner/gating/gate_plan.h"
#include "runner/gating/job_snapshot.h"
#include "runner/gating/restart_wait.h"

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

std::string restart_policy_of(const json& job) {
    const json::json_pointer at("/spec/template/spec/restartPolicy");
    return job.contains(at) && job[at].is_string() ? job[at].get<std::string>() : std::string();
}

JobIdentity identity_of(const json& job) {
    const json& m = job.at("metadata");
    return {m.value("name", ""), m.value("namespace", ""), m.value("uid", "")};
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
    : m_api(api), m_watch_api(std::move(watch_api)), m_clock(clock), m_log(log) {}

namespace {

// Moves the pods the pod watch saw deleted into state.deleted (uids) and state.departed.
void absorb_deleted(ChangeWatch& watch, LoopState& state) {
    for (auto& gone : watch.take_deleted()) {
        if (const auto* meta = gone.contains("metadata") ? &gone["metadata"] : nullptr;
            meta != nullptr && meta->is_object()) {
            state.deleted.insert(meta->value("uid", ""));
        }
        state.departed.push_back(std::move(gone));
    }
}

}  // namespace

GateResult GateRunner::run(const GateRunSettings& settings, const RenderedJob& rendered) {
    GateActor actor(m_api, m_clock, m_log, settings, rendered.name);
    auto launched = launch(rendered);
    if (!launched) {
        return actor.launch_failed(launched.status());
    }
    const json& job = launched->job;
    const JobIdentity id = identity_of(job);
    actor.attach(id);
    const json selector = job["spec"]["selector"].value("matchLabels", json::object());
    LoopState state;
    auto stored = gates::memory_from_annotations(
        job["metadata"].value("annotations", std::map<std::string, std::string>{}));
    state.memory = stored.is_ok() ? *stored : gates::GateMemory{};
    state.saved = state.memory;  // what the Job's annotations hold

    const TimePoint deadline = m_clock.now() + settings.timeout;
    kube::ReflectorOptions options;
    options.poll_interval = settings.poll_interval;
    ChangeWatch watch(m_watch_api, m_clock, options);
    const Status started = start_watching(watch, *launched, id, selector, deadline);
    if (!started.is_ok()) {
        actor.note("watching is not possible (" + started.message() + "); polling every " +
                   format_duration(settings.poll_interval));
    }
    ChangeWatch* cache = started.is_ok() ? &watch : nullptr;
    if (cache != nullptr) {
        // The first pass evaluates from both caches rather than reading everything.
        watch.wait_listed(m_clock.now() + std::chrono::seconds(10), settings.pending_signal);
    }
    actor.start_heartbeat(deadline);
    const Watched gate{settings,
                       id,
                       label_selector(selector),
                       watch,
                       cache,
                       deadline,
                       started.is_ok() ? settings.resync : settings.poll_interval,
                       restart_policy_of(job) == "OnFailure"};
    return loop(gate, state, actor);
}

Status GateRunner::start_watching(ChangeWatch& watch, const Launched& launched,
                                  const JobIdentity& id, const json& selector, TimePoint deadline) {
    // A Job this run created is, as of its creation's resourceVersion, the one object its
    // name selects, and no pod can carry its uid's label yet: both watches start there,
    // without a list.
    std::optional<kube::ObjectList> job_known;
    std::optional<kube::ObjectList> pods_known;
    if (const std::string created_at = kube::resource_version_of(launched.job);
        launched.created && selects_by_uid(selector, id.uid) && !created_at.empty()) {
        job_known = kube::ObjectList{{launched.job}, created_at};
        pods_known = kube::ObjectList{{}, created_at};
    }
    TRY(watch.start(kube::jobs(id.namespace_), {"", "metadata.name=" + id.name}, deadline,
                    ChangeWatch::KeepDeleted::no, counts_alike, std::move(job_known)));
    return watch.start(kube::pods(id.namespace_), {label_selector(selector), ""}, deadline,
                       ChangeWatch::KeepDeleted::yes, nullptr, std::move(pods_known));
}

LoopClock GateRunner::clock_at(const Watched& gate) {
    return LoopClock{m_clock.now(), gate.deadline, gate.resync, gate.settings.pending_signal()};
}

GateResult GateRunner::loop(const Watched& gate, LoopState& state, GateActor& actor) {
    while (true) {
        absorb_deleted(gate.watch, state);
        if (gate.cache != nullptr && gate.restarts_in_place) {
            // A failed run's log, read as soon as the gate sees it end: the pass that
            // counts it may wait for the Job's write (rule 3) and its restart (rule 12),
            // while the kubelet runs the container again and, at the restart limit, the
            // Job controller deletes the pod.
            actor.read_ended_runs(newest_pods(*gate.cache));
        }
        auto pass = observe(gate, state);
        LoopClock now = clock_at(gate);
        Step step = plan_pass(state, facts_of(pass), now);
        keep_step(step, state);
        if (step.next == Next::wait) {
            gate.watch.wait(step.until, gate.settings.pending_signal);
            continue;
        }
        if (step.next == Next::finish) {
            return actor.finish(step.why, pass ? std::string() : pass.status().message(),
                                now.signal);
        }
        auto spoke = act(gate, *pass, state, actor);
        if (!spoke) {
            return actor.finish(Why::api_error, spoke.status().message());
        }
        if (auto end = plan_end(pass->verdict.state)) {
            return actor.finish(end->why, {}, 0, &pass->verdict);
        }
        actor.heartbeat(*spoke, pass->decoded, pass->pods);
        now = clock_at(gate);
        step = plan_wait(state, pass->behind, now, actor.heartbeat_due());
        keep_step(step, state);
        if (step.next == Next::finish) {
            return actor.finish(step.why, {}, now.signal);
        }
        if (step.next == Next::wait) {
            gate.watch.wait(step.until, gate.settings.pending_signal);
        }
    }
}

Result<bool> GateRunner::act(const Watched& gate, Pass& pass, LoopState& state, GateActor& actor) {
    const bool pods_gone = took_pass(state, pass.pod_uids);
    if (gate.cache != nullptr &&
        name_the_run_after_its_restart(*gate.cache, m_clock, pass.verdict, pass.decoded,
                                       gate.settings.pending_signal)) {
        state.skip_wait = true;
    }
    if (gate.cache != nullptr && gate.restarts_in_place) {
        // The restart that wait saw shows the failed run's log as --previous: read now.
        actor.read_ended_runs(newest_pods(*gate.cache));
    }
    const gates::Verdict& v = pass.verdict;
    state.last =
        LastPass{v.counts, v.state, std::max(pass.revision, state.last ? state.last->revision : 0)};
    const std::size_t said = actor.said();
    if (pass.decoded) {
        actor.report_remembered(*pass.decoded, pass.pods, state.memory);
    }
    actor.report_pass(pass.decoded, pass.pods, v);
    actor.note_kept(pass.verdict.memory, v.runs);
    actor.record_events(v);
    bool save = pass.job && memory_to_save(state.saved, v, pass.decoded, pass.pods, pods_gone);
    if (save && pass.decoded && gate.cache != nullptr) {
        // The pods may have reached the limit since the pair this pass evaluated (one
        // taken back to an earlier change, or a change delivered meanwhile): the newest
        // the pod watch holds decides too.
        save = !gates::restart_limit_unrecorded(*pass.decoded, newest_pods(*gate.cache));
    }
    if (save) {
        TRY_ASSIGN(std::optional<std::string> written, actor.save_memory(v.memory));
        if (written && gate.cache != nullptr) {
            // The watch will deliver this write too: it changes nothing a pass reads.
            gate.cache->ignore_version(*written);
        }
        state.saved = v.memory;
    }
    state.memory = v.memory;
    actor.take_counts(v);
    return actor.said() != said;
}

Result<GateRunner::Pass> GateRunner::observe(const Watched& gate, LoopState& state) {
    if (gate.cache == nullptr) {
        TRY_ASSIGN(JobSnapshot snap, read_job_snapshot(m_api, gate.id, gate.pods_of));
        return evaluate_snapshot(gate, std::move(snap), state);
    }
    // Rules 1-3: a pass from the caches stands when it changes nothing the gate keeps or
    // acts on; one that would act needs the Job and the pods as the store held them at
    // one revision: both caches taken back to each change in turn, up to the newest
    // revision both watches reached, if such a pair would act itself; else a read (or,
    // while the Job controller owes the Job a write, its event, which brings that pair).
    const CacheView jobs = gate.cache->view(0);
    const CacheView pods = gate.cache->view(1);
    if (!jobs.usable || !pods.usable) {
        TRY_ASSIGN(JobSnapshot snap, read_job_snapshot(m_api, gate.id, gate.pods_of));
        return evaluate_snapshot(gate, std::move(snap), state);
    }
    const std::uint64_t newest = std::max(jobs.progress, pods.progress);
    TRY_ASSIGN(std::optional<Pass> next, each_change(gate, state, newest));
    if (next) {
        return std::move(next).value();
    }
    TRY_ASSIGN(Pass cached, evaluate_snapshot(gate, as_cached(gate.id, jobs, pods), state));
    if (cached_pass_stands(cached.verdict, cached.job.has_value(), state.memory, state.last)) {
        cached.revision = state.last ? state.last->revision : 0;
        return cached;
    }
    if (state.job_written_at > jobs.progress) {
        // A read showed the Job written since (read_beside): its watch is about to deliver
        // it, which brings the pair; another read now would show the same.
        if (auto waiting = wait_for_owed_write(state, m_clock.now())) {
            return std::move(waiting).value();
        }
    }
    state.job_written_at = 0;
    // Not for a pod that failed on its own: its status is the evidence, read at once.
    if (cached.job && job_write_expected(*cached.job, pods.objects, jobs.progress) &&
        !pod_failed_after(pods.objects, jobs.progress)) {
        if (auto waiting = wait_for_owed_write(state, m_clock.now())) {
            return std::move(waiting).value();
        }
    }
    return read_beside(gate, state, jobs, pods, newest, cached.job.has_value());
}

Result<GateRunner::Pass> GateRunner::read_beside(const Watched& gate, LoopState& state,
                                                 const CacheView& jobs, const CacheView& pods,
                                                 std::uint64_t newest, bool cached_job) {
    TRY_ASSIGN(JobSnapshot snap, read_job_beside_pods(m_api, gate.id, gate.pods_of, jobs, pods));
    // The Job read is the one cached, at the pods' revision: it held still from the Job
    // cache's progress up to there, so the pod changes in between are the Job and its
    // pods at their own revisions: each in turn, as above, rather than only the newest
    // (two restarts before the Job's next write are two retries).
    if (snap.consistent && snap.job && cached_job && snap.revision > jobs.progress) {
        if (gate.cache->confirm(0, {*snap.job}, snap.revision)) {
            TRY_ASSIGN(std::optional<Pass> next, each_change(gate, state, newest));
            if (next) {
                return std::move(next).value();
            }
        } else if (auto written =
                       kube::resource_version_number(kube::resource_version_of(*snap.job));
                   written && *written > jobs.progress) {
            // The Job was written after its cache's progress (the controller's tallies):
            // its watch is about to deliver that write, after which the pod changes since
            // the last pass pair with it in turn. Wait for it, as for a write the
            // controller owes, rather than take only the newest.
            if (auto waiting = wait_for_owed_write(state, m_clock.now())) {
                state.job_written_at = *written;
                return std::move(waiting).value();
            }
        }
    }
    return evaluate_snapshot(gate, std::move(snap), state);
}

Result<std::optional<GateRunner::Pass>> GateRunner::each_change(const Watched& gate,
                                                                const LoopState& state,
                                                                std::uint64_t newest) {
    // Each change in turn, up to the newest revision both watches reached: the first
    // pair that would act does; one that would not is passed over.
    for (std::uint64_t from = state.last ? state.last->revision : 0;;) {
        std::vector<CacheView> at = gate.cache->views_at_next(from);
        if (at.size() != 2) {
            return std::optional<Pass>();
        }
        JobSnapshot pair = as_cached(gate.id, at[0], at[1]);
        pair.revision = at[0].progress;
        TRY_ASSIGN(Pass joint, evaluate_snapshot(gate, std::move(pair), state));
        joint.behind = newest > joint.revision;
        // Not behind, it is the newest the caches hold too: no second evaluation.
        if (!joint.behind ||
            !cached_pass_stands(joint.verdict, joint.job.has_value(), state.memory, state.last)) {
            return std::optional<Pass>(std::move(joint));
        }
        if (joint.revision <= from) {
            return std::optional<Pass>();
        }
        from = joint.revision;
    }
}

Result<GateRunner::Pass> GateRunner::evaluate_snapshot(const Watched& gate, JobSnapshot snap,
                                                       const LoopState& state) {
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
        for (const auto& item : state.departed) {
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
        TRY_ASSIGN(decoded, gates::decode_job_json(*pass.job, "job " + gate.id.name));
    }
    pass.verdict = gates::evaluate(gate.settings.gate, decoded, pods, state.memory, m_clock.now());
    pass.pods = std::move(pods);
    pass.decoded = std::move(decoded);
    return pass;
}

PassFacts GateRunner::facts_of(const Result<Pass>& pass) {
    PassFacts facts;
    if (!pass) {
        facts.error = true;
        return facts;
    }
    facts.evaluated = pass->consistent;
    facts.owed_write_until = pass->wait_until;
    facts.state = pass->verdict.state;
    facts.names_failure = pass->verdict.last_failure.has_value();
    facts.pod_uids = pass->pod_uids;
    facts.accounted = pass->job ? accounted_pods(*pass->job) : 0;
    facts.behind = pass->behind;
    facts.unlisted_run =
        std::any_of(pass->verdict.runs.begin(), pass->verdict.runs.end(),
                    [](const gates::SeenRun& run) { return gates::unlisted(run); });
    return facts;
}

std::optional<GateRunner::Pass> GateRunner::wait_for_owed_write(LoopState& state, TimePoint now) {
    const OwedWrite owed = plan_owed_write(state.expect_until, now);
    state.expect_until = owed.expect_until;
    if (!owed.wait) {
        return std::nullopt;
    }
    Pass waiting;
    waiting.consistent = false;
    waiting.wait_until = owed.expect_until;
    return waiting;
}

}  // namespace envgate
