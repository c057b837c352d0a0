#include "runner/cmd_lock.h"

#include <algorithm>
#include <ostream>

#include "locks/describe.h"
#include "locks/file_store.h"
#include "locks/identity.h"
#include "locks/kubernetes_lease_store.h"
#include "locks/record_json.h"
#include "runner/cmd_unlock.h"
#include "runner/config.h"
#include "runner/exit_status.h"
#include "runner/kube_session.h"
#include "runner/real_clock.h"
#include "runner/report/job_log.h"
#include "runner/utf8.h"

namespace envgate {
namespace {

constexpr Duration k_max_waiter_ttl = std::chrono::seconds(60);

using namespace envgate::locks;

locks::OnFailure to_locks(FailurePolicy p) {
    return p == FailurePolicy::hold ? locks::OnFailure::hold : locks::OnFailure::release;
}

locks::QueueOrder to_locks(envgate::QueueOrder o) {
    switch (o) {
        case envgate::QueueOrder::newest_first:
            return locks::QueueOrder::newest_first;
        case envgate::QueueOrder::unordered:
            return locks::QueueOrder::unordered;
        default:
            return locks::QueueOrder::oldest_first;
    }
}

std::optional<Duration> duration_option(const std::optional<std::string>& text, const char* flag,
                                        Duration fallback, Duration min, Context& ctx) {
    if (!text) {
        return fallback;
    }
    auto d = parse_bounded_duration(flag, *text, min);
    if (!d) {
        ctx.err << "envgate lock: " << d.status().message() << "\n";
        return std::nullopt;
    }
    return *d;
}

// The kubernetes store: Leases in the lock's namespace on the cluster of the
// environment's kube_context (KUBECONFIG, ~/.kube/config or in-cluster, as kubectl).
// The store owns the API client.
Result<std::unique_ptr<LockStore>> kubernetes_store(const LockSettings& s, const Environment* env,
                                                    Context& ctx, const StoreOptions& options) {
    JobLog log(ctx.err, ctx.clock, log_settings_from(ctx.getenv, false));
    std::optional<std::string> context = env ? env->kube_context : std::nullopt;
    KubeTarget target{options.kubeconfig, options.context ? options.context : context,
                      options.retry_budget};
    TRY_ASSIGN(KubeSession session, open_kube_session(target, ctx, log));
    std::shared_ptr<kube::KubeApi> api = std::move(session.api);
    return std::unique_ptr<LockStore>(
        std::make_unique<KubernetesLeaseStore>(api, options.namespace_.value_or(s.namespace_)));
}

// Prints why a lock command failed; for a record that cannot be read, also how to
// look at it and set it aside (envgate never overwrites what it does not understand).
int print_error(const Status& status, const LockTarget& t, const char* verb, Context& ctx) {
    ctx.err << "envgate lock " << verb << ": " << status.message() << "\n";
    if (status.code() == Code::invalid) {
        auto current = t.store->read(t.spec.name);
        if (!current.is_ok() && current.status().code() == Code::invalid) {
            ctx.err << t.repair;
        }
    }
    return exit_for(status);
}

int acquire(const LockOptions& o, LockTarget& t, Context& ctx) {
    auto hold_for =
        duration_option(o.hold_for, "--hold-for", t.hold_for, std::chrono::seconds(1), ctx);
    auto wait =
        duration_option(o.wait_timeout, "--wait-timeout", t.spec.wait_timeout, Duration{0}, ctx);
    if (!hold_for || !wait) {
        return k_exit_usage;
    }
    t.spec.lease_duration = *hold_for;
    t.spec.wait_timeout = *wait;
    t.spec.wait = o.no_wait ? Wait::no : Wait::yes;
    t.spec.step = o.step;
    Holder me = holder_from_env(ctx.getenv, o.holder);
    LockManager manager(*t.store, ctx.clock, ctx.err, ctx.pending_signal,
                        lock_manager_options(ctx.clock));
    auto got = manager.acquire(t.spec, me);
    if (!got.is_ok()) {
        return print_error(got.status(), t, "acquire", ctx);
    }
    if (got->end == AcquireEnd::cancelled) {
        return exit_for_signal(got->signal);
    }
    if (got->end != AcquireEnd::acquired) {
        return k_exit_lock_not_obtained;
    }
    print_lock_result(ctx, t, "acquire",
                      "lock " + t.spec.name + " " + outcome_name(got->decision.outcome) + " by " +
                          me.id + ": " + got->decision.message + " (lease " +
                          format_duration(t.spec.lease_duration) + ")",
                      o.output == "json");
    if (int signal = ctx.pending_signal()) {
        // Cancelled right after taking the lock: the environment's state is unknown.
        Failure f{o.step, "Cancelled", "ended by signal " + std::to_string(signal), {}};
        (void)manager.fail(t.spec, me, f);
        return exit_for_signal(signal);
    }
    return k_exit_success;
}

int report(const Result<Decision>& d, const LockTarget& t, const char* verb, Context& ctx,
           int refused_exit, bool json) {
    if (!d.is_ok()) {
        return print_error(d.status(), t, verb, ctx);
    }
    if (d->outcome != Outcome::refused) {
        print_lock_result(ctx, t, verb, "lock " + t.spec.name + ": " + d->message, json);
        return k_exit_success;
    }
    ctx.err << "envgate lock " << verb << ": lock " << t.spec.name << " "
            << refusal_name(d->refusal) << ": " << d->message << "\n";
    if (d->refusal == Refusal::lock_failed) {
        auto current = t.store->read(t.spec.name);
        if (current.is_ok()) {
            ctx.err << "  failure: " << describe_failure(current->record)
                    << "\n  to unlock: " << unlock_command(current->record) << "\n";
        }
    }
    return refused_exit;
}

}  // namespace

locks::ManagerOptions lock_manager_options(Clock& clock) {
    locks::ManagerOptions options;
    options.watch_store = dynamic_cast<RealClock*>(&clock) != nullptr;
    return options;
}

int exit_for(const Status& status) {
    switch (status.code()) {
        case Code::invalid:
        case Code::not_found:
            return k_exit_usage;
        default:
            return k_exit_infra;
    }
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
    auto config = load_config(config_path);
    if (!config.is_ok()) {
        ctx.err << config.status().message() << "\n";
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
    if (s.store == LockStoreKind::kubernetes) {
        auto store = kubernetes_store(s, env, ctx, options);
        if (!store.is_ok()) {
            ctx.err << "envgate: lock " << name
                    << ": kubernetes lock store: " << store.status().message() << "\n";
            exit = exit_for(store.status());
            return std::nullopt;
        }
        t.store = std::move(store.value());
    } else {
        t.store = std::make_unique<FileStore>(s.path);
    }
    t.spec.name = name;
    t.spec.on_failure = to_locks(s.on_failure);
    t.spec.order = to_locks(s.order);
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

int run_lock(const LockOptions& o, Context& ctx) {
    int exit = k_exit_usage;
    if (o.output != "text" && o.output != "json") {
        ctx.err << "envgate lock: --output must be text or json\n";
        return k_exit_usage;
    }
    if (Status own = check_holder_override(ctx.getenv, o.holder); !own.is_ok()) {
        ctx.err << "envgate lock " << o.action << ": " << own.message() << "\n";
        return k_exit_usage;
    }
    auto target = resolve_lock(o.config_path, o.env, ctx, exit,
                               {o.kubeconfig, std::nullopt, o.context, o.namespace_});
    if (!target) {
        return exit;
    }
    LockTarget& t = *target;
    const bool json = o.output == "json";
    Holder me = holder_from_env(ctx.getenv, o.holder);
    LockManager manager(*t.store, ctx.clock, ctx.err, ctx.pending_signal);
    if (o.action == "acquire") {
        return acquire(o, t, ctx);
    }
    if (o.action == "release") {
        return report(manager.release(t.spec.name, me), t, "release", ctx, k_exit_failed, json);
    }
    if (o.action == "fail") {
        Failure f{o.step, o.reason.empty() ? "Failed" : o.reason, o.message, {}};
        return report(manager.fail(t.spec, me, f), t, "fail", ctx, k_exit_failed, json);
    }
    Request verify;
    verify.op = Op::verify;
    verify.who = me;
    return report(manager.apply(t.spec.name, verify), t, "verify", ctx, k_exit_lock_not_obtained,
                  json);
}

}  // namespace envgate
