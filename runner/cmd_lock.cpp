#include "runner/cmd_lock.h"

#include <algorithm>
#include <ostream>

#include "locks/describe.h"
#include "locks/identity.h"
#include "locks/record_json.h"
#include "runner/base/exit_code.h"
#include "runner/base/utf8.h"
#include "runner/config/config.h"
#include "runner/report/job_log.h"

namespace envgate {
namespace {

using namespace envgate::locks;

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
                        lock_manager_options(ctx.env));
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
