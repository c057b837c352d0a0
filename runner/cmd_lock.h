// `envgate lock acquire|release|fail|verify ENV`: the environment lock across the
// jobs of one pipeline, plus what unlock and status share: finding a lock's
// settings and store from envgate.yml.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "locks/lock_manager.h"
#include "runner/context.h"

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

// A lock as envgate.yml configures it: its spec, its store and who may unlock it.
struct LockTarget {
    locks::LockSpec spec;
    std::unique_ptr<locks::LockStore> store;
    std::vector<std::string> unlockers;
    bool local_unlock = false;  // lock.local_unlock: unlock outside GitLab CI allowed
    Duration hold_for{};
    std::string repair;  // how to look at and set aside a record that cannot be read
};

// Loads `config_path` and resolves lock `name` (an environment or `qa`, which uses
// `defaults`). On failure prints to ctx.err and returns the exit status in `exit`.
struct Config;
// How a command reaches a kubernetes lock store.
struct StoreOptions {
    std::optional<std::string> kubeconfig;  // --kubeconfig (else KUBECONFIG, as kubectl)
    std::optional<Duration> retry_budget;   // see KubeTarget
    std::optional<std::string> context;     // --context (else the environment's kube_context)
    std::optional<std::string> namespace_;  // -n: the Leases' namespace (else the config's)
};

std::optional<LockTarget> resolve_lock(const std::string& config_path, const std::string& name,
                                       Context& ctx, int& exit, const StoreOptions& store = {});

// What a lock command that changed or checked lock `t` prints: `text` as is, or with
// `json` an object {"action", "lock", "message", "record"} (the record read back, in
// the locks/README.md schema, null when it cannot be read).
void print_lock_result(Context& ctx, const LockTarget& t, const std::string& action,
                       const std::string& text, bool json);
// The same for an already loaded config.
std::optional<LockTarget> lock_target(const Config& config, const std::string& name, Context& ctx,
                                      int& exit, const StoreOptions& store = {});

// The exit status for a Status that ended a lock command (2 for bad input, else 4).
int exit_for(const Status& status);

// How a command's LockManager waits: woken by the store's watch on a real clock,
// re-reading on the Clock otherwise (tests with a FakeClock).
locks::ManagerOptions lock_manager_options(Clock& clock);

}  // namespace envgate
