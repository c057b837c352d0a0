#include "gates/gate.h"

#include <cctype>

namespace envgate::gates {

const std::vector<Gate>& builtin_gates() {
    static const std::vector<Gate> k_gates = {
        Gate({"pre-migrations", "RunningPreMigrations", "RetryingPreMigrations",
              "MigrationsJobFailed", "PreMigrationsComplete", "MigrationsRetrying",
              "MigrationsFailed"},
             true),
        Gate({"post-migrations", "RunningPostMigrations", "RetryingPostMigrations",
              "MigrationsJobFailed", "PostMigrationsComplete", "MigrationsRetrying",
              "MigrationsFailed"},
             true),
        Gate({"batched-migrations-check", "RunningBatchedMigrationsCheck",
              "RetryingBatchedMigrationsCheck", "BatchedMigrationsCheckFailed",
              "BatchedMigrationsCheckComplete", "BatchedMigrationsCheckRetrying",
              "BatchedMigrationsCheckFailed"},
             true),
    };
    return k_gates;
}

const Gate Gate::pre_migrations = builtin_gates()[0];
const Gate Gate::post_migrations = builtin_gates()[1];
const Gate Gate::batched_migrations_check = builtin_gates()[2];

const GateNames& names(const Gate& gate) {
    return gate.names();
}

std::optional<Gate> gate_from_name(std::string_view name) {
    for (const Gate& g : builtin_gates()) {
        if (g.name() == name) {
            return g;
        }
    }
    return std::nullopt;
}

std::string camel_case(std::string_view name) {
    std::string out;
    bool start = true;
    for (char c : name) {
        if (c == '-') {
            start = true;
            continue;
        }
        out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        start = false;
    }
    return out;
}

Gate custom_gate(std::string_view name) {
    if (auto builtin = gate_from_name(name)) {
        return *builtin;
    }
    const std::string c = camel_case(name);
    return Gate({std::string(name), "Running" + c, "Retrying" + c, c + "Failed", c + "Complete",
                 c + "Retrying", c + "Failed"},
                false);
}

}  // namespace envgate::gates
