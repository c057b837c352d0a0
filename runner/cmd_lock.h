// `envgate lock acquire|release|fail|verify ENV`: the environment lock across the
// jobs of one pipeline. Finding a lock's settings and store from envgate.yml, which
// unlock, status and run share, is runner/connect/lock_target.h.
#pragma once

#include <optional>
#include <string>

#include "runner/connect/context.h"
#include "runner/connect/lock_target.h"

namespace envgate {

struct LockOptions {
    std::string action;  // acquire | release | fail | verify
    std::string env;     // an environment, or `qa` (the global QA lock)
    std::string config_path = "envgate.yml";
    std::optional<std::string> holder;        // --holder: replaces the holder id
    std::optional<std::string> hold_for;      // acquire: lease between jobs
    std::optional<std::string> wait_timeout;  // acquire
    bool no_wait = false;                     // acquire
    std::string step;                         // acquire: the step; fail: the failed step
    std::string reason;                       // fail
    std::string message;                      // fail
    std::optional<std::string> kubeconfig;    // the kubernetes store's cluster
    std::optional<std::string> context;       // --context: instead of the environment's
    std::optional<std::string> namespace_;    // -n: the Leases' namespace, instead of the config's
    std::string output = "text";              // -o text | json
};

int run_lock(const LockOptions& options, Context& ctx);

}  // namespace envgate
