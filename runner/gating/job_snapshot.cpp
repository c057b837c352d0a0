#include "runner/gating/job_snapshot.h"

#include <cstdint>
#include <map>

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

// True when `job` was last written at or before the revision the pod list was served
// at (`list_version`). Nothing wrote the Job between that revision and the GET that
// returned it, so the two show the API's store at one revision: resourceVersions are
// the store's revisions, one counter over every object (etcd's; kubesim's too).
bool unchanged_since_list(const json& job, const std::string& list_version) {
    auto written = kube::resource_version_number(version_of(job));
    auto listed = kube::resource_version_number(list_version);
    return written && listed && *written <= *listed;
}

// True when `job` was last written at or before `revision`.
bool written_by(const json& job, std::uint64_t revision) {
    auto written = kube::resource_version_number(version_of(job));
    return written && *written <= revision;
}

// The pods' uids with their resourceVersions.
std::map<std::string, std::string> versions_of(const std::vector<json>& pods) {
    std::map<std::string, std::string> out;
    for (const auto& pod : pods) {
        const json meta = pod.value("metadata", json::object());
        out[meta.value("uid", "")] = meta.value("resourceVersion", "");
    }
    return out;
}

Result<JobSnapshot> read_pods_beside_job(kube::KubeApi& api, const JobIdentity& id,
                                         const std::string& label_selector, const json& cached,
                                         const CacheView& jobs, const CacheView& pods) {
    TRY_ASSIGN(auto list, api.list(kube::pods(id.namespace_), {label_selector, ""}));
    auto listed = kube::resource_version_number(list.resource_version);
    if (listed && *listed >= jobs.progress &&
        versions_of(list.items) == versions_of(pods.objects)) {
        return JobSnapshot{cached, std::move(list.items), true, 1, jobs.progress};
    }
    TRY_ASSIGN(std::optional<json> after, read_job(api, id));
    if (!after) {
        return JobSnapshot{std::nullopt, {}, true, 1, 0};
    }
    // The cached Job held at the Job's revision, before the list: alike after it, the
    // pods were listed while it was so (read_job_snapshot's rule).
    if (unchanged_since_list(*after, list.resource_version) || counts_alike(cached, *after)) {
        return JobSnapshot{std::move(after), std::move(list.items), true, 1, listed.value_or(0)};
    }
    TRY_ASSIGN(JobSnapshot more, read_job_snapshot(api, id, label_selector,
                                                   k_max_snapshot_rounds - 1, std::move(after)));
    more.rounds += 1;
    return more;
}

}  // namespace

bool counts_alike(const json& before, const json& after) {
    return version_of(before) == version_of(after) || counted_part(before) == counted_part(after);
}

Result<JobSnapshot> read_job_snapshot(kube::KubeApi& api, const JobIdentity& id,
                                      const std::string& label_selector, int max_rounds,
                                      std::optional<json> first) {
    JobSnapshot snap;
    snap.job = std::move(first);  // nullopt: the first round has no Job read before it
    while (snap.rounds < max_rounds && (snap.job || snap.rounds == 0)) {
        ++snap.rounds;
        TRY_ASSIGN(auto list, api.list(kube::pods(id.namespace_), {label_selector, ""}));
        TRY_ASSIGN(std::optional<json> after, read_job(api, id));
        if (!after) {
            return JobSnapshot{std::nullopt, {}, true, snap.rounds};
        }
        bool same = unchanged_since_list(*after, list.resource_version) ||
                    (snap.job && counts_alike(*snap.job, *after));
        snap.job = std::move(after);
        snap.pods = std::move(list.items);
        snap.consistent = same;
        snap.revision = kube::resource_version_number(list.resource_version).value_or(0);
        if (same) {
            return snap;
        }
    }
    return snap;
}

Result<JobSnapshot> read_job_beside_pods(kube::KubeApi& api, const JobIdentity& id,
                                         const std::string& label_selector, const CacheView& jobs,
                                         const CacheView& pods) {
    std::optional<json> cached = as_cached(id, jobs, pods).job;
    if (cached && jobs.settled && pods.usable && pods.settled && jobs.progress > pods.progress) {
        return read_pods_beside_job(api, id, label_selector, *cached, jobs, pods);
    }
    if (!pods.usable || !pods.settled || !cached || !written_by(*cached, pods.progress)) {
        // The cached Job is newer than the pods (or there is none): a GET would be too.
        return read_job_snapshot(api, id, label_selector);
    }
    TRY_ASSIGN(std::optional<json> now, read_job(api, id));
    if (!now) {
        return JobSnapshot{std::nullopt, {}, true, 0, 0};
    }
    if (written_by(*now, pods.progress)) {
        return JobSnapshot{std::move(now), pods.objects, true, 0, pods.progress};
    }
    return read_job_snapshot(api, id, label_selector, k_max_snapshot_rounds, std::move(now));
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
