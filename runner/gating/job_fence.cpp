#include "runner/gating/job_fence.h"

#include <fmt/format.h>

namespace envgate {
namespace {

using nlohmann::json;

// True when the Job has a Complete or Failed condition that is True, or the one the
// controller writes just before them (SuccessCriteriaMet, FailureTarget, Kubernetes
// 1.31+): a gate that saw it ended, and a run right after it must not take the Job
// for one still running.
bool job_finished(const json& job) {
    if (!job.contains("status") || !job["status"].is_object() ||
        !job["status"].contains("conditions") || !job["status"]["conditions"].is_array()) {
        return false;
    }
    for (const auto& c : job["status"]["conditions"]) {
        if (c.is_object() && c.contains("type") && c.contains("status") &&
            (c["type"] == "Complete" || c["type"] == "Failed" ||
             c["type"] == "SuccessCriteriaMet" || c["type"] == "FailureTarget") &&
            c["status"] == "True") {
            return true;
        }
    }
    return false;
}

}  // namespace

// A Job created under an earlier hold of the lock (a lower envgate.dev/fence) that
// is still running may still be driven by that holder: it is not adopted as this
// run's. A finished one is history, and its verdict stands.
Status check_job_fence(const RenderedJob& job, const json& existing) {
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
