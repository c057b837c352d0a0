// `envgate gate`'s engine: launch a gate's Job (or re-attach to it), then block on
// it — watch the Job and its pods, evaluate the verdict on every change, print each
// change of verdict, keep the gate's memory on the Job's annotations and record its
// events exactly once — until it succeeds, fails, times out or is cancelled.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gates/gate.h"
#include "runner/gating/change_watch.h"
#include "runner/gating/gate_events.h"
#include "runner/gating/gate_pass.h"
#include "runner/gating/job_snapshot.h"
#include "runner/gating/manifest.h"
#include "runner/kube/kube_api.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"

namespace envgate {

enum class OnCancel { leave, remove };

struct GateRunSettings {
    gates::Gate gate = gates::Gate::pre_migrations;
    Duration timeout = std::chrono::hours(1);
    Duration poll_interval = std::chrono::seconds(5);    // watch fallback
    Duration resync = std::chrono::seconds(30);          // re-read even without events
    Duration progress_every = std::chrono::seconds(30);  // heartbeat line when quiet
    OnCancel on_cancel = OnCancel::leave;
    std::string instance = "envgate";  // reportingInstance of events
    std::string cluster;               // "kubeconfig context C, server S": named by API errors
    std::function<int()> pending_signal = [] { return 0; };
};

struct GateResult {
    int exit_code = 0;        // runner/exit_status.h
    StepReport step;          // for the reports
    bool job_exists = false;  // the gate's Job was created (or re-attached to)
};

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
    Result<Launched> launch(const RenderedJob& job);
    // `departed`: pods deleted since the last pass, as last seen (they join this pass
    // when its pods no longer have them and it shows the store as of their deletion or
    // later).
    // From the watch caches (`watch`, nullptr when not watching) while they answer, with
    // reads where they cannot (job_snapshot.h); `last`: what the last pass concluded.
    // `departed`: pods deleted since the last pass, as last seen. `expect_until`: set
    // when a pass first waits for a Job write the controller owes; read after it.
    Result<Pass> observe(const GateRunSettings& settings, const JobIdentity& id,
                         const nlohmann::json& selector, const gates::GateMemory& memory,
                         ChangeWatch* watch, const std::optional<LastPass>& last,
                         const std::vector<nlohmann::json>& departed,
                         std::optional<TimePoint>& expect_until);
    // The pair the caches show as of each change after the last pass's revision, in
    // turn (ChangeWatch::views_at_next): the first that would act, or the newest when it
    // is that (`newest`: the caches' newest progress); nullopt when every one stands.
    Result<std::optional<Pass>> each_change(const GateRunSettings& settings, const JobIdentity& id,
                                            const gates::GateMemory& memory, ChangeWatch& watch,
                                            const std::optional<LastPass>& last,
                                            const std::vector<nlohmann::json>& departed,
                                            std::uint64_t newest);
    Result<Pass> evaluate_snapshot(const GateRunSettings& settings, const JobIdentity& id,
                                   JobSnapshot snap, const gates::GateMemory& memory,
                                   const std::vector<nlohmann::json>& departed);
    // `memory`: what the gate knows; `saved`: what the Job's annotations hold of it;
    // `pods_gone`: a pod the last pass counted is no longer there.
    Status remember(const GateRunSettings& settings, const JobIdentity& id, Pass& pass,
                    gates::GateMemory& memory, gates::GateMemory& saved, ChangeWatch* watch,
                    bool pods_gone);
    // The line of each failed run the pass saw first (but the one an ending verdict
    // names itself), its command, and its kept log tail.
    void report_runs(const GateRunSettings& settings, const JobIdentity& id,
                     const std::vector<gates::Pod>& pods, const gates::Verdict& verdict,
                     StepReport& step);
    // The line of a change of verdict (`job`: the Job it was evaluated from).
    void report_change(const GateRunSettings& settings, const gates::Verdict& verdict,
                       const std::optional<gates::Job>& job, StepReport& step);
    GateResult finish(const GateRunSettings& settings, const JobIdentity& id, StepReport step,
                      int exit_code);

    kube::KubeApi& m_api;
    KubeApiFactory m_watch_api;
    Clock& m_clock;
    JobLog& m_log;
    GateEventRecorder m_events;
};

}  // namespace envgate
