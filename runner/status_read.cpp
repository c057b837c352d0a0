#include "runner/status_read.h"

#include <algorithm>

namespace envgate {

std::optional<StatusRead> read_status(const Config& config, const std::vector<std::string>& names,
                                      Context& ctx, int& exit, const StoreOptions& store,
                                      const std::optional<GateSource>& gates, Duration budget) {
    const TimePoint started = ctx.clock.now();
    auto locks = read_lock_statuses(config, names, ctx, exit, store, budget);
    if (!locks) {
        return std::nullopt;
    }
    StatusRead read;
    read.locks = std::move(*locks);
    read.now = ctx.clock.now();
    if (gates && !config.gates.empty()) {
        read.gates =
            read_gate_runs(config, names, ctx, gates->kubeconfig, gates->context,
                           std::max<Duration>(budget - (read.now - started), Duration::zero()));
    }
    return read;
}

}  // namespace envgate
