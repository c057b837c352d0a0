#include "runner/connect/lock_target.h"

#include <algorithm>
#include <ostream>

#include "locks/describe.h"
#include "locks/record_json.h"
#include "runner/base/exit_code.h"
#include "runner/base/utf8.h"
#include "runner/config/config.h"
#include "runner/report/job_log.h"

namespace envgate {
namespace {

constexpr Duration k_max_waiter_ttl = std::chrono::seconds(60);

using namespace envgate::locks;

// The lock's store, as the Env opens it: the file store, or Leases in the lock's
// namespace on the cluster of the environment's kube_context.
Result<std::unique_ptr<LockStore>> open_store(const LockSettings& s, const Environment* env,
                                              Context& ctx, const StoreOptions& options) {
    JobLog log(ctx.err, ctx.clock, log_settings_from(ctx.getenv, false));
    std::optional<std::string> context = env ? env->kube_context : std::nullopt;
    LockStoreTarget target;
    target.kind = s.store;
    target.path = s.path;
    target.namespace_ = options.namespace_.value_or(s.namespace_);
    target.kube = {options.kubeconfig, options.context ? options.context : context,
                   options.retry_budget};
    return ctx.env.open_lock_store(target, ctx.getenv, log);
}

std::string kubectl_prefix(const LockSettings& s, const Environment* env) {
    std::string cmd = "kubectl";
    if (env != nullptr && env->kube_context) {
        cmd += " --context " + locks::shell_quote(*env->kube_context);
    }
    return cmd + " -n " + locks::shell_quote(s.namespace_);
}

}  // namespace

locks::ManagerOptions lock_manager_options(const Env& env) {
    locks::ManagerOptions options;
    options.watch_store = env.real_time();
    return options;
}

void print_lock_result(Context& ctx, const LockTarget& t, const std::string& action,
                       const std::string& text, bool json) {
    if (!json) {
        ctx.out << text << "\n";
        return;
    }
    auto current = t.store->read(t.spec.name);
    nlohmann::json out = {
        {"action", action},
        {"lock", t.spec.name},
        {"message", text},
        {"record", current.is_ok() ? locks::to_json(current->record) : nlohmann::json(nullptr)}};
    ctx.out << dump_json(out, 2) << "\n";
}

std::optional<LockTarget> resolve_lock(const std::string& config_path, const std::string& name,
                                       Context& ctx, int& exit, const StoreOptions& store) {
    auto config = load_config_or_say(config_path, ctx.err);
    if (!config) {
        exit = k_exit_usage;
        return std::nullopt;
    }
    return lock_target(*config, name, ctx, exit, store);
}

std::optional<LockTarget> lock_target(const Config& config, const std::string& name, Context& ctx,
                                      int& exit, const StoreOptions& options) {
    const Config* c = &config;
    const Environment* env = c->find_environment(name);
    if (env == nullptr && name != "qa") {
        ctx.err << "envgate: no environment \"" << name << "\" in " << c->path
                << unknown_environment_hint(*c, name) << " (the global QA lock is \"qa\")\n";
        exit = k_exit_usage;
        return std::nullopt;
    }
    const LockSettings& s = env ? env->lock : c->default_lock;
    LockTarget t;
    auto store = open_store(s, env, ctx, options);
    if (!store.is_ok()) {
        ctx.err << "envgate: lock " << name << ": "
                << (s.store == LockStoreKind::kubernetes ? "kubernetes" : "file")
                << " lock store: " << store.status().message() << "\n";
        exit = exit_for(store.status());
        return std::nullopt;
    }
    t.store = std::move(store.value());
    t.spec.name = name;
    t.spec.on_failure = s.on_failure;
    t.spec.order = s.order;
    t.spec.lease_duration = s.lease_duration;
    t.spec.wait_timeout = s.wait_timeout;
    // A waiter renews its own queue record every third of this (3 writes a minute at
    // most); a killed one is skipped after it (locks/README.md), so it blocks a free
    // lock for 60 s at most, and never delays a hand-off past the holder's lease.
    t.spec.waiter_ttl = std::min<Duration>(s.lease_duration, k_max_waiter_ttl);
    t.unlockers = env ? env->unlockers : c->default_unlockers;
    t.hold_for = s.hold_for;
    t.local_unlock = s.local_unlock;
    t.repair = repair_instructions(config, name);
    return t;
}

std::string repair_instructions(const Config& config, const std::string& name) {
    const Environment* env = config.find_environment(name);
    const LockSettings& s = env ? env->lock : config.default_lock;
    std::string show;
    std::string clear;
    std::string note;
    if (s.store == LockStoreKind::kubernetes) {
        const std::string kubectl = kubectl_prefix(s, env);
        const std::string lease = std::string("envgate-") + name;
        show = kubectl + " get lease " + lease + " -o yaml";
        clear = show + " > " + lease + ".yaml\n    " + kubectl + " delete lease " + lease;
        note =
            "  If another program owns this Lease, leave it, and give envgate another\n"
            "  lock namespace (lock.namespace in envgate.yml).\n";
    } else {
        const std::string file = locks::shell_quote(s.path + "/" + name + ".json");
        show = "cat " + file;
        clear = "mv " + file + " " + locks::shell_quote(s.path + "/" + name + ".json.unreadable");
    }
    return "  envgate never overwrites a lock record it cannot read. Look at it:\n    " + show +
           "\n  If no pipeline is working on " + name +
           ", set it aside (keeping a copy); the lock is\n  then free, and the next acquire "
           "writes a new record:\n    " +
           clear + "\n" + note;
}

}  // namespace envgate
