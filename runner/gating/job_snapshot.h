// Reading a Job and its pods as one consistent snapshot. The Job controller moves a
// failed pod's UID into status.uncountedTerminatedPods, then removes the pod's tracking
// finalizer, then folds the UID into status.failed: a Job read before its pods can miss
// a pod that is, by the time the pods are listed, counted in neither place.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/gating/change_watch.h"
#include "runner/gating/gate_events.h"
#include "runner/kube/kube_api.h"

namespace envgate {

// How many pod lists one snapshot may take before it gives up for this pass. The
// controller writes a Job two or three times per failed pod; a Job still changing after
// this many rounds is being written by something else too (another controller, a
// person's annotations), and re-reading it without end would only load the API server.
inline constexpr int k_max_snapshot_rounds = 5;

struct JobSnapshot {
    std::optional<nlohmann::json> job;  // nullopt: deleted, or replaced by another Job
    std::vector<nlohmann::json> pods;   // empty when the Job is gone
    // False when the Job changed during every one of `rounds` pod lists: the pods and
    // the Job may then disagree, and the pair must not be evaluated.
    bool consistent = true;
    int rounds = 0;
    // The revision the pair shows the store at, when consistent (0: not known).
    std::uint64_t revision = 0;
};

// Lists the pods `label_selector` selects, then reads the Job `id`, until the pair is
// known to belong together, at most `max_rounds` lists: the Job was last written at or
// before the revision the list was served at (its resourceVersion is not newer than the
// list's: both then show the store at that revision), or it is the same as the Job read
// before that list (the pods were listed while the Job was at that version). "The
// same": the resourceVersion, or else everything but metadata and the tallies
// active/ready/terminating, which the controller rewrites as pods start and stop
// without moving a pod between the counts. With `first`, the Job as the caller already
// has it stands for a read before the first list.
Result<JobSnapshot> read_job_snapshot(kube::KubeApi& api, const JobIdentity& id,
                                      const std::string& label_selector,
                                      int max_rounds = k_max_snapshot_rounds,
                                      std::optional<nlohmann::json> first = std::nullopt);

// The Job `id` read now, with its pods as the pod watch cached them (`pods`), when that
// pair is the API's store at one revision: the pods cache is settled, so it is the
// selected pods exactly as of revision pods.progress (watch events come in revision
// order), and the Job was last written at or before that revision, so it was the same
// then. One GET instead of a list and a GET, when a pod's change is the newest thing
// the caches saw (the Job controller writes the Job about 1 s after a pod's failure).
// When instead the Job's change is the newest (the cached Job is newer than the pods,
// both caches settled): one list of the pods; if it holds the cached pods exactly (the
// same uids at the same resourceVersions) and was served at or after the Job's
// revision, no pod changed from the pods' revision to the list's, so the cached Job and
// the pods are the store as of the Job's revision. Otherwise read_job_snapshot, with
// the read already made standing for its first.
Result<JobSnapshot> read_job_beside_pods(kube::KubeApi& api, const JobIdentity& id,
                                         const std::string& label_selector, const CacheView& jobs,
                                         const CacheView& pods);

// True when `after` counts the Job's pods as `before` does: the same resourceVersion,
// or nothing changed but metadata and the tallies (see above).
bool counts_alike(const nlohmann::json& before, const nlohmann::json& after);

// The Job (by name and uid) and the pods as the watches cached them, whether or not the
// two belong together (`consistent` says nothing here).
JobSnapshot as_cached(const JobIdentity& id, const CacheView& jobs, const CacheView& pods);

}  // namespace envgate
