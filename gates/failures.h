// Finding and describing failed runs in a snapshot: the newest failure (a container run
// that failed in place, or a pod that failed as a whole), its text for people, the
// kubectl command that shows more, and why pods that fail nothing are still waiting.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// `text` as one shell word: unchanged when it holds only [a-z0-9.-], else single-quoted.
std::string shell_quote(std::string_view text);

// Which run of a container `kubectl logs` shows: the current container (without
// --previous: a run that failed and was not restarted yet, whose pod has no previous
// container) or the one before it (--previous: the kubelet's lastState).
enum class Run { current, previous };

std::string logs_command(const std::string& ns, const std::string& job,
                         const std::string& container, Run run = Run::previous);

// The same for one pod: `logs job/...` reads whichever pod kubectl picks, not
// necessarily the one of a given failed run when the Job has several (restartPolicy
// Never: a pod per run).
std::string pod_logs_command(const std::string& ns, const std::string& pod,
                             const std::string& container, Run run = Run::previous);

// Where `kubectl logs` finds the failed run `failure` in `pods` now: current when it is
// its container's state (terminated, not restarted yet), else previous (also when the
// pod is gone).
Run run_of(const std::vector<const Pod*>& pods, const Failure& failure);
std::string describe_command(const std::string& ns, const std::string& job);

// Which `kubectl logs` of container `c` shows its run number `run` (1 for its first)
// now, or nullopt when none does: --previous shows the kubelet's lastState (the run
// before the current one, or in back-off the failed run itself); without it, the
// current run (terminated, or in back-off the lastState, as the kubelet serves it).
// In back-off both show the failed run; --previous keeps showing it while the next
// run runs, so it is preferred.
std::optional<Run> shows_run(const ContainerStatus& c, int run);

// The command that shows the failed run `failure` now, naming its pod: `kubectl -n NS
// logs pod/P -c C`, with --previous when the run is the container's lastState, without
// for a run not restarted yet or a pod that failed as a whole (its container's one
// run). nullopt when no such command shows that run: its pod is not in `pods` or is
// being deleted, a later run of the container replaced it, or the container was
// killed (its exit code is not the migration's: no log of the failure).
std::optional<std::string> run_logs_command(const std::string& ns,
                                            const std::vector<const Pod*>& pods,
                                            const Failure& failure);

// The pod named `name` in `pods` when it is there and not being deleted, else nullptr.
const Pod* live_pod(const std::vector<const Pod*>& pods, const std::string& name);

// A pod's status and events: where a waiting cause (a missing Secret, an image pull, the
// scheduler's reason) is told; `describe job` shows neither.
std::string describe_pod_command(const std::string& ns, const std::string& pod);

// The events of the object `name` (a Job: the Job controller's and envgate's; a pod: the
// kubelet's and the scheduler's): they outlive it (the API server keeps events an hour by
// default), so this still answers once it was deleted.
std::string events_command(const std::string& ns, const std::string& name);

// The key under which GateMemory::failures_seen remembers a failure.
std::string failure_key(const Failure& failure);

// The newest failure visible in `pods` (already selected for `job`). Failures without a
// timestamp count as seen at `now`. Pods the controller deletes because the Job is
// failing are not failures of their own. API timestamps have whole seconds: of several
// failures in the newest second, the last listed whose key is not in `seen` wins (no
// pass saw it yet, so it came later), else the last listed; the keys of those not yet in
// `seen` are appended to `tied` (when given and they are several), to be remembered as
// seen. `seen` is sorted (GateMemory::failures_seen). More than 8 failures in that
// second (a node drain): the last listed wins and nothing is appended.
std::optional<Failure> newest_failure(const Job& job, const std::vector<const Pod*>& pods,
                                      TimePoint now, const std::vector<std::string>& seen = {},
                                      std::vector<std::string>* tied = nullptr);

// A container's failed run as a snapshot shows it: its newest terminated, non-zero run
// (not one its pod's deletion stopped), else its lastState's, with the run's number
// (1 for the container's first run: restartCount + 1 for the current or backed-off run,
// restartCount for the one before a running or stopped container); nullopt when none.
struct ShownRun {
    Failure failure;
    int number = 0;
};
std::optional<ShownRun> shown_failed_run(const Pod& pod, const ContainerStatus& c);

// Whether the failed runs of a pod's containers are part of its failure as a whole
// (restartPolicy Never: the pod is the run) or runs of their own (OnFailure: each is
// counted; only a run that ended with the pod, killed or in a Failed pod, is part of it).
enum class ContainerRuns { in_pod, own };
ContainerRuns container_runs(const Job& job);

// The failure of `pod` as a whole (evicted, preempted, deleted, failed under Never), its
// time as the Job controller takes it (disruption, container, not Ready, deletion). With
// ContainerRuns::own a pod deleted after its container failed on its own is told as the
// deletion, not as that container's failure (a run of its own, told before).
Failure pod_failure_of(const Pod& pod, ContainerRuns runs = ContainerRuns::in_pod);

// Whether the failed `pod` (is_pod_failed) failed on its own: disrupted, Failed with
// nobody deleting it, or deleted while the Job was not ending (by hand, a drain). A pod
// deleted while the Job is failing is the Job controller stopping it: not a failure.
bool failed_on_its_own(const Pod& pod, bool job_ending);

// "container migrations exited 1 (Error): PG::..." or "pod P was preempted (...): ...".
std::string describe_failure(const Failure& failure);

}  // namespace envgate::gates
