#include "gates/runs.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "gates/failures.h"

namespace envgate::gates {

SeenRun container_run_n(const Pod& pod, const ContainerStatus& c, const std::string& key, int n,
                        const std::optional<ShownRun>& shown) {
    SeenRun run;
    run.key = key + "/" + std::to_string(n);
    run.number = n;
    if (shown && shown->number == n) {
        run.failure = shown->failure;
    } else {
        run.seen_end = false;
        run.failure.pod = pod.name;
        run.failure.container = c.name;
    }
    return run;
}
namespace {

using namespace std::string_view_literals;

bool contains(const std::vector<std::string>& sorted, const std::string& key) {
    return std::binary_search(sorted.begin(), sorted.end(), key);
}

void insert_sorted(std::vector<std::string>& sorted, const std::string& key) {
    auto at = std::lower_bound(sorted.begin(), sorted.end(), key);
    if (at == sorted.end() || *at != key) {
        sorted.insert(at, key);
    }
}

// The failed runs of `pod`'s containers counted against backoffLimit (`after`): those
// its failure as a whole takes out of the restart count. Not its restartCounts: a pod
// deleted while its published status still shows its newest failed run not restarted
// (restartCount one lower) takes out every run the gate counted.
int counted_runs_of(const Pod& pod, const RunCounts& after) {
    int sum = 0;
    std::string key;
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
        for (const ContainerStatus& c : *list) {
            key = run_key(pod, c);
            auto it = after.find(key);
            sum = sat_add(sum, it == after.end() ? 0 : it->second);
        }
    }
    return sum;
}

// The pod's failure as a whole, when it is one of its own not yet reported.
void add_pod_run(const Job& job, const Pod& pod, const RunsBefore& before, const RunCounts& after,
                 bool ending, std::vector<SeenRun>& out, std::vector<std::string>& pods_failed) {
    const std::string& uid = pod.uid.empty() ? pod.name : pod.uid;
    if (!is_pod_failed(job, pod) || !failed_on_its_own(pod, ending) ||
        contains(before.pods_failed, uid)) {
        return;
    }
    SeenRun run;
    run.key = uid;
    run.failure = pod_failure_of(pod, container_runs(job));
    if (auto why = ignore_reason(job, pod)) {
        run.counted = false;
        run.ignored_why = *why;
    }
    if (job.restart_policy == "OnFailure"sv && run.counted) {
        run.restarts_dropped = counted_runs_of(pod, after);
    }
    out.push_back(std::move(run));
    insert_sorted(pods_failed, uid);
}

// The container runs of `c` counted now and not before, numbered.
void add_container_runs(const Pod& pod, const ContainerStatus& c, const RunsBefore& before,
                        const RunCounts& after, std::vector<SeenRun>& out) {
    if (before.rose.empty()) {
        return;
    }
    const std::string key = run_key(pod, c);
    auto now = after.find(key);
    if (now == after.end()) {
        return;
    }
    auto was = std::find_if(before.rose.begin(), before.rose.end(),
                            [&](const auto& r) { return r.first == key; });
    if (was == before.rose.end()) {
        return;
    }
    const int first = was->second + 1;
    std::optional<ShownRun> shown = shown_failed_run(pod, c);
    for (int n = first; n <= now->second; ++n) {
        SeenRun run = container_run_n(pod, c, key, n, shown);
        if (!run.seen_end) {
            // A failed run all the same (the restart count says so).
            run.failure.kind = FailureKind::restart;
            run.failure.at = shown ? shown->failure.at : std::nullopt;
        }
        out.push_back(std::move(run));
    }
}

// Oldest first: by the time each ended (a run not seen ending just before its
// container's next), then by run number. Two pods that failed in the same second (the
// API's timestamps have no finer grain) by their last writes: a failed pod's are the
// kubelet's Failed status and the Job controller's finalizer removal right after it, so
// a pod that failed first was last written first. (A rerun that sees both at once then
// numbers them as the pass that saw them one after the other did; in pod name order it
// swapped them.)
void sort_oldest_first(const std::vector<const Pod*>& pods, TimePoint now,
                       std::vector<SeenRun>& out) {
    std::unordered_map<std::string, std::uint64_t> written;
    for (const Pod* pod : pods) {
        written[pod->name] = pod->resource_version;
    }
    std::stable_sort(out.begin(), out.end(), [&](const SeenRun& a, const SeenRun& b) {
        TimePoint ta = a.failure.at.value_or(now);
        TimePoint tb = b.failure.at.value_or(now);
        if (ta != tb) {
            return ta < tb;
        }
        if (a.failure.pod == b.failure.pod && a.number != b.number) {
            return a.number != 0 && (b.number == 0 || a.number < b.number);
        }
        if (a.failure.pod != b.failure.pod && a.number == 0 && b.number == 0) {
            return written[a.failure.pod] < written[b.failure.pod];
        }
        return false;
    });
}

// The key under which `pods_failed` remembers a failed pod the Job counted that no pass
// listed ("status.failed/N"), until a pass lists it.
constexpr std::string_view k_unlisted = "status.failed/";

// The first unlisted key in the sorted `pods_failed` (they sort together), or its end.
std::vector<std::string>::iterator first_unlisted(std::vector<std::string>& pods_failed) {
    auto at = std::lower_bound(pods_failed.begin(), pods_failed.end(), k_unlisted);
    return at != pods_failed.end() && at->starts_with(k_unlisted) ? at : pods_failed.end();
}

int unlisted_runs(const std::vector<std::string>& pods_failed) {
    auto at = std::lower_bound(pods_failed.begin(), pods_failed.end(), k_unlisted);
    int n = 0;
    for (; at != pods_failed.end() && at->starts_with(k_unlisted); ++at) {
        ++n;
    }
    return n;
}

// The failed pods `out` lists first (`listed` of them counted) that the Job had counted
// before as pods no pass listed: more than the count rose by (`rose`), up to the
// `unlisted` runs told so. The pod watch may deliver a pod's deletion after a list that
// no longer holds the pod: the Job's count of it came first. Such a pod is that run, not
// another: its run is taken out of `out`, and its uid takes the place of the unlisted
// key in `pods_failed` (oldest first). Returns how many.
int fold_into_unlisted(std::vector<SeenRun>& out, int listed, int rose, int unlisted,
                       std::vector<std::string>& pods_failed) {
    const int fold = std::min(unlisted, std::max(0, listed - std::max(rose, 0)));
    int folded = 0;
    for (auto it = out.begin(); it != out.end() && folded < fold;) {
        auto key = first_unlisted(pods_failed);
        if (key == pods_failed.end()) {
            break;
        }
        if (!it->counted || it->number != 0) {
            ++it;
            continue;
        }
        pods_failed.erase(key);
        it = out.erase(it);
        ++folded;
    }
    return folded;
}

}  // namespace

bool unlisted(const SeenRun& run) {
    return run.key.starts_with(k_unlisted);
}

std::vector<SeenRun> new_runs(const Job& job, const std::vector<const Pod*>& pods,
                              const RunsBefore& before, const RunCounts& after, int failed_pods,
                              bool ending, TimePoint now, std::vector<std::string>& pods_failed) {
    // Before any change: `before.pods_failed` may be `pods_failed` itself.
    const int unlisted_before = unlisted_runs(before.pods_failed);
    std::vector<SeenRun> out;
    for (const Pod* pod : pods) {
        if (removed_by_suspension(job, *pod)) {
            continue;  // the suspension stopped it: no failure of the migration
        }
        if (job.restart_policy == "OnFailure"sv) {
            for (const auto* list : {&pod->init_containers, &pod->containers}) {
                for (const ContainerStatus& c : *list) {
                    add_container_runs(*pod, c, before, after, out);
                }
            }
        }
        add_pod_run(job, *pod, before, after, ending, out, pods_failed);
    }
    int counted_pods = 0;
    for (const SeenRun& r : out) {
        counted_pods += r.counted && r.number == 0 ? 1 : 0;
    }
    sort_oldest_first(pods, now, out);
    counted_pods -= fold_into_unlisted(out, counted_pods, failed_pods - before.failed_pods,
                                       unlisted_before, pods_failed);
    // Failed pods the Job counts beyond those reported before and now: pods no pass
    // listed (created, failed and deleted between two passes).
    std::vector<SeenRun> unseen;
    // Ending, the controller counts the pods it stops too: they are no runs of their own.
    const int first_unseen =
        ending ? failed_pods + 1 : sat_add(before.failed_pods, counted_pods) + 1;
    for (int n = first_unseen; n <= failed_pods; ++n) {
        SeenRun run;
        run.key = "status.failed/" + std::to_string(n);
        run.seen_end = false;
        run.failure.kind = FailureKind::pod;
        insert_sorted(pods_failed, run.key);
        unseen.push_back(std::move(run));
    }
    // The unseen pods before all the others.
    out.insert(out.begin(), std::make_move_iterator(unseen.begin()),
               std::make_move_iterator(unseen.end()));
    return out;
}

}  // namespace envgate::gates
