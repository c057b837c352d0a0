#include <fmt/format.h>

#include "locks/describe.h"
#include "locks/identity.h"
#include "locks/policy.h"
#include "runner/base/exit_code.h"
#include "runner/config/run_order.h"
#include "runner/run/reruns.h"
#include "runner/run/upgrade.h"

// The lock side of Upgrade: taking the lock, keeping it (heartbeat), the fencing
// check every mutating action passes (still_holding) and what the run leaves it in.
namespace envgate {
namespace {

// After `lead`, the way to unlock: in a pipeline its manual unlock job first (on-call
// needs no lock store or cluster credentials for it), then the CLI.
void say_unlock(JobLog& log, const std::string& lead, const std::string& env,
                const std::optional<std::string>& pipeline_url, const std::string& command) {
    log.line(Tone::failed, lead);
    if (pipeline_url && !pipeline_url->empty()) {
        log.line(Tone::failed,
                 fmt::format("run the manual job envgate-unlock-{} of this pipeline ({}) with "
                             "the variable ENVGATE_UNLOCK_REASON (why it is safe); or, with the "
                             "lock store's and the cluster's credentials:",
                             env, *pipeline_url));
    }
    log.command(command);
}

}  // namespace

void Upgrade::fill_lock_report(const locks::LockRecord& record) {
    LockReport& l = m_report.lock;
    l.state = record.state;
    l.holder = record.holder ? record.holder->id : "";
    l.holder_pipeline_url =
        record.holder ? std::optional(record.holder->pipeline_url) : std::nullopt;
    l.holder_job_url = record.holder ? std::optional(record.holder->job_url) : std::nullopt;
    l.unlock_command = record.state == locks::LockState::failed
                           ? std::optional(locks::unlock_command(record))
                           : std::nullopt;
}

int Upgrade::lock() {
    int exit = k_exit_usage;
    m_lock = lock_target(m_config, m_env.name, m_ctx, exit, store_options());
    if (!m_lock) {
        return exit;
    }
    m_me = locks::holder_from_env(m_ctx.getenv, m_settings.holder);
    m_lock->spec.step = "lock";
    m_lock->spec.wait = m_settings.no_wait ? locks::Wait::no : locks::Wait::yes;
    m_lock->spec.wait_timeout = m_settings.wait_timeout.value_or(m_lock->spec.wait_timeout);
    StepReport& step = add_step("lock", "lock", m_config.path);
    step.started = m_ctx.clock.now();
    if (m_settings.only && !first_of_pipeline()) {
        // A later job of the pipeline: it re-enters the pipeline's lock, never waits for
        // it and never takes it from scratch (its earlier jobs' work may be gone).
        m_lock->spec.wait = locks::Wait::no;
        m_changed = true;  // the earlier jobs changed the environment
        auto current = m_lock->store->read(m_env.name);
        if (!current) {
            step.finished = m_ctx.clock.now();
            step.state = StepState::failed;
            step.reason = "LockStoreError";
            step.message = current.status().message();
            m_log.line(Tone::failed, "lock " + m_env.name + ": " + m_log.mask(step.message));
            return exit_for(current.status());
        }
        if (auto why = reentry_refusal(current->record)) {
            step.finished = m_ctx.clock.now();
            step.state = StepState::failed;
            step.reason = current->record.state == locks::LockState::failed
                              ? "LockHeldAfterFailure"
                              : "LockNotHeldByPipeline";
            step.message = *why;
            fill_lock_report(current->record);
            m_log.line(Tone::failed, fmt::format("{} of {} not run: {}", *m_settings.only,
                                                 m_env.name, m_log.mask(*why)));
            if (current->record.state == locks::LockState::failed) {
                step.command = locks::unlock_command(current->record);
                say_unlock(m_log, "to unlock it:", m_env.name, m_report.pipeline_url,
                           *step.command);
            }
            return k_exit_lock_not_obtained;
        }
    }
    m_manager =
        std::make_unique<locks::LockManager>(*m_lock->store, m_ctx.clock, m_ctx.out,
                                             m_ctx.pending_signal, lock_manager_options(m_ctx.env));
    m_log.section_start(upgrade_section(m_env.name, "lock"),
                        "lock " + m_env.name + " for " + m_me.id);
    auto got = m_manager->acquire(m_lock->spec, m_me);
    m_log.section_end(upgrade_section(m_env.name, "lock"));
    step.finished = m_ctx.clock.now();
    if (!got) {
        step.state = StepState::failed;
        step.reason = "LockStoreError";
        step.message = got.status().message();
        m_log.line(Tone::failed, "lock " + m_env.name + ": " + m_log.mask(step.message));
        return exit_for(got.status());
    }
    fill_lock_report(got->record);
    if (got->end == locks::AcquireEnd::acquired) {
        step.state = StepState::passed;
        step.message = got->decision.message;
        m_holding = true;
        m_unlock = latest_unlock(got->record);
        // renewed_at: our clock's time when the write that took it was decided.
        m_fence =
            std::make_unique<LockFence>(m_ctx.clock, m_lock->spec.lease_duration,
                                        got->record.lease_transitions, got->record.renewed_at);
        start_heartbeat();
        return k_exit_success;
    }
    step.state =
        got->end == locks::AcquireEnd::cancelled ? StepState::cancelled : StepState::failed;
    step.reason =
        got->record.state == locks::LockState::failed ? "LockHeldAfterFailure" : "LockNotObtained";
    step.message = got->decision.message;
    if (got->record.state == locks::LockState::failed) {
        step.message += " Failure: " + locks::describe_failure(got->record);
        step.command = locks::unlock_command(got->record);
        say_unlock(m_log, "the environment is held after a failure; to unlock it:", m_env.name,
                   m_report.pipeline_url, *step.command);
    }
    if (got->end == locks::AcquireEnd::cancelled) {
        return exit_for_signal(got->signal);
    }
    return k_exit_lock_not_obtained;
}

bool Upgrade::first_of_pipeline() const {
    if (!m_settings.only) {
        return true;
    }
    if (!m_settings.may_take_lock) {
        return false;
    }
    if (*m_settings.only == "diff") {
        return true;
    }
    auto order = run_order(m_config);
    return !order.empty() && order.front().name == *m_settings.only;
}

std::optional<std::string> Upgrade::reentry_refusal(const locks::LockRecord& record) const {
    if (record.state == locks::LockState::held && record.held_by(m_me.id)) {
        return std::nullopt;
    }
    if (record.state == locks::LockState::failed) {
        return fmt::format("the lock is held after a failure ({}); only a manual unlock frees it",
                           locks::describe_failure(record));
    }
    if (record.state == locks::LockState::held) {
        return fmt::format(
            "the lock is held by {}, not by this pipeline ({}): this pipeline's "
            "hold ran out and was taken over, so its remaining jobs must not run; "
            "start a new pipeline",
            record.holder ? record.holder->id : "another holder", m_me.id);
    }
    // Free. A person who unlocked this pipeline's failure lets its failed job be retried.
    if (locks::unlocked_from(record, m_me.id)) {
        return std::nullopt;
    }
    return fmt::format(
        "the lock is free: this pipeline ({}) does not hold it (its earlier jobs "
        "did not take it, or it was released since); run the pipeline from its "
        "diff job, which takes it",
        m_me.id);
}

int Upgrade::keep_for_next_job(int exit_code) {
    locks::LockSpec spec = m_lock->spec;
    spec.lease_duration = m_env.lock.hold_for;
    spec.step = *m_settings.only;
    auto d = m_manager->renew(spec, m_me);
    int code = exit_code;
    if (!d) {
        m_report.lock.update_error =
            fmt::format("the lock could not be kept for the next job: {}", d.status().message());
        code = exit_for(d.status());
    } else if (d->outcome == locks::Outcome::refused) {
        m_report.lock.update_error =
            fmt::format("the lock could not be kept for the next job: {}", d->message);
        code = k_exit_failed;
    }
    if (m_report.lock.update_error) {
        m_log.line(Tone::failed, *m_report.lock.update_error);
    } else {
        m_log.line(
            Tone::plain,
            fmt::format("{} stays locked by {} for this pipeline's next job (for {} at "
                        "most; `envgate lock release {}` ends it)",
                        m_env.name, m_me.id, format_duration(spec.lease_duration), m_env.name));
    }
    if (auto current = m_lock->store->read(m_env.name)) {
        fill_lock_report(current->record);
    }
    return code;
}

StoreOptions Upgrade::store_options() const {
    StoreOptions o;
    o.kubeconfig = m_settings.kubeconfig;
    o.context = m_env.kube_context;  // `run --context` moves the Leases with the gates
    // A renewal gives up within a third of the lease: its answer (or its failure) comes
    // before the renew deadline, and stopping the heartbeat never waits longer.
    auto lease = m_env.lock.lease_duration;
    o.retry_budget = lease / 3;
    return o;
}

void Upgrade::start_heartbeat() {
    int exit = 0;
    m_beat_lock = lock_target(m_config, m_env.name, m_ctx, exit, store_options());
    if (!m_beat_lock) {
        return;
    }
    m_beat_lock->spec = m_lock->spec;
    m_beat_manager = std::make_unique<locks::LockManager>(*m_beat_lock->store, m_ctx.clock,
                                                          m_ctx.err, [] { return 0; });
    auto every =
        std::chrono::duration_cast<std::chrono::microseconds>(m_lock->spec.lease_duration / 3);
    m_heartbeat = std::make_unique<locks::Heartbeat>(every, [this] {
        locks::LockSpec spec;
        {
            std::lock_guard<std::mutex> lock(m_beat_mutex);
            spec = m_beat_lock->spec;
        }
        TimePoint sent = m_ctx.clock.now();
        auto d = m_beat_manager->renew(spec, m_me);
        return judge_renewal(d, sent);
    });
}

bool Upgrade::judge_renewal(const Result<locks::Decision>& d, TimePoint sent) {
    if (d.is_ok() && d->outcome != locks::Outcome::refused) {
        m_fence->proven(sent);
        return true;
    }
    if (d.is_ok()) {
        m_fence->lost(d->message);
        return false;
    }
    return true;  // the store did not answer: the renew deadline decides
}

Status Upgrade::still_holding(const std::string& step) {
    if (!m_fence) {
        return Status::ok();
    }
    if (auto why = m_fence->doubt()) {
        return Status(Code::failed, *why);
    }
    m_lock->spec.step = step;
    {
        std::lock_guard<std::mutex> lock(m_beat_mutex);
        if (m_beat_lock) {
            m_beat_lock->spec.step = step;
        }
    }
    TimePoint sent = m_ctx.clock.now();
    (void)judge_renewal(m_manager->renew(m_lock->spec, m_me), sent);
    if (auto why = m_fence->doubt()) {
        return Status(Code::failed, *why);
    }
    return Status::ok();
}

std::function<int()> Upgrade::stop_signal() {
    return [this] {
        if (int sig = m_ctx.pending_signal(); sig != 0) {
            return sig;
        }
        return m_fence && m_fence->doubt() ? k_lock_lost_signal : 0;
    };
}

bool Upgrade::stopped_for_lock(StepReport& step, int& code) {
    if (m_ctx.pending_signal() != 0 || !m_fence) {
        return false;
    }
    auto why = m_fence->doubt();
    if (!why) {
        return false;
    }
    m_lock_lost = *why;
    step.state = StepState::failed;
    step.reason = "LockLost";
    step.message = fmt::format("{} stopped: {}", step.name, *why);
    m_log.line(Tone::failed, step.message);
    code = k_exit_failed;
    return true;
}

int Upgrade::settle(int exit_code) {
    if (m_heartbeat) {
        m_heartbeat->stop();
    }
    if (!m_holding) {
        return exit_code;
    }
    if (m_settings.only && exit_code == k_exit_success && !m_lock_lost) {
        return keep_for_next_job(exit_code);
    }
    if (m_lock_lost) {
        // Someone else may hold it now: neither released nor failed by this run.
        m_report.lock.update_error = "the lock was left as it is: " + *m_lock_lost;
        auto current = m_lock->store->read(m_env.name);
        if (current) {
            fill_lock_report(current->record);
        }
        return exit_code == k_exit_success ? k_exit_failed : exit_code;
    }
    const StepReport* failed = m_report.failed_step();
    Result<locks::Decision> d = Status(Code::failed, "not settled");
    // Hold only what is broken: an infrastructure error before any Job or changing step
    // left nothing to inspect. (A Job whose create was sent but not answered is found
    // by the rerun, same name and spec, and re-attached to.)
    bool nothing_changed = exit_code == k_exit_infra && !m_changed;
    if (exit_code == k_exit_success || nothing_changed) {
        d = m_manager->release(m_env.name, m_me);
    } else {
        locks::Failure f{failed ? failed->name : "run", failed ? failed->reason : "Failed",
                         failed ? failed->message : "the upgrade failed", m_ctx.clock.now()};
        d = m_manager->fail(m_lock->spec, m_me, f);
    }
    const char* what =
        exit_code == k_exit_success || nothing_changed ? "released" : "marked failed";
    int code = exit_code;
    if (!d) {
        m_report.lock.update_error =
            fmt::format("the lock could not be {}: {}", what, d.status().message());
        code = exit_code == k_exit_success ? exit_for(d.status()) : exit_code;
    } else if (d->outcome == locks::Outcome::refused) {
        m_report.lock.update_error = fmt::format("the lock was not {}: {}", what, d->message);
        code = exit_code == k_exit_success ? k_exit_failed : exit_code;
    }
    if (m_report.lock.update_error) {
        m_log.line(Tone::failed, *m_report.lock.update_error);
    } else if (nothing_changed) {
        m_log.line(Tone::failing, fmt::format("{} was released, not held: the error came before "
                                              "anything changed (no Job was created, no deploy "
                                              "step ran); rerun once the cluster answers",
                                              m_env.name));
    }
    auto current = m_lock->store->read(m_env.name);
    if (current) {
        fill_lock_report(current->record);
        if (current->record.state == locks::LockState::failed) {
            // This run's failure was printed just above: its message is not printed again.
            locks::LockRecord said = current->record;
            if (said.failure && failed && said.failure->message == failed->message) {
                said.failure->message.clear();
            }
            say_unlock(m_log,
                       fmt::format("{} stays locked after the failure ({}); once it "
                                   "is safe, unlock it:",
                                   m_env.name, locks::describe_failure(said)),
                       m_env.name, m_report.pipeline_url, locks::unlock_command(current->record));
        }
    }
    return code;
}

}  // namespace envgate
