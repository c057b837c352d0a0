// The three gates of an upgrade and the names each one writes: Progressing reasons
// and Warning event reasons (spec/gates.md, after the GitLab Operator's rules).
#pragma once

#include <optional>
#include <string_view>

namespace envgate::gates {

enum class Gate { pre_migrations, post_migrations, batched_migrations_check };

struct GateNames {
    const char* name;             // "pre-migrations"
    const char* running_reason;   // Progressing True while the Job runs (or is failing)
    const char* retry_reason;     // Progressing True while it retries
    const char* failed_reason;    // Progressing False once it failed
    const char* complete_reason;  // Progressing True once it completed
    const char* retry_event;      // Warning event when the failed count rises
    const char* failed_event;     // Warning event when the Job failed
};

const GateNames& names(Gate gate);

// The gate called `name` ("pre-migrations", ...), or nullopt.
std::optional<Gate> gate_from_name(std::string_view name);

}  // namespace envgate::gates
