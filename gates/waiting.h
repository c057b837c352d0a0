#pragma once
// Why a Job's pods do not run yet (an image pull, a missing Secret, the scheduler's
// reason), as the kubelet and the scheduler write it in the pods' status: named in the
// gate's running lines, with the pod to describe.
#include <string>
#include <vector>

#include "gates/snapshot.h"

namespace envgate::gates {

// Why nothing runs: "pod P: container C waiting: ImagePullBackOff: ...", unschedulable
// pods. Crash loops are not listed: they are counted as failures.
std::vector<std::string> waiting_reasons(const std::vector<const Pod*>& pods);

// The first of `pods` that waiting_reasons names, if any.
const Pod* first_waiting_pod(const std::vector<const Pod*>& pods);

}  // namespace envgate::gates
