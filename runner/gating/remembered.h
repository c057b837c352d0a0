// What a later run of a gate (envgate killed and run again, a new CI job) lists first:
// the failed runs an earlier run counted on the same Job (its memory, read from the
// Job's annotations), as the pods still show them, or, once a pod is gone or no longer
// shows a run, as the memory remembers it; in the order the earlier run listed them,
// each once.
#pragma once

#include <optional>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"

namespace envgate {

// The failed runs the memory counts that `pods` still show, oldest first: each container
// run the memory counts ("uid/container" up to its count: the one the container shows
// described from it, the others known only to have failed) and each failed pod it
// reported.
std::vector<gates::SeenRun> remembered_runs(const gates::Job& job,
                                            const std::vector<gates::Pod>& pods,
                                            const gates::GateMemory& memory);

// One failed run a later run lists first.
struct RememberedListing {
    // As the pods show it (its counts: the attempt its first line told, when known).
    gates::SeenRun run;
    // The memory's record of it; none in memory written before runs were remembered, or
    // for a run older than those it keeps.
    std::optional<gates::RememberedRun> record;
    // False: no pod shows how it ended any more (its pod is gone, or its container ran
    // again): listed from `record` alone, its log tail in the reports of whoever saw it.
    bool shown = true;
    bool pod_listed = true;  // false: its pod is gone
};

// The failed runs an earlier run of the gate counted on this Job (`memory`), each once:
// those `pods` still show (remembered_runs) and those only the memory's records hold.
// Ordered as the runs that listed them did: first the ones without a record (the
// oldest, in remembered_runs' order), then by record.
std::vector<RememberedListing> remembered_listing(const gates::Job& job,
                                                  const std::vector<gates::Pod>& pods,
                                                  const gates::GateMemory& memory);

// Keeps `listing` (shown false) in `step` from its record and prints it to `log`: its
// pod gone (or no longer showing it), where its log tail is kept.
void keep_remembered_run(JobLog& log, const RememberedListing& listing, StepReport& step);

}  // namespace envgate
