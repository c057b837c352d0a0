#include "runner/gate/job_snapshot.h"

namespace envgate {
namespace {

using nlohmann::json;

// The Job `id` as it is now; nullopt when it is gone or another Job took its name.
Result<std::optional<json>> read_job(kube::KubeApi& api, const JobIdentity& id) {
    auto job = api.get(kube::jobs(id.namespace_, id.name));
    if (job.is_ok() && job->at("metadata").value("uid", "") == id.uid) {
        return std::optional<json>(std::move(job).value());
    }
    if (job.is_ok() || job.status().code() == Code::not_found) {
        return std::optional<json>();
    }
    return job.status();
}

std::string version_of(const json& job) {
    return job.at("metadata").value("resourceVersion", "");
}

// What the verdict reads of a Job, less the pod tallies the controller rewrites on
// every sync (active, ready, terminating): a write that changed only those, or only
// metadata (the gate's own annotations), cannot move a pod between the counts.
json counted_part(const json& job) {
    json status = job.value("status", json::object());
    for (const char* tally : {"active", "ready", "terminating"}) {
        status.erase(tally);
    }
    return {{"spec", job.value("spec", json::object())}, {"status", std::move(status)}};
}

}  // namespace

bool counts_alike(const json& before, const json& after) {
    return version_of(before) == version_of(after) || counted_part(before) == counted_part(after);
}

Result<JobSnapshot> read_job_snapshot(kube::KubeApi& api, const JobIdentity& id,
                                      const std::string& label_selector, int max_rounds,
                                      std::optional<json> first) {
    JobSnapshot snap;
    if (first) {
        snap.job = std::move(first);
    } else {
        TRY_ASSIGN(snap.job, read_job(api, id));
    }
    while (snap.job && snap.rounds < max_rounds) {
        ++snap.rounds;
        TRY_ASSIGN(auto list, api.list(kube::pods(id.namespace_), {label_selector, ""}));
        TRY_ASSIGN(std::optional<json> after, read_job(api, id));
        if (!after) {
            return JobSnapshot{std::nullopt, {}, true, snap.rounds};
        }
        bool same = counts_alike(*snap.job, *after);
        snap.job = std::move(after);
        snap.pods = std::move(list.items);
        if (same) {
            snap.consistent = true;
            return snap;
        }
        snap.consistent = false;
    }
    return snap;
}

JobSnapshot as_cached(const JobIdentity& id, const CacheView& jobs, const CacheView& pods) {
    JobSnapshot snap;
    for (const auto& job : jobs.objects) {
        if (job.at("metadata").value("name", "") == id.name &&
            job.at("metadata").value("uid", "") == id.uid) {
            snap.job = job;
            snap.pods = pods.objects;
        }
    }
    return snap;
}

}  // namespace envgate
