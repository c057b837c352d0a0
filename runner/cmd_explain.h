// `envgate explain`: the gate verdict for saved Kubernetes objects, offline, as JSON.
#pragma once

#include <optional>
#include <string>

#include "runner/connect/context.h"

namespace envgate {

struct ExplainOptions {
    std::string gate;
    std::string job_path;
    bool job_deleted = false;  // evaluate as if the Job was deleted (needs --memory)
    std::optional<std::string> pods_path;
    std::optional<std::string> memory_path;
    std::optional<std::string> now;  // RFC 3339; defaults to the clock
    // envgate.yml, for the gates it adds; nullopt: ./envgate.yml when it exists. Only
    // read when --gate is not a built-in gate.
    std::optional<std::string> config_path;
};

int run_explain(const ExplainOptions& options, Context& ctx);

}  // namespace envgate
