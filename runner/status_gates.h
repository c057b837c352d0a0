// The last run of each gate of each environment, for `envgate status --output
// prometheus`: read from the gate Jobs envgate labelled (envgate.dev/environment,
// envgate.dev/gate) in the environment's namespace, and the memory the gate kept in
// their annotations (its result, the failed runs it counted).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/time.h"
#include "runner/config/config.h"
#include "runner/connect/context.h"

namespace envgate {

struct GateRunStatus {
    std::string environment;
    std::string gate;     // pre-migrations, ...
    std::string job;      // the Job's name
    std::string result;   // running | succeeded | failed
    TimePoint started{};  // the Job's creationTimestamp
    Duration duration{};  // to its completion or failure, else to now
    int retries = 0;      // its attempts: failed runs counted against the limit
};

// Per environment: its gates' last runs, or why they could not be read.
struct GateRuns {
    std::string environment;
    std::vector<GateRunStatus> runs;
    std::string error;
};

// The newest Job of each gate among `jobs` (items of a JobList of one environment): by
// creationTimestamp, then, for Jobs created in the same second, by the lock hold and
// the unlock envgate labelled them with (envgate.dev/fence, envgate.dev/unlock), then
// by name; never by the list's order.
std::vector<GateRunStatus> last_gate_runs(const std::string& environment,
                                          const std::vector<nlohmann::json>& jobs, TimePoint now);

// Lists each environment's gate Jobs on its cluster (`kubeconfig` else KUBECONFIG;
// `context` else its kube_context), within `budget` for them all when one is given: an
// environment whose turn comes once it is spent has an error saying so.
std::vector<GateRuns> read_gate_runs(const Config& config, const std::vector<std::string>& names,
                                     Context& ctx,
                                     const std::optional<std::string>& kubeconfig = {},
                                     const std::optional<std::string>& context = {},
                                     std::optional<Duration> budget = std::nullopt);

}  // namespace envgate
