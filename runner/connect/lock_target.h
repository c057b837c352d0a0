// A lock as envgate.yml configures it, reached from a command: its spec, its store
// (the file store, or Leases on the environment's cluster) and who may unlock it.
// `lock`, `unlock`, `status`, `dashboard` and `run` all resolve a lock here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "locks/lock_manager.h"
#include "runner/connect/context.h"

namespace envgate {

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

// How a command's LockManager waits: woken by the store's watch when `env` runs on real
// time, re-reading on its Clock otherwise (a fake Env's clock).
locks::ManagerOptions lock_manager_options(const Env& env);

struct Config;
// What to run when the record of lock `name` cannot be read: the command that shows
// it and the one that clears it by hand (envgate never overwrites what it cannot read).
std::string repair_instructions(const Config& config, const std::string& name);

}  // namespace envgate
