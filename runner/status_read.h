// What `status` and `dashboard` read before they show anything: the locks, then the
// gates' last runs, within the one --timeout both commands take.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/config/config.h"
#include "runner/connect/context.h"
#include "runner/connect/lock_status.h"
#include "runner/status_gates.h"

namespace envgate {

struct StatusRead {
    std::vector<LockStatus> locks;
    std::vector<GateRuns> gates;  // empty unless asked for and the config has gates
    TimePoint now{};              // when the locks were read: the time the output speaks of
};

// Where the gates' Jobs are listed: read_gate_runs' `kubeconfig` and `context`.
struct GateSource {
    std::optional<std::string> kubeconfig;
    std::optional<std::string> context;
};

// Reads the locks `names` through `store` within `budget` (read_lock_statuses), then,
// when `gates` is given and the config has gates, the gate runs of the same
// environments in what is left of `budget`. Nullopt (and `exit` set) when a lock has no
// store to read from.
std::optional<StatusRead> read_status(const Config& config, const std::vector<std::string>& names,
                                      Context& ctx, int& exit, const StoreOptions& store,
                                      const std::optional<GateSource>& gates, Duration budget);

}  // namespace envgate
