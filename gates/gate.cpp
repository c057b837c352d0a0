#include "gates/gate.h"

namespace envgate::gates {
namespace {

const GateNames k_gates[] = {
    {"pre-migrations", "RunningPreMigrations", "RetryingPreMigrations", "MigrationsJobFailed",
     "PreMigrationsComplete", "MigrationsRetrying", "MigrationsFailed"},
    {"post-migrations", "RunningPostMigrations", "RetryingPostMigrations", "MigrationsJobFailed",
     "PostMigrationsComplete", "MigrationsRetrying", "MigrationsFailed"},
    {"batched-migrations-check", "RunningBatchedMigrationsCheck", "RetryingBatchedMigrationsCheck",
     "BatchedMigrationsCheckFailed", "BatchedMigrationsCheckComplete",
     "BatchedMigrationsCheckRetrying", "BatchedMigrationsCheckFailed"},
};

}  // namespace

const GateNames& names(Gate gate) {
    return k_gates[static_cast<int>(gate)];
}

std::optional<Gate> gate_from_name(std::string_view name) {
    for (int i = 0; i < 3; ++i) {
        if (name == k_gates[i].name) {
            return static_cast<Gate>(i);
        }
    }
    return std::nullopt;
}

}  // namespace envgate::gates
