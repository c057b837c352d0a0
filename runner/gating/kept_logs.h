// The tail of a failed run's log, kept with the gate's report: read the moment the gate
// sees the failure (the Job controller deletes a failed pod, and its log with it), cut
// to the last k_kept_lines lines and k_kept_bytes bytes, masked (runner/secrets.h).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/gating/gate_events.h"
#include "runner/kube/kube_api.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"

namespace envgate {

inline constexpr int k_kept_lines = 50;
inline constexpr std::size_t k_kept_bytes = 8 * 1024;

// The last `max_lines` lines of `text` within its last `max_bytes` bytes, cut at a line
// start (a single longer line: at a UTF-8 boundary), without the final newline.
std::string log_tail(std::string_view text, int max_lines = k_kept_lines,
                     std::size_t max_bytes = k_kept_bytes);

// `failure` (a failed run of Job `job`) with the tail of its log: the container's
// previous run when it was restarted in place, else its current (terminated) one, as
// `pods` show it. A log that cannot be read is noted in log_note, never an error.
FailedRun keep_failed_run(kube::KubeApi& api, const JobIdentity& job,
                          const std::vector<gates::Pod>& pods, const gates::Failure& failure,
                          const gates::Counts& counts);

// A failed container run's log as read the moment the gate first saw the run end: its
// tail (masked) and note, and the command that replaces the one the pass names when the
// read found the log gone or replaced (nullopt: none replaces it).
struct EarlyRead {
    std::string tail;
    std::string note;
    std::optional<std::string> command;
};
// By run key (gates::SeenRun::key of a container run: pod uid/container/run number).
using EarlyReads = std::map<std::string, EarlyRead>;

// Reads at once the log of each failed container run that `pods` (the newest the pod
// watch holds) show ended and `reads` does not hold yet: an OnFailure Job's container
// restarts, and the Job controller deletes its pod at the restart limit, within a
// second; the pass that counts the run may come after either (it waits for the Job's
// write that pairs with it), and its read would then find a later run's log or none.
// A run its container has not restarted after yet, in a pod that goes on, is read once
// the pod shows the restart (with --previous): a read while the restart is under way
// could return the next run's log.
void read_ended_runs(kube::KubeApi& api, const JobIdentity& job,
                     const std::vector<gates::Pod>& pods, EarlyReads& reads);

// Keeps `run` in `step` unless a run of its key is kept already, numbered after those,
// and prints it to `log`: a line, or its log tail in a collapsed section.
void keep_listed(JobLog& log, FailedRun run, StepReport& step);

// Keeps `run` (a failed run a pass saw first) in `step`, numbered, with the tail of its
// log, and prints it to `log`: a line, then its log tail in a collapsed section. The
// tail is the one `early` holds for it when it was read as the run ended, else read now.
void keep_run(kube::KubeApi& api, JobLog& log, const JobIdentity& job,
              const std::vector<gates::Pod>& pods, const gates::SeenRun& run, StepReport& step,
              const EarlyReads* early = nullptr);

// Keeps each failed run's log_command in `step` true to `pods` (a pass's): the form that
// shows that run now (`--previous` once its container restarted), or none once no
// `kubectl logs` shows it (its pod is gone or being deleted, later runs replaced it),
// which its log_note then says. So the reports written at the end name only commands
// that work then.
void refresh_log_commands(const JobIdentity& job, const std::vector<gates::Pod>& pods,
                          StepReport& step);

}  // namespace envgate
