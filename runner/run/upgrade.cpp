#include "runner/run/upgrade.h"

#include <fmt/format.h>

#include <sstream>

#include "gates/gate.h"
#include "locks/describe.h"
#include "locks/identity.h"
#include "runner/exit_status.h"
#include "runner/files.h"
#include "runner/gate/gate_runner.h"

namespace envgate {
namespace {

constexpr const char* k_order[] = {
    "diff", "pre-migrations", "deploy", "post-migrations", "batched-migrations-check", "qa"};

bool is_gate(const std::string& name) {
    return gates::gate_from_name(name).has_value();
}

std::string section_of(const std::string& env, const std::string& step) {
    return "envgate_" + env + "_" + step;
}

}  // namespace

Upgrade::Upgrade(const Config& config, const Environment& env, Context& ctx, JobLog& log,
                 ProcessRunner& processes, UpgradeSettings settings)
    : m_config(config),
      m_env(env),
      m_ctx(ctx),
      m_log(log),
      m_processes(processes),
      m_settings(std::move(settings)) {
    m_report.environment = env.name;
    m_report.namespace_ = env.namespace_;
    m_report.pipeline_url = ctx.getenv("CI_PIPELINE_URL");
    m_report.job_url = ctx.getenv("CI_JOB_URL");
    m_report.lock.name = env.name;
}

StepReport& Upgrade::add_step(const std::string& name, const std::string& kind,
                              const std::string& file) {
    StepReport s;
    s.name = name;
    s.kind = kind;
    s.file = file;
    m_report.steps.push_back(std::move(s));
    return m_report.steps.back();
}

// Renders every gate's Job and connects to the cluster before any lock is touched.
int Upgrade::plan() {
    std::string pipeline = m_ctx.getenv("CI_PIPELINE_ID").value_or("local");
    for (const char* name : k_order) {
        Planned p;
        p.name = name;
        p.gate = is_gate(name);
        if (p.gate) {
            auto it = m_config.gates.find(name);
            if (it == m_config.gates.end()) {
                continue;
            }
            p.file = it->second.job;
            p.timeout = it->second.timeout.value_or(std::chrono::hours(1));
            auto text = read_file(p.file);
            if (!text) {
                m_ctx.err << "envgate run: " << text.status().message() << "\n";
                return k_exit_usage;
            }
            auto job = render_job_manifest(
                {*text, p.file, m_env.name, name, m_env.namespace_, pipeline}, m_ctx.getenv);
            if (!job) {
                m_ctx.err << "envgate run: " << job.status().message() << "\n";
                return k_exit_usage;
            }
            p.job = std::move(job).value();
        } else {
            auto it = m_config.steps.find(name);
            if (it == m_config.steps.end()) {
                continue;
            }
            p.command = it->second;
            p.file = m_config.path;
        }
        m_plan.push_back(std::move(p));
    }
    bool any_gate = std::any_of(m_plan.begin(), m_plan.end(), [](auto& p) { return p.gate; });
    if (any_gate) {
        auto session = open_kube_session({m_settings.kubeconfig, m_env.kube_context}, m_ctx, m_log);
        if (!session) {
            m_ctx.err << "envgate run: " << m_log.mask(session.status().message()) << "\n";
            return session.status().code() == Code::invalid ? k_exit_usage : k_exit_infra;
        }
        m_kube = std::move(session).value();
    }
    return k_exit_success;
}

void Upgrade::fill_lock_report(const locks::LockRecord& record) {
    LockReport& l = m_report.lock;
    l.state = record.state == locks::LockState::free   ? LockState::free
              : record.state == locks::LockState::held ? LockState::held
                                                       : LockState::failed;
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
    m_lock = lock_target(m_config, m_env.name, m_ctx, exit);
    if (!m_lock) {
        return exit;
    }
    m_me = locks::holder_from_env(m_ctx.getenv, m_settings.holder);
    m_lock->spec.step = "lock";
    m_lock->spec.wait = m_settings.no_wait ? locks::Wait::no : locks::Wait::yes;
    m_lock->spec.wait_timeout = m_settings.wait_timeout.value_or(m_lock->spec.wait_timeout);
    StepReport& step = add_step("lock", "lock", m_config.path);
    step.started = m_ctx.clock.now();
    m_manager = std::make_unique<locks::LockManager>(*m_lock->store, m_ctx.clock, m_ctx.out,
                                                     m_ctx.pending_signal,
                                                     lock_manager_options(m_ctx.clock));
    m_log.section_start(section_of(m_env.name, "lock"), "lock " + m_env.name + " for " + m_me.id);
    auto got = m_manager->acquire(m_lock->spec, m_me);
    m_log.section_end(section_of(m_env.name, "lock"));
    step.finished = m_ctx.clock.now();
    if (!got) {
        step.state = StepState::failed;
        step.reason = "LockStoreError";
        step.message = got.status().message();
        return exit_for(got.status());
    }
    fill_lock_report(got->record);
    if (got->end == locks::AcquireEnd::acquired) {
        step.state = StepState::passed;
        step.message = got->decision.message;
        m_holding = true;
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
        m_log.line(Tone::failed, "the environment is held after a failure; to unlock it:");
        m_log.command(*step.command);
    }
    if (got->end == locks::AcquireEnd::cancelled) {
        return exit_for_signal(got->signal);
    }
    return k_exit_lock_not_obtained;
}

void Upgrade::start_heartbeat() {
    int exit = 0;
    m_beat_lock = lock_target(m_config, m_env.name, m_ctx, exit);
    if (!m_beat_lock) {
        return;
    }
    m_beat_lock->spec = m_lock->spec;
    m_beat_manager = std::make_unique<locks::LockManager>(*m_beat_lock->store, m_ctx.clock,
                                                          m_ctx.err, [] { return 0; });
    auto every =
        std::chrono::duration_cast<std::chrono::microseconds>(m_lock->spec.lease_duration / 3);
    m_heartbeat = std::make_unique<locks::Heartbeat>(every, [this] {
        auto d = m_beat_manager->renew(m_beat_lock->spec, m_me);
        return d.is_ok() && d->outcome != locks::Outcome::refused;
    });
}

void Upgrade::renew_step(const std::string& step) {
    m_lock->spec.step = step;
    if (m_beat_lock) {
        m_beat_lock->spec.step = step;
    }
    (void)m_manager->renew(m_lock->spec, m_me);  // the step is informative; a miss is harmless
}

int Upgrade::run_shell_step(const Planned& p, StepReport& step) {
    std::map<std::string, std::string> env = {{"ENVGATE_ENV", m_env.name},
                                              {"ENVGATE_NAMESPACE", m_env.namespace_},
                                              {"ENVGATE_STEP", p.name}};
    if (m_settings.kubeconfig) {
        env["KUBECONFIG"] = *m_settings.kubeconfig;
    }
    m_log.line(Tone::plain, "$ " + p.command);
    auto exit = m_processes.run(
        {p.command, env, std::chrono::seconds(10)},
        [this](const std::string& line) { m_log.line(Tone::plain, line); }, m_ctx.pending_signal);
    step.attempts = 1;
    if (!exit) {
        step.state = StepState::failed;
        step.reason = "StepNotStarted";
        step.message = exit.status().message();
        return k_exit_failed;
    }
    step.exit_code = exit->exit_code;
    if (exit->cancelled_by != 0) {
        step.state = StepState::cancelled;
        step.reason = "Cancelled";
        step.message = fmt::format("step {} stopped by signal {}", p.name, exit->cancelled_by);
        return exit_for_signal(exit->cancelled_by);
    }
    if (exit->exit_code != 0) {
        step.state = StepState::failed;
        step.reason = "StepFailed";
        step.message = fmt::format("step {} exited {}: {}", p.name, exit->exit_code, p.command);
        m_log.line(Tone::failed, step.message);
        return k_exit_failed;
    }
    step.state = StepState::passed;
    step.message = "exited 0";
    m_log.line(Tone::succeeded, fmt::format("{}: exited 0", p.name));
    return k_exit_success;
}

int Upgrade::run_gate(const Planned& p, StepReport& step) {
    GateRunSettings settings;
    settings.gate = *gates::gate_from_name(p.name);
    settings.timeout = p.timeout;
    settings.poll_interval = m_settings.poll_interval;
    settings.on_cancel = m_settings.delete_jobs_on_cancel ? OnCancel::remove : OnCancel::leave;
    settings.instance = "envgate-" + m_me.id;
    settings.pending_signal = m_ctx.pending_signal;
    GateRunner runner(*m_kube->api, m_kube->connect, m_ctx.clock, m_log);
    GateResult result = runner.run(settings, *p.job);
    std::string file = step.file;
    step = std::move(result.step);
    step.file = file;
    return result.exit_code;
}

int Upgrade::run_qa(const Planned& p, StepReport& step) {
    int exit = k_exit_usage;
    auto qa = lock_target(m_config, "qa", m_ctx, exit);
    if (!qa) {
        step.state = StepState::failed;
        step.reason = "LockStoreError";
        step.message = "the global qa lock could not be opened";
        return exit;
    }
    qa->spec.step = "qa";
    qa->spec.wait_timeout = m_settings.wait_timeout.value_or(qa->spec.wait_timeout);
    locks::LockManager manager(*qa->store, m_ctx.clock, m_ctx.out, m_ctx.pending_signal,
                               lock_manager_options(m_ctx.clock));
    auto got = manager.acquire(qa->spec, m_me);
    if (!got || got->end != locks::AcquireEnd::acquired) {
        step.state = StepState::failed;
        step.reason = "QaLockNotObtained";
        step.message = got ? got->decision.message : got.status().message();
        if (got && got->end == locks::AcquireEnd::cancelled) {
            step.state = StepState::cancelled;
            return exit_for_signal(got->signal);
        }
        return got ? k_exit_lock_not_obtained : exit_for(got.status());
    }
    int code = run_shell_step(p, step);
    if (code == k_exit_success) {
        (void)manager.release("qa", m_me);
    } else {
        (void)manager.fail(qa->spec, m_me, {"qa", step.reason, step.message, m_ctx.clock.now()});
    }
    return code;
}

int Upgrade::run_planned(const Planned& p, StepReport& step) {
    if (p.gate) {
        return run_gate(p, step);
    }
    return p.name == "qa" ? run_qa(p, step) : run_shell_step(p, step);
}

int Upgrade::run_steps() {
    for (size_t i = 0; i < m_plan.size(); ++i) {
        const Planned& p = m_plan[i];
        add_step(p.name, p.gate ? "gate" : "step", p.file).started = m_ctx.clock.now();
        renew_step(p.name);
        m_log.section_start(section_of(m_env.name, p.name), p.name + " on " + m_env.name);
        int code = run_planned(p, m_report.steps.back());
        m_log.section_end(section_of(m_env.name, p.name));
        StepReport& done = m_report.steps.back();
        done.started = done.started.value_or(m_ctx.clock.now());
        done.finished = m_ctx.clock.now();
        if (code != k_exit_success) {
            std::string why = "not reached: " + p.name + " " + step_state_name(done.state);
            for (size_t j = i + 1; j < m_plan.size(); ++j) {
                add_step(m_plan[j].name, m_plan[j].gate ? "gate" : "step", m_plan[j].file)
                    .skipped_why = why;
            }
            return code;
        }
    }
    return k_exit_success;
}

void Upgrade::settle(int exit_code) {
    if (m_heartbeat) {
        m_heartbeat->stop();
    }
    if (!m_holding) {
        return;
    }
    const StepReport* failed = m_report.failed_step();
    Result<locks::Decision> d = Status(Code::failed, "not settled");
    if (exit_code == k_exit_success) {
        d = m_manager->release(m_env.name, m_me);
    } else {
        locks::Failure f{failed ? failed->name : "run", failed ? failed->reason : "Failed",
                         failed ? failed->message : "the upgrade failed", m_ctx.clock.now()};
        d = m_manager->fail(m_lock->spec, m_me, f);
    }
    if (!d) {
        m_log.line(Tone::failed, "the lock could not be updated: " + d.status().message());
    }
    auto current = m_lock->store->read(m_env.name);
    if (current) {
        fill_lock_report(current->record);
        if (current->record.state == locks::LockState::failed) {
            m_log.line(Tone::failed,
                       fmt::format("{} stays locked after the failure ({}); once it "
                                   "is safe, unlock it:",
                                   m_env.name, locks::describe_failure(current->record)));
            m_log.command(locks::unlock_command(current->record));
        }
    }
}

int Upgrade::run() {
    m_report.started = m_ctx.clock.now();
    int code = plan();
    if (code != k_exit_success) {
        m_report.lock.name.clear();  // not touched: its state is not this run's to report
    } else {
        code = lock();
    }
    if (code == k_exit_success) {
        code = run_steps();
    }
    settle(code);
    m_report.finished = m_ctx.clock.now();
    m_report.result = code == k_exit_success ? RunResult::success
                      : code >= 128          ? RunResult::cancelled
                                             : RunResult::failed;
    return code;
}

}  // namespace envgate
