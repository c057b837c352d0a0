#include "runner/gating/remembered.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "gates/counting.h"
#include "gates/failures.h"
#include "gates/memory.h"
#include "gates/runs.h"
#include "runner/base/secrets.h"
#include "runner/gating/kept_logs.h"

namespace envgate {
namespace {

// A run only the memory holds: its pod is gone.
RememberedListing from_record(const gates::RememberedRun& r) {
    RememberedListing l;
    l.record = r;
    l.shown = false;
    l.pod_listed = false;
    l.run.key = r.key;
    l.run.number = r.number;
    l.run.counted = r.counted;
    l.run.seen_end = false;
    l.run.failure.pod = r.pod;
    l.run.failure.container = r.container;
    l.run.failure.at = r.at;
    l.run.counts.attempt = r.attempt;
    l.run.counts.limit = r.limit;
    return l;
}

// Where a run no pod shows any more is told in full, as far as known.
std::string remembered_note(const RememberedListing& l) {
    const gates::RememberedRun& r = *l.record;
    if (r.pod.empty()) {
        return "its pod was gone before a run of the gate listed it: no log tail was kept";
    }
    const std::string gone = l.pod_listed ? "its container ran again since" : "pod gone";
    const std::string job = r.seen_by.empty() ? "" : ": " + r.seen_by;
    if (!r.tail_kept) {
        return gone + "; the job that saw it kept no log tail of it" + job;
    }
    return gone + "; its log tail is in the report of the job that saw it" + job;
}

}  // namespace

std::vector<gates::SeenRun> remembered_runs(const gates::Job& job,
                                            const std::vector<gates::Pod>& pods,
                                            const gates::GateMemory& memory) {
    std::vector<gates::SeenRun> out;
    for (const gates::Pod& pod : pods) {
        for (const auto* list : {&pod.init_containers, &pod.containers}) {
            for (const gates::ContainerStatus& c : *list) {
                const std::string key = gates::run_key(pod, c);
                auto counted = memory.failed_runs.find(key);
                if (counted == memory.failed_runs.end()) {
                    continue;
                }
                std::optional<gates::ShownRun> shown = gates::shown_failed_run(pod, c);
                for (int n = 1; n <= counted->second; ++n) {
                    gates::SeenRun run = gates::container_run_n(pod, c, key, n, shown);
                    if (!run.seen_end) {
                        run.message = fmt::format(
                            "container {} of pod {} failed (its run {}), as an earlier run of "
                            "the gate counted; the pod no longer shows how it ended",
                            c.name, pod.name, n);
                    }
                    out.push_back(std::move(run));
                }
            }
        }
        const std::string& uid = pod.uid.empty() ? pod.name : pod.uid;
        if (std::binary_search(memory.pods_failed.begin(), memory.pods_failed.end(), uid)) {
            gates::SeenRun run;
            run.key = uid;
            run.failure = gates::pod_failure_of(pod);
            if (auto why = gates::ignore_reason(job, pod)) {
                run.counted = false;
                run.ignored_why = *why;
            }
            out.push_back(std::move(run));
        }
    }
    // Oldest first: by when each ended (a run whose end is not shown before its
    // container's next), then by run number, and two pods that failed in the same second
    // by their last writes, as gates::new_runs orders them.
    std::map<std::string, std::uint64_t> written;
    for (const gates::Pod& pod : pods) {
        written[pod.name] = pod.resource_version;
    }
    std::stable_sort(out.begin(), out.end(), [&](const gates::SeenRun& a, const gates::SeenRun& b) {
        const TimePoint ta = a.failure.at.value_or(TimePoint::min());
        const TimePoint tb = b.failure.at.value_or(TimePoint::min());
        if (ta != tb) {
            return ta < tb;
        }
        if (a.failure.pod != b.failure.pod) {
            return written[a.failure.pod] < written[b.failure.pod];
        }
        return a.number < b.number;
    });
    int attempt = 0;
    for (gates::SeenRun& run : out) {
        run.counts.attempt = run.counted ? ++attempt : 0;
    }
    return out;
}

std::vector<RememberedListing> remembered_listing(const gates::Job& job,
                                                  const std::vector<gates::Pod>& pods,
                                                  const gates::GateMemory& memory) {
    std::vector<RememberedListing> out;
    for (gates::SeenRun& run : remembered_runs(job, pods, memory)) {
        RememberedListing l;
        if (const gates::RememberedRun* r = gates::remembered(memory, run.key)) {
            l.record = *r;
            l.shown = run.seen_end;
            run.counts.attempt = r->attempt;  // as its line first told it
            run.counts.limit = r->limit;
        }
        l.run = std::move(run);
        out.push_back(std::move(l));
    }
    for (const gates::RememberedRun& r : memory.runs) {
        const bool listed = std::any_of(
            out.begin(), out.end(), [&](const RememberedListing& l) { return l.run.key == r.key; });
        if (!listed) {
            out.push_back(from_record(r));
        }
    }
    // As the runs that listed them did: the memory's records are in that order; runs
    // without one are older than every record (it drops the oldest first).
    std::map<std::string, std::size_t> order;
    for (std::size_t i = 0; i < memory.runs.size(); ++i) {
        order[memory.runs[i].key] = i + 1;
    }
    std::stable_sort(out.begin(), out.end(),
                     [&](const RememberedListing& a, const RememberedListing& b) {
                         return order[a.run.key] < order[b.run.key];
                     });
    return out;
}

void keep_remembered_run(JobLog& log, const RememberedListing& l, StepReport& step) {
    const gates::RememberedRun& r = *l.record;
    FailedRun run;
    run.key = r.key;
    run.attempt = r.attempt;
    run.limit = r.limit;
    run.at = r.at;
    run.pod = r.pod;
    run.container = r.container.value_or("");
    run.container_run = r.pod.empty() ? -1 : r.number;
    run.counted = r.counted;
    run.description = mask_secrets(r.text) + (r.counted ? "" : " (not counted)");
    run.log_note = mask_secrets(remembered_note(l));
    run.remembered = true;
    run.seen_by = mask_secrets(r.seen_by);
    keep_listed(log, std::move(run), step);
}

}  // namespace envgate
