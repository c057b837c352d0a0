// `envgate gate`: one gate in one CI job — launch the gate's migration Job (or
// re-attach to it) and block on it until it succeeds, fails or times out.
#pragma once

#include <optional>
#include <string>

#include "runner/connect/context.h"
#include "runner/run/run.h"

namespace envgate {

struct GateOptions : UpgradeCommandOptions {
    std::string gate;
    std::optional<std::string> manifest;  // default: the config's gates.<gate>.job
    std::optional<std::string> timeout;
};

int run_gate(const GateOptions& options, Context& ctx);

}  // namespace envgate
