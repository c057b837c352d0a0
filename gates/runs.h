// The failed runs of a Job, each identified by (pod UID, container, run number), or by
// its pod's UID for a pod that failed as a whole: which ones a pass sees for the first
// time, what each was, and the counts with it counted. A line, an event and a report
// entry are each derived from exactly one of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gates/counting.h"
#include "gates/failures.h"
#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// What a pass knew before it looked: the containers whose failed runs rose, with the
// count before (Attempts::rose), and the pods whose failure was reported (sorted).
struct RunsBefore {
    const std::vector<std::pair<std::string, int>>& rose;
    const std::vector<std::string>& pods_failed;
    int failed_pods = 0;  // GateMemory::failed_pods
};

// Run `n` of container `c` (its runs keyed `key`): as `shown` shows it when that is run
// `n`, else one a later run replaced before any pass saw it end (seen_end false; only
// its pod and container known). The caller adds what it knows of such a run.
SeenRun container_run_n(const Pod& pod, const ContainerStatus& c, const std::string& key, int n,
                        const std::optional<ShownRun>& shown);

// True for the run of a failed pod the Job counts that no pass listed ("status.failed/N").
// Its pod's run, when a later pass lists the pod, is this one (`new_runs`).
bool unlisted(const SeenRun& run);

// The failed runs `pods` show (with `after`, the container runs counted now, and
// `failed_pods`, the failed pods counted now) that `before` does not hold, oldest first:
// container runs numbered from the first unseen one (a run a later one replaced before
// any pass saw it end is still one run: seen_end false), pods that failed on their own
// (ignored by a podFailurePolicy rule: counted false), and failed pods the Job counts
// that no pass listed. `ending`: the Job is failing or failed (a pod deleted then is the
// controller stopping it). Counts and words are left to the caller. Adds the pods to
// `pods_failed` (kept sorted), and each failed pod no pass listed under its key. A pod
// listed after the Job counted it as such (its count did not rise for it) is that run,
// not a new one: its uid takes the key's place.
std::vector<SeenRun> new_runs(const Job& job, const std::vector<const Pod*>& pods,
                              const RunsBefore& before, const RunCounts& after, int failed_pods,
                              bool ending, TimePoint now, std::vector<std::string>& pods_failed);

}  // namespace envgate::gates
