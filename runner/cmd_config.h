// `envgate config check`: validate envgate.yml and print the settings every
// environment ends up with (defaults applied). Reads the file and nothing else: a
// broken config never reaches a lock or a cluster.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "runner/config/config.h"
#include "runner/connect/context.h"

namespace envgate {

struct ConfigCheckOptions {
    std::string config_path = "envgate.yml";
    std::string output = "text";  // -o text (commented YAML) | json
};

// Exit 0 and the resolved config on `ctx.out`; exit 2 and every error (one per
// line, file:line:column: field: message) on `ctx.err`.
int run_config_check(const ConfigCheckOptions& options, Context& ctx);

// The resolved config as YAML in envgate.yml's shape: each environment with its
// effective namespace, lock settings and unlockers; paths as resolved. Pure.
std::string render_config(const Config& config);

// The same settings as JSON, with the run order (`order`: every gate and step a run
// takes, in order): render_config's YAML read back, whole numbers and true/false as
// JSON numbers and booleans, quoted strings kept strings.
nlohmann::json render_config_json(const Config& config);

}  // namespace envgate
