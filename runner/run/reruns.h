// Which Job a rerun uses (docs/reruns.md). Job names come from the spec, so a rerun of
// the same spec re-attaches to its Job (a retried CI job, a restarted runner). An
// unlock is a person saying "try again": the runs after it name their Jobs after the
// unlock too (its sequence number in the lock's history), so they create new Jobs.
#pragma once

#include <cstdint>
#include <optional>

#include "locks/lock_record.h"
#include "runner/base/vocab/cluster_keys.h"
#include "runner/gating/manifest.h"

namespace envgate {

// The latest unlock in `record` (its unlock list, else its history), or nullopt.
std::optional<locks::Transition> latest_unlock(const locks::LockRecord& record);

// `job` named for the runs after `unlock`: its spec hash (and so its name) also hashes
// the unlock's sequence number, and it carries k_label_unlock.
RenderedJob after_unlock(RenderedJob job, const locks::Transition& unlock);

// "new Job after the unlock by WHO at TIME; ..." (the unlock's reason is in the lock
// history: it quotes the whole failure).
std::string after_unlock_text(const locks::Transition& unlock);

}  // namespace envgate
