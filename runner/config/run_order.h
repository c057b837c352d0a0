// The order of an upgrade's steps and gates. The built-in ones keep spec/gates.md's
// order (diff, pre-migrations, deploy, post-migrations, batched-migrations-check, qa);
// a gate or step envgate.yml adds runs right after the one its `after` names, and
// several added after the same one run in the order the file lists them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gates/gate.h"
#include "runner/config/config.h"

namespace envgate {

enum class EntryKind { step, gate };

struct RunEntry {
    std::string name;
    EntryKind kind = EntryKind::step;
    bool builtin = false;
};

// diff, pre-migrations, deploy, post-migrations, batched-migrations-check, qa.
const std::vector<std::string>& builtin_run_order();
bool is_builtin_gate(std::string_view name);
bool is_builtin_step(std::string_view name);

// Names no added gate or step may take: the reports and the generated pipeline use
// them for the lock, the whole run and the release and fail jobs.
const std::vector<std::string>& reserved_step_names();

// Every gate and step `config` configures, in the order a run takes them. An added
// entry whose `after` names nothing reachable (load_config rejects that) is left out.
std::vector<RunEntry> run_order(const Config& config);

// "diff -> pre-migrations -> deploy -> seed-check -> post-migrations -> qa".
std::string describe_run_order(const std::vector<RunEntry>& order);

// The gate `--gate NAME` names: a built-in one, or one `config` adds (nullptr: no
// config was read). Otherwise `invalid`, with a did-you-mean or the gates there are.
Result<gates::Gate> resolve_gate(const std::string& name, const Config* config);

}  // namespace envgate
