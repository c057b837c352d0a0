// The gates of an upgrade and the names each one writes: Progressing reasons and
// Warning event reasons. The three GitLab gates keep the GitLab Operator's names
// (spec/gates.md); a gate an app team adds in envgate.yml derives its names from its
// own (`seed-check`: RunningSeedCheck, SeedCheckComplete, ...; see custom_gate()).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace envgate::gates {

struct GateNames {
    std::string name;             // "pre-migrations"
    std::string running_reason;   // Progressing True while the Job runs (or is failing)
    std::string retry_reason;     // Progressing True while it retries
    std::string failed_reason;    // Progressing False once it failed
    std::string complete_reason;  // Progressing True once it completed
    std::string retry_event;      // Warning event when the failed count rises
    std::string failed_event;     // Warning event when the Job failed
};

// A gate: one of the built-in three, or one named in envgate.yml. A plain value that
// carries its names, so that evaluate() stays pure and needs no registry.
class Gate {
  public:
    static const Gate pre_migrations;
    static const Gate post_migrations;
    static const Gate batched_migrations_check;

    const GateNames& names() const { return m_names; }
    const std::string& name() const { return m_names.name; }
    bool is_builtin() const { return m_builtin; }
    bool operator==(const Gate& other) const { return m_names.name == other.m_names.name; }

  private:
    Gate(GateNames names, bool builtin) : m_names(std::move(names)), m_builtin(builtin) {}
    friend Gate custom_gate(std::string_view name);
    friend const std::vector<Gate>& builtin_gates();

    GateNames m_names;
    bool m_builtin = false;
};

const GateNames& names(const Gate& gate);

// pre-migrations, post-migrations, batched-migrations-check, in upgrade order.
const std::vector<Gate>& builtin_gates();

// The built-in gate called `name` ("pre-migrations", ...), or nullopt.
std::optional<Gate> gate_from_name(std::string_view name);

// "seed-check" -> "SeedCheck": each '-'-separated word capitalised, the dashes dropped.
std::string camel_case(std::string_view name);

// The gate called `name`: a built-in one when `name` is one, else a gate whose names
// derive from CamelCase(name): reasons Running<C>, Retrying<C>, <C>Failed, <C>Complete
// and events <C>Retrying, <C>Failed (the pattern of batched-migrations-check).
// REQUIRES: `name` is a DNS-1123 label (envgate.yml checks it).
Gate custom_gate(std::string_view name);

}  // namespace envgate::gates
