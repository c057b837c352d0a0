// `envgate status [ENV] [--output text|json|prometheus] [--textfile FILE]`: every lock's
// state, holder and links, step, failure (with the unlock command), waiters and last
// transitions; as Prometheus metrics (runner/status_metrics.h) on stdout or written
// atomically to FILE for a node-exporter textfile collector.
// The JSON schema ("envgate.dev/status/v1") is documented in locks/README.md.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/config.h"
#include "runner/connect/context.h"
#include "runner/connect/lock_status.h"
#include "runner/status_render.h"

namespace envgate {

struct StatusOptions {
    std::optional<std::string> env;
    std::string output = "text";
    std::string textfile;  // --output prometheus: write here atomically instead of stdout
    std::string config_path = "envgate.yml";
    bool wide = false;                      // --wide: text output on long lines, never wrapped
    std::optional<std::string> kubeconfig;  // clusters of the Lease store and of the gates
    std::optional<std::string> context;     // --context: instead of each environment's
    std::optional<std::string> namespace_;  // -n: the Leases' namespace, instead of the config's
    std::string timeout = "5s";  // --timeout: for reading every lock (and gate), all together
};

int run_status(const StatusOptions& options, Context& ctx);

}  // namespace envgate
