// What a gate decides from one snapshot (Verdict), and what it must remember between
// passes and processes so each failure is counted and announced exactly once
// (GateMemory). Plain values: gates/verdict_json.h and gates/memory_json.h encode them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runner/base/vocab/time.h"

namespace envgate::gates {

enum class FailureKind { restart, pod };

// Failed runs seen per "pod-uid/container" (hashed: it is looked up once per container
// on every pass).
using RunCounts = std::unordered_map<std::string, int>;

// One failed run: a container run that failed in place (restart), or a pod that
// failed as a whole (evicted, preempted, deleted, or its container failed under Never).
struct Failure {
    std::string pod;
    std::optional<std::string> container;
    FailureKind kind = FailureKind::restart;
    std::string reason;
    std::optional<int> exit_code;
    // False for exit codes of evicted or killed containers (137 ContainerStatusUnknown,
    // 143): they come from the kill, not from the migration.
    bool exit_code_trusted = true;
    std::string message;
    std::optional<TimePoint> at;

    bool operator==(const Failure&) const = default;
};

// The condition that ended a Job (Failed, or FailureTarget before it), kept so that a
// Job deleted afterwards still reports why it failed.
struct EndedBy {
    std::string type;  // Failed, FailureTarget
    std::string reason;
    std::string message;

    bool operator==(const EndedBy&) const = default;
};

// A failed run a pass listed, kept so that a later run of the gate (envgate killed and
// run again, a new CI job) lists it once its pod is gone: who it was, its one-line text,
// when it failed, and whose report keeps its log tail.
struct RememberedRun {
    std::string key;  // SeenRun::key: "UID/container/N", "UID" or "status.failed/N"
    std::string pod;  // empty for a failed pod no pass listed
    std::optional<std::string> container;
    int number = 0;            // the container's run number; 0: the pod failed as a whole
    std::optional<int> index;  // its pod's completion index (Indexed Jobs)
    bool counted = true;       // false: a podFailurePolicy rule Ignores it
    int attempt = 0;           // its line's "attempt N of M" (Counts::attempt, limit)
    int limit = 0;
    std::string text;  // "container migrations exited 3 (Error): ...", cut
    std::optional<TimePoint> at;
    // The CI job (CI_JOB_URL) whose reports keep the run's log tail; empty: not known.
    std::string seen_by;
    bool tail_kept = false;  // that job read and kept its log tail

    bool operator==(const RememberedRun&) const = default;
};

// The memory keeps the newest runs only: annotations hold 256 KiB in all, and a crash
// loop may fail thousands of times. A run's text is cut to k_remembered_text_bytes.
inline constexpr int k_remembered_runs = 50;
inline constexpr std::size_t k_remembered_text_bytes = 400;

// The remembered runs of a memory, shared by its copies until one changes them: the
// gate copies its memory with every pass, and 50 records copied are some 200
// allocations (gates_bench). Compared by value.
class RememberedRuns {
  public:
    RememberedRuns() = default;
    RememberedRuns(std::vector<RememberedRun> runs)  // implicit: runs are assigned as a list
        : m_runs(std::make_shared<std::vector<RememberedRun>>(std::move(runs))) {}

    const std::vector<RememberedRun>& list() const;
    // The runs to change, no longer shared with any copy.
    std::vector<RememberedRun>& edit();

    std::size_t size() const { return list().size(); }
    bool empty() const { return list().empty(); }
    const RememberedRun& operator[](std::size_t i) const { return list()[i]; }
    const RememberedRun& front() const { return list().front(); }
    const RememberedRun& back() const { return list().back(); }
    auto begin() const { return list().begin(); }
    auto end() const { return list().end(); }

    bool operator==(const RememberedRuns& other) const {
        return m_runs == other.m_runs || list() == other.list();
    }

  private:
    std::shared_ptr<std::vector<RememberedRun>> m_runs;
};

// Survives between passes (process memory) and processes (Job annotations).
struct GateMemory {
    std::string job_uid;  // the Job this memory belongs to; another Job starts afresh
    std::string job_namespace;
    std::string job_name;
    int observed_failures = 0;  // highest count of failed runs + failed pods seen
    int restarts = 0;           // highest restart count seen
    int failed_pods = 0;        // highest failed-pod count seen
    // The highest count of failed runs counted against the Job's limit (Counts::attempt)
    // seen: what every report calls `attempts` (docs/attempts.md).
    int attempts = 0;
    // Failed runs seen per "pod-uid/container" (exactly-once across snapshots).
    RunCounts failed_runs;
    // Failures already seen ("pod/container/reason"): a failure seen for the first
    // time is newer than the last one even when their timestamps tie (seconds).
    std::vector<std::string> failures_seen;
    // The pods (uids, sorted) whose failure as a whole a pass reported, counted or
    // ignored: each such run is reported once (its container runs are in failed_runs);
    // "status.failed/N" for a failed pod the Job counted that no pass listed, until a
    // pass lists it (its uid then takes the key's place).
    std::vector<std::string> pods_failed;
    // Every failed run a pass listed, in the order the passes listed them (oldest
    // first), the newest k_remembered_runs of them; `runs_forgotten` older ones dropped.
    RememberedRuns runs;
    int runs_forgotten = 0;
    bool failure_recorded = false;  // the *Failed event was recorded
    bool completed = false;         // the Job was seen Complete / SuccessCriteriaMet
    std::optional<EndedBy> ended;   // the Job was seen failing or failed
    std::optional<Failure> last_failure;

    bool operator==(const GateMemory&) const = default;
};

enum class Phase { upgrading, failed, succeeded };
enum class State { running, suspended, retrying, failing, failed, succeeded };

const char* phase_name(Phase phase);  // "Upgrading", "Failed", "Succeeded"
const char* state_name(State state);  // "running", ...

struct Progressing {
    bool status = true;
    std::string reason;
    std::string message;

    bool operator==(const Progressing&) const = default;
};

struct Counts {
    int restarts = 0;
    int restart_limit = 0;
    int failed_pods = 0;
    int failed_pod_limit = 0;
    // The count nearer its limit: failed attempt number, its limit, attempts left.
    int attempt = 0;
    int limit = 0;
    int left = 0;
    FailureKind nearer = FailureKind::restart;  // which count attempt/limit/left describe
    // Indexed Jobs with backoffLimitPerIndex: the index whose count attempt/limit/left
    // describe (the one nearest its per-index limit).
    std::optional<int> index;

    bool operator==(const Counts&) const = default;
};

struct Event {
    std::string type = "Warning";
    std::string reason;
    std::string message;

    bool operator==(const Event&) const = default;
};

// One failed run a pass saw for the first time, identified by (pod UID, container, run
// number) or (pod UID) for a pod that failed as a whole: its line, its event and its
// report entry are derived from it alone.
struct SeenRun {
    // "UID/container/N" (container run N, 1 for the first), "UID" (the pod as a whole),
    // or "status.failed/N" (a failed pod the Job counts that no pass listed).
    std::string key;
    Failure failure;
    int number = 0;        // the container's run number; 0 for a pod failure
    bool counted = true;   // false: a podFailurePolicy rule Ignores it (ignored_why)
    bool seen_end = true;  // false: a later run replaced it before a pass saw it end
    std::string ignored_why;
    // A pod that failed as a whole under OnFailure: the restarts of its containers, which
    // no longer count against backoffLimit (the controller counts Pending/Running pods').
    int restarts_dropped = 0;
    Counts counts;  // the counts with this run (and those before it) counted
    std::string message;
    std::optional<std::string> command;
    std::optional<Event> event;  // a counted run's one Retrying event

    bool operator==(const SeenRun&) const = default;
};

struct Verdict {
    Phase phase = Phase::upgrading;
    State state = State::running;
    Progressing progressing;
    Counts counts;
    std::optional<Failure> last_failure;
    std::optional<std::string> command;
    std::optional<Event> event;  // at most one event to record on the Job
    // The failed runs first seen by this pass, oldest first. Each but the one an ending
    // verdict names itself is a line of its own (and, counted, a Retrying event).
    std::vector<SeenRun> runs;
    GateMemory memory;  // the memory to keep for the next pass

    bool operator==(const Verdict&) const = default;
};

}  // namespace envgate::gates
