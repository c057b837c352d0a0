// GateRunner's start: create the gate's Job, or re-attach to the one an earlier run of
// the same manifest created, unless an earlier hold of the lock may still drive it.
#include <fmt/format.h>

#include "runner/gate/gate_runner.h"

namespace envgate {

using nlohmann::json;

Result<json> GateRunner::launch(const RenderedJob& job) {
    kube::ResourceRef ref = kube::jobs(job.namespace_, job.name);
    auto created = m_api.create(kube::jobs(job.namespace_), job.object);
    if (created.is_ok()) {
        m_log.line(Tone::plain, fmt::format("created Job {}/{}", job.namespace_, job.name));
        return created;
    }
    if (created.status().code() != Code::already_exists) {
        return created.status();
    }
    TRY_ASSIGN(json existing, m_api.get(ref));
    std::string hash = existing["metadata"]["labels"].value(k_label_spec_hash, "");
    if (hash != job.spec_hash) {
        return Status(
            Code::conflict,
            fmt::format("Job {}/{} exists but was not made from this manifest (its {} "
                        "label is \"{}\", this manifest's spec hashes to \"{}\"); delete "
                        "it or rename the Job in the manifest",
                        job.namespace_, job.name, k_label_spec_hash, hash, job.spec_hash));
    }
    TRY(check_fence(job, existing));
    m_log.line(Tone::plain,
               fmt::format("re-attached to Job {}/{} (same spec, created by an earlier run)",
                           job.namespace_, job.name));
    return existing;
}

// True when the Job has a Complete or Failed condition that is True.
static bool job_finished(const json& job) {
    if (!job.contains("status") || !job["status"].is_object() ||
        !job["status"].contains("conditions") || !job["status"]["conditions"].is_array()) {
        return false;
    }
    for (const auto& c : job["status"]["conditions"]) {
        if (c.is_object() && c.contains("type") && c.contains("status") &&
            (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") {
            return true;
        }
    }
    return false;
}

// A Job created under an earlier hold of the lock (a lower envgate.dev/fence) that
// is still running may still be driven by that holder: it is not adopted as this
// run's. A finished one is history, and its verdict stands.
Status GateRunner::check_fence(const RenderedJob& job, const json& existing) {
    auto token_of = [](const json& object) -> std::optional<long long> {
        const json* labels = object.contains("metadata") && object["metadata"].contains("labels")
                                 ? &object["metadata"]["labels"]
                                 : nullptr;
        if (labels == nullptr || !labels->is_object() || !labels->contains(k_label_fence) ||
            !(*labels)[k_label_fence].is_string()) {
            return std::nullopt;
        }
        try {
            return std::stoll((*labels)[k_label_fence].get<std::string>());
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    auto ours = token_of(job.object);
    auto theirs = token_of(existing);
    if (!ours || !theirs || *theirs >= *ours || job_finished(existing)) {
        return Status::ok();
    }
    return Status(Code::conflict,
                  fmt::format("Job {}/{} was created under an earlier hold of the lock (fencing "
                              "token {} < {}) and is still running: it is not adopted. Once "
                              "it is safe, delete it and rerun: kubectl -n {} delete job {}",
                              job.namespace_, job.name, *theirs, *ours, job.namespace_, job.name));
}

}  // namespace envgate
