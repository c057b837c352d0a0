// `envgate gate`'s engine: launch a gate's Job (or re-attach to it), then block on
// it — watch the Job and its pods, evaluate the verdict on every change, print each
// change of verdict, keep the gate's memory on the Job's annotations and record its
// events exactly once — until it succeeds, fails, times out or is cancelled. The loop
// observes (a pass: the Job and its pods as of one revision, evaluated), asks the pure
// planner what to do next (gate_plan.h, over the LoopState it carries) and has one
// actor write (gate_actor.h). Its rules are numbered in gates/README.md "The gate loop".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gates/gate.h"
#include "runner/gating/change_watch.h"
#include "runner/gating/gate_pass.h"
#include "runner/gating/gate_settings.h"
#include "runner/gating/job_snapshot.h"
#include "runner/gating/manifest.h"
#include "runner/kube/kube_api.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"

namespace envgate {

class GateActor;
struct LoopClock;
struct LoopState;
struct PassFacts;

// Threads: run() is called on one thread (the command's), which evaluates, decides and
// writes; a GateRunner runs one gate at a time. Its ChangeWatch runs one thread per
// watched collection (change_watch.h), which only fill the watch's caches and wake
// run()'s waits; nothing of the GateRunner's own is shared with them, so it holds no
// mutex. `api` and `log` are used on run()'s thread only; each watch thread has its own
// KubeApi from `watch_api` (called on run()'s thread). `settings.pending_signal` is
// called on run()'s thread only (also from inside ChangeWatch::wait and wait_listed,
// which run there). The Clock is read on run()'s thread and read and slept on by the
// watch threads (the Reflectors' deadlines, backoff and polls): it must be thread-safe.
class GateRunner {
  public:
    GateRunner(kube::KubeApi& api, KubeApiFactory watch_api, Clock& clock, JobLog& log);

    // REQUIRES: `job` came from render_job_manifest.
    GateResult run(const GateRunSettings& settings, const RenderedJob& job);

  private:
    struct Pass;
    struct Launched {
        nlohmann::json job;    // as the API returned it
        bool created = false;  // by this run (else re-attached to an earlier run's)
    };
    // What every pass of one gate reads: its settings and bounds, its Job, and the watch
    // (`cache` is it while it watches, nullptr when the gate polls instead).
    struct Watched {
        const GateRunSettings& settings;
        JobIdentity id;
        std::string pods_of;  // the label selector of the Job's pods
        ChangeWatch& watch;
        ChangeWatch* cache;
        TimePoint deadline;              // the gate's timeout
        Duration resync;                 // look again after this even without a change
        bool restarts_in_place = false;  // restartPolicy OnFailure: a container run fails in place
    };
    Result<Launched> launch(const RenderedJob& job);
    // Starts the Job's watch, then its pods' (`selector`: their matchLabels).
    Status start_watching(ChangeWatch& watch, const Launched& launched, const JobIdentity& id,
                          const nlohmann::json& selector, TimePoint deadline);
    // Now, the gate's bounds and the pending signal, for the planner.
    LoopClock clock_at(const Watched& gate);
    // The loop: observe, plan, act, until the planner ends the gate.
    GateResult loop(const Watched& gate, LoopState& state, GateActor& actor);
    // One pass: from the watch caches (`gate.cache`) while they answer, with reads where
    // they cannot (job_snapshot.h), else a read. May set state.expect_until (rule 3).
    Result<Pass> observe(const Watched& gate, LoopState& state);
    // A pass that would act on what the caches hold, which they cannot prove a pair: a
    // read beside them, or a wait for the Job write the controller owes (rules 1, 3).
    // `cached_job`: the Job cache holds the Job.
    Result<Pass> read_beside(const Watched& gate, LoopState& state, const CacheView& jobs,
                             const CacheView& pods, std::uint64_t newest, bool cached_job);
    // Rule 3: a pass that waits for the Job write the controller owes, until
    // state.expect_until (set by the first); nullopt once that passed (read instead).
    static std::optional<Pass> wait_for_owed_write(LoopState& state, TimePoint now);
    // What the planner needs of a pass.
    static PassFacts facts_of(const Result<Pass>& pass);
    // The pair the caches show as of each change after the last pass's revision, in
    // turn (ChangeWatch::views_at_next): the first that would act, or the newest when it
    // is that (`newest`: the caches' newest progress); nullopt when every one stands.
    Result<std::optional<Pass>> each_change(const Watched& gate, const LoopState& state,
                                            std::uint64_t newest);
    // `snap` evaluated with the gate's memory; the pods deleted since the last pass
    // (state.departed) join it as last seen when it is as of their deletion or later.
    Result<Pass> evaluate_snapshot(const Watched& gate, JobSnapshot snap, const LoopState& state);
    // Rules 7, 8: a pass's lines, events and memory (through `actor`), and what the state
    // keeps of it. True when it printed a verdict line; the API's error when the memory
    // could not be saved.
    Result<bool> act(const Watched& gate, Pass& pass, LoopState& state, GateActor& actor);

    kube::KubeApi& m_api;
    KubeApiFactory m_watch_api;
    Clock& m_clock;
    JobLog& m_log;
};

}  // namespace envgate
