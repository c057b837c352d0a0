// The gate loop's one writer (GateRunner::run decides, this acts): every line of the
// job log, every Event, the memory patch on the Job's annotations, the gate's step of
// the run report, and the Job's deletion on cancel. It decides nothing the planner
// (gate_plan.h) decides; it only puts the decided into words and requests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/gating/gate_events.h"
#include "runner/gating/gate_plan.h"
#include "runner/gating/gate_settings.h"
#include "runner/gating/kept_logs.h"
#include "runner/gating/progress.h"
#include "runner/kube/kube_api.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"

namespace envgate {

class GateActor {
  public:
    // Starts the gate's step (running, now) for the Job named `job_name`.
    GateActor(kube::KubeApi& api, Clock& clock, JobLog& log, const GateRunSettings& settings,
              const std::string& job_name);

    // The gate's Job is `id` (launched or re-attached to).
    void attach(const JobIdentity& id) { m_id = id; }
    // The heartbeat counts from now; the gate times out at `deadline` (it says so).
    void start_heartbeat(TimePoint deadline);

    // A plain line about how the gate watches (`text` as is).
    void note(const std::string& text);

    // A pass's lines: each failed run it saw first (a line, its command, its kept log
    // tail), then its verdict's line when that says something new, the ending's run
    // kept, and every kept run's command brought up to date with `pods`.
    // `job`: the Job the verdict was evaluated from.
    void report_pass(const std::optional<gates::Job>& job, const std::vector<gates::Pod>& pods,
                     const gates::Verdict& v);

    // Once per gate, before the first pass's lines: the failed runs an earlier run of the
    // gate counted on this Job (`memory`, as its annotations hold it) that `pods` still
    // show, kept in the report first, so that a rerun's reports list every failed run.
    void report_remembered(const gates::Job& job, const std::vector<gates::Pod>& pods,
                           const gates::GateMemory& memory);

    // Reads at once the log of each failed container run `pods` (the pod watch's newest)
    // show ended that no earlier call read: the tail its run keeps when a pass counts it
    // (kept_logs.h, read_ended_runs). For an OnFailure Job only: a Never Job's pod is its
    // run, and outlives its failure.
    void read_ended_runs(const std::vector<gates::Pod>& pods);

    // Notes on `memory`'s records of `runs` (the pass's, kept by report_pass) that this
    // CI job's reports keep them, and whether with their log tails: what a later run of
    // the gate says of them once their pods are gone.
    void note_kept(gates::GateMemory& memory, const std::vector<gates::SeenRun>& runs) const;

    // The pass's Events: one per counted run, named by the run, then the verdict's own.
    // Recorded before the memory is saved: a crash in between records them again under
    // the same names, which the API refuses as AlreadyExists.
    void record_events(const gates::Verdict& v);

    // Writes `memory` to the Job's annotations: the resourceVersion of the write (nullopt
    // when the Job is gone), or the API's error.
    Result<std::optional<std::string>> save_memory(const gates::GateMemory& memory);

    // After a pass was acted on: the attempts and the command the step reports.
    void take_counts(const gates::Verdict& v);

    // After a pass that did not end the gate: the heartbeat line when it is due.
    void heartbeat(bool spoke, const std::optional<gates::Job>& job,
                   const std::vector<gates::Pod>& pods);
    TimePoint heartbeat_due() const { return m_progress->next(); }

    // How many lines the step's history holds (a pass that adds one spoke).
    std::size_t said() const { return m_step.history.size(); }

    // Ends the gate for `why` (Next::finish): its words, its exit code, the Job deleted
    // on cancel when asked. `detail`: the API's error for Why::api_error, the pending
    // signal for Why::cancelled; `v`: the ending verdict for Why::succeeded/failed.
    GateResult finish(Why why, const std::string& detail = {}, int signal = 0,
                      const gates::Verdict* v = nullptr);
    // The launch failed with `status` (no Job to name).
    GateResult launch_failed(const Status& status);

  private:
    void report_runs(const std::vector<gates::Pod>& pods, const gates::Verdict& v);
    void report_change(const gates::Verdict& v, const std::optional<gates::Job>& job);
    // Ends the step with `state`; `said` when the verdict line already told the log.
    int fail(StepState state, std::string reason, std::string message, int code, bool said = false);
    // Ends the step at the gate's timeout: its words, and the command that stops the Job.
    int timed_out();
    GateResult close(int exit_code);

    kube::KubeApi& m_api;
    Clock& m_clock;
    JobLog& m_log;
    const GateRunSettings& m_settings;
    GateEventRecorder m_events;
    JobIdentity m_id;
    StepReport m_step;
    EarlyReads m_early;                          // read_ended_runs()
    bool m_remembered_kept = false;              // report_remembered() has run
    std::optional<ProgressReporter> m_progress;  // from start_heartbeat()
};

}  // namespace envgate
