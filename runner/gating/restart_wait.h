// Rule 12 of the gate loop (gates/README.md): a retry's line waits, briefly, for the
// kubelet to restart the container whose failed run it names, so that its `kubectl logs`
// command names that run as the pod shows it then. And the pods the pod watch holds now.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"
#include "runner/gating/change_watch.h"

namespace envgate {

// How long a retry's line waits, at most, for the kubelet to restart the container whose
// failed run it names while that run is still the container's current one.
inline constexpr Duration k_restart_bound = std::chrono::seconds(1);

// The pods as the pod watch (collection 1 of `watch`) holds them now, those that decode.
std::vector<gates::Pod> newest_pods(ChangeWatch& watch);

// A verdict line names its failed run `kubectl logs pod/P -c C` without --previous while
// the run is its container's current, terminated one. For an OnFailure Job's retry the
// kubelet restarts that container next (the first time at once), after which that
// command shows the next run and `--previous` shows this one. So the line waits for the
// restart, at most k_restart_bound (real time, whatever the gate's clock), and names the
// run as the pod shows it then. True when it waited (a change it consumed is then the
// next pass's without a wait).
bool name_the_run_after_its_restart(ChangeWatch& watch, Clock& clock, gates::Verdict& v,
                                    const std::optional<gates::Job>& job,
                                    const std::function<int()>& pending_signal);

}  // namespace envgate
