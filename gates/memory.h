// What the gate's memory keeps of each failed run a pass listed (GateMemory::runs), so
// that a later run of the gate lists the runs whose pods are gone, in the order they
// were first listed, each once. Pure: the runner stamps whose reports keep the logs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// Appends each run of `runs` (a pass's, oldest first) that `memory` does not hold yet,
// with its pod's completion index as `pods` show it, keeping the newest
// k_remembered_runs and counting the older ones dropped in `runs_forgotten`.
void remember_runs(GateMemory& memory, const std::vector<SeenRun>& runs,
                   const std::vector<const Pod*>& pods);

// Notes on the remembered run keyed `key` (one this process listed) that `job_url` (the
// CI job of this process; empty: not known) keeps it in its reports, and whether with
// its log tail (`tail_kept`).
void note_kept(GateMemory& memory, std::string_view key, std::string_view job_url, bool tail_kept);

// The remembered run keyed `key`, or nullptr.
const RememberedRun* remembered(const GateMemory& memory, std::string_view key);

// `text` cut to at most `max` bytes at a UTF-8 boundary, "…" marking a cut.
std::string cut_text(std::string_view text, std::size_t max);

}  // namespace envgate::gates
