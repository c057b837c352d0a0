// What one `envgate run` (or gate/lock command) did, as plain data: the single
// model every report renderer reads and run.json stores. Built by the runner as
// it goes; renderers never see Kubernetes or lock objects directly.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "locks/lock_record.h"
#include "runner/base/vocab/time.h"

namespace envgate {

enum class StepState { passed, failed, skipped, cancelled, running };
enum class RunResult { success, failed, cancelled };
// The lock's states are the lock model's (locks/lock_record.h): one vocabulary.
using LockState = locks::LockState;

const char* step_state_name(StepState s);  // "passed", "failed", ...
const char* run_result_name(RunResult r);  // "success", "failed", "cancelled"
// The inverses of the two above: nullopt for a word that names no value.
std::optional<StepState> parse_step_state(std::string_view name);
std::optional<RunResult> parse_run_result(std::string_view name);
const char* lock_state_name(LockState s);  // "free", "held", "failed"

// One change of a gate's verdict, as the job log printed it.
struct VerdictChange {
    TimePoint at;
    std::string state;  // running, retrying, failing, failed, succeeded
    std::string reason;
    std::string message;
    std::optional<std::string> command;
    int attempt = 0;
    int limit = 0;
};

// One failed run of a gate's Job, kept as the gate saw it: what failed, and the tail
// of that run's log, fetched at once (before the controller deletes the pod), masked.
struct FailedRun {
    int run = 0;      // 1 for the gate's first failed run, 2 for the next, ...
    int attempt = 0;  // the failed attempt number, as "attempt N of M failed" counts it
    int limit = 0;
    std::optional<TimePoint> at;
    std::string pod;
    std::string container;  // empty when the pod failed as a whole without one
    // Which failed run of its container it was (1 for the first; 0: the pod failed as a
    // whole), -1 when the pod was not listed any more.
    int container_run = -1;
    std::string reason;  // Error, Evicted, OOMKilled, ...
    std::optional<int> exit_code;
    std::string description;  // "container migrations exited 1 (Error): PG::..."
    std::string log_command;  // how to read the log while it lasts
    std::string log_tail;     // the last lines of its log; empty when none was read
    std::string log_note;     // where the tail comes from, or why there is none
    // What identifies the run: "POD-UID/container/N", "POD-UID" (the pod failed as a
    // whole) or "status.failed/N" (a failed pod no pass of the gate listed).
    std::string key;
    bool counted = true;      // false: a podFailurePolicy rule Ignores it (ignored_why)
    std::string ignored_why;  // "podFailurePolicy rule 0 (Ignore) matches ..."
    // Listed from the gate's memory (an earlier run of the gate saw it; no pod shows it
    // now): `seen_by` is the CI job whose reports keep its log tail, when known.
    bool remembered = false;
    std::string seen_by;

    // The same failed run (seen again when the Job also counts its pod as failed): same
    // pod, container and container_run.
    bool same_run(const FailedRun& other) const;
};

struct StepReport {
    std::string name;  // lock, diff, pre-migrations, deploy, post-migrations, ..., qa
    std::string kind;  // "lock", "gate" or "step"
    StepState state = StepState::skipped;
    std::string file;  // Job manifest or config path (JUnit `file`)
    std::optional<TimePoint> started;
    std::optional<TimePoint> finished;
    // Failed runs counted against the step's limit (docs/attempts.md): a gate's "attempt
    // N of M" count; 1 for a step whose one run failed.
    int attempts = 0;
    std::optional<std::string> job_name;  // the Kubernetes Job of a gate
    std::string reason;                   // failure reason (JUnit failure type)
    std::string message;                  // the whole message
    std::optional<std::string> command;   // what to run next
    std::optional<int> exit_code;         // of a step's process
    std::string skipped_why;
    std::vector<VerdictChange> history;
    std::vector<FailedRun> failed_runs;  // gates: every failed run seen, oldest first
    // Gates: failed runs before those listed that the gate's memory no longer holds (it
    // keeps the newest ones only).
    int failed_runs_forgotten = 0;

    bool retried() const;
    double seconds() const;             // 0 when not both started and finished
    std::string duration_text() const;  // "4m30s", or "-" for a step that did not run
};

struct LockReport {
    std::string name;  // the lock (environment name, or "qa")
    LockState state = LockState::free;
    std::string holder;
    std::optional<std::string> holder_pipeline_url;
    std::optional<std::string> holder_job_url;
    std::optional<std::string> unlock_command;  // set when held after a failure
    // Set when the run's last write to the lock (release, or the failure policy) did not
    // happen: the lock is not in the state the run meant to leave it in.
    std::optional<std::string> update_error;
};

struct RunReport {
    std::string environment;
    std::string namespace_;
    RunResult result = RunResult::success;
    TimePoint started;
    TimePoint finished;
    std::vector<StepReport> steps;
    LockReport lock;
    std::optional<std::string> pipeline_url;      // this pipeline
    std::optional<std::string> job_url;           // this job
    std::optional<std::string> environments_url;  // the project's Environments page

    // The first failed (or cancelled) step, if any.
    const StepReport* failed_step() const;
};

// A copy of `report` with `mask` applied to every text a person or a process wrote
// (messages, commands, history, holder, URLs): how secrets stay out of the reports.
// A step that failed while the job was being cancelled (an API call or a plugin was
// stopped by the signal) is reported as cancelled by `signal_number`.
void mark_cancelled(StepReport& step, int signal_number);

RunReport masked(const RunReport& report, const std::function<std::string(std::string)>& mask);

struct Link {
    std::string label;  // pipeline, job, environments
    std::string url;
};

// The run's pipeline, job and environments pages, as far as the CI variables tell.
std::vector<Link> run_links(const RunReport& report);

// The Environments page of the project at `project_url` (CI_PROJECT_URL), if known.
std::optional<std::string> environments_page(const std::optional<std::string>& project_url);

// Where the unlock hint sends a person first: the manual unlock job of the pipeline
// (the unlock component), then the CLI command that follows it.
std::string unlock_hint(const RunReport& report);

}  // namespace envgate
