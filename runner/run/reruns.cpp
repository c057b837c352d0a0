#include "runner/run/reruns.h"

#include <fmt/format.h>

namespace envgate {

std::optional<locks::Transition> latest_unlock(const locks::LockRecord& record) {
    if (!record.unlocks.empty()) {
        return record.unlocks.back();  // kept apart: no other transition pushes it out
    }
    for (auto it = record.history.rbegin(); it != record.history.rend(); ++it) {
        if (it->what == "unlock") {
            return *it;
        }
    }
    return std::nullopt;
}

RenderedJob after_unlock(RenderedJob job, const locks::Transition& unlock) {
    std::string seq = std::to_string(unlock.seq);
    job = salted_job(std::move(job), "unlock " + seq);
    job.object["metadata"]["labels"][k_label_unlock] = seq;
    return job;
}

std::string after_unlock_text(const locks::Transition& unlock) {
    return fmt::format(
        "new Job after the unlock by {} at {}; runs after an unlock do not "
        "re-attach to the Jobs before it",
        unlock.who, format_rfc3339(unlock.at));
}

}  // namespace envgate
