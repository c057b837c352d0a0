// The gate verdict: one pure function from a snapshot of a Job, its pods and the gate's
// memory to what the gate reports (spec/gates.md). No I/O, no clock: `now` is a parameter.
#pragma once

#include <optional>
#include <vector>

#include "gates/gate.h"
#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// Evaluates `gate` on `job` (nullopt: the Job was deleted) and `pods` (any pods; those
// the Job's selector does not select are left out). `memory` is what the previous
// verdict returned (empty on the first pass); the verdict carries the updated memory,
// which the caller must keep. Evaluating the same snapshot with the returned memory
// again yields no event and the same memory.
Verdict evaluate(const Gate& gate, const std::optional<Job>& job, const std::vector<Pod>& pods,
                 const GateMemory& memory, TimePoint now);

}  // namespace envgate::gates
