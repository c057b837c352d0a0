// What a pod's restart counts say, beside the one counting rule (counting.h): the
// restarts a pod shows, whether an OnFailure Job has reached its restart limit before
// the Job controller recorded it, and which run of its container a failed run is.
#pragma once

#include <vector>

#include "gates/failures.h"
#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// The restarts of `pod`'s containers, init containers included, as their restartCount
// fields say (what `kubectl get pods` shows in RESTARTS).
long long pod_restarts(const Pod& pod);

// Whether an OnFailure Job's restarts have reached its backoffLimit while the Job
// controller has not yet recorded the failure (no FailureTarget, Failed or Complete
// condition): counted as the controller counts them (pastBackoffLimitOnFailure, the
// restarts of running and pending pods). In that state the controller deletes the pod
// and then writes FailureTarget; a write of the gate's to the Job in between makes
// that status write conflict, and on its next sync the stopped pod's restarts no
// longer count (Kubernetes v1.37), so it starts a replacement pod and the migration
// runs again past its limit. The gate saves its memory on a later pass instead.
bool restart_limit_unrecorded(const Job& job, const std::vector<Pod>& pods);

// Which run of its container `failure` is (1 for the first), from the container's
// restartCount (the restarts so far: the current run is run restartCount + 1): the run
// kubectl logs --previous shows is the one before the current, except in back-off
// (waiting), when no run is current yet. 0 for a pod that failed as a whole (one run per
// pod), -1 when the pod or container is not listed.
int container_run(const std::vector<Pod>& pods, const Failure& failure, Run which);

}  // namespace envgate::gates
