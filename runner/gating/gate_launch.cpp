// GateRunner's start: create the gate's Job, or re-attach to the one an earlier run of
// the same manifest created, unless an earlier hold of the lock may still drive it.
#include <fmt/format.h>

#include "runner/gating/gate_runner.h"
#include "runner/gating/job_fence.h"

namespace envgate {

using nlohmann::json;

Result<GateRunner::Launched> GateRunner::launch(const RenderedJob& job) {
    kube::ResourceRef ref = kube::jobs(job.namespace_, job.name);
    auto created = m_api.create(kube::jobs(job.namespace_), job.object);
    if (created.is_ok()) {
        m_log.line(Tone::plain, fmt::format("created Job {}/{}", job.namespace_, job.name));
        return Launched{std::move(created).value(), true};
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
    TRY(check_job_fence(job, existing));
    m_log.line(Tone::plain,
               fmt::format("re-attached to Job {}/{} (same spec, created by an earlier run)",
                           job.namespace_, job.name));
    return Launched{std::move(existing), false};
}

}  // namespace envgate
