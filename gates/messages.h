// The gate verdict's words: the Progressing message (and command, and event) for each
// state of a pass, once gates/evaluate.cpp counted it and decided what ends the Job.
// Internal to gates/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gates/gate.h"
#include "gates/snapshot.h"
#include "gates/verdict.h"

namespace envgate::gates {

// The condition of `type` with status True on `job`, or nullptr.
const Condition* true_condition(const Job& job, std::string_view type);

// What ends (or holds) the Job, in the controller's order: a terminal condition, then
// FailureTarget, then a failed pod matching a FailJob rule (the controller writes
// FailureTarget for it on its next sync), then the suspension.
struct Ending {
    State state = State::running;
    std::string reason;
    std::string message;
};

// One pass being evaluated: the Job, the pods it counts, and what ends it.
struct Pass {
    const Gate& gate;
    const Job& job;
    std::vector<const Pod*> pods;
    std::string ref;  // "Job ns/name"
    Ending ending;
    TimePoint now;
};

// Fills `v`'s Progressing reason and message, command and event for `v.state`, from
// its counts and memory (already updated for this pass), and the words, command and
// event of each run in `v.runs` (their counts already set).
void explain(const Pass& p, Verdict& v);

// What one failed run was: its failure, or what is known of a run no pass saw end.
std::string run_text(const SeenRun& run);

// "container migrations exited 1 (Error): ..." or "none observed".
std::string last_failure_text(const GateMemory& mem);

}  // namespace envgate::gates
