#include "runner/run/upgrade.h"

#include <fmt/format.h>

#include <sstream>

#include "gates/gate.h"
#include "locks/describe.h"
#include "locks/identity.h"
#include "runner/base/exit_code.h"
#include "runner/base/files.h"
#include "runner/config/run_order.h"
#include "runner/gating/gate_runner.h"
#include "runner/run/access_review.h"
#include "runner/run/reruns.h"

namespace envgate {
namespace {}  // namespace

std::string upgrade_section(const std::string& env, const std::string& step) {
    return "envgate_" + env + "_" + step;
}

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
    m_report.environments_url = environments_page(ctx.getenv("CI_PROJECT_URL"));
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
    const std::vector<RunEntry> order = run_order(m_config);
    std::vector<RunEntry> entries = order;
    if (const auto& only = m_settings.only; only && *only != "diff") {
        bool named =
            std::any_of(order.begin(), order.end(), [&](auto& e) { return e.name == *only; });
        if (!named && m_settings.manifest) {
            entries.push_back({*only, EntryKind::gate, false});
        } else if (!named) {
            m_ctx.err << "envgate run: --only \"" << *only << "\": " << m_config.path
                      << " has no such gate or step; the run order is " << describe_run_order(order)
                      << "\n";
            return k_exit_usage;
        }
    }
    for (const RunEntry& entry : entries) {
        const std::string& name = entry.name;
        if (m_settings.only && name != *m_settings.only) {
            continue;
        }
        Planned p;
        p.name = name;
        p.gate = entry.kind == EntryKind::gate;
        if (p.gate) {
            auto gate = m_config.gates.find(name);
            p.file =
                m_settings.manifest.value_or(gate == m_config.gates.end() ? "" : gate->second.job);
            p.timeout = m_settings.gate_timeout.value_or(
                gate == m_config.gates.end()
                    ? std::chrono::hours(1)
                    : gate->second.timeout.value_or(std::chrono::hours(1)));
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
            p.command = m_config.steps.at(name).run;
            p.file = m_config.path;
        }
        m_plan.push_back(std::move(p));
    }
    bool any_gate = std::any_of(m_plan.begin(), m_plan.end(), [](auto& p) { return p.gate; });
    if (any_gate) {
        auto session = m_ctx.env.connect_kube(
            {m_settings.kubeconfig, m_env.kube_context, std::nullopt}, m_ctx.getenv, m_log);
        if (!session) {
            m_ctx.err << "envgate run: " << m_log.mask(session.status().message()) << "\n";
            return exit_for(session.status(), Stage::connect);
        }
        m_kube = std::move(session).value();
    }
    return preflight();
}

// What the API would say to each gate's Job, asked before the lock is taken (a server
// side dry run), and whether the credentials may do what the run will do: a manifest it
// rejects, missing RBAC, a failing credential plugin, a wrong CA or an unreachable API
// end the run here, with nothing touched, instead of holding the environment after the
// lock was taken.
// An infrastructure error names the cluster it could not reach or that refused: the
// kubeconfig context and server (on-call's laptop may point elsewhere).
std::string Upgrade::cluster_of(const Status& status) const {
    return is_infrastructure(status.code()) ? " (" + describe_cluster(m_kube->config) + ")" : "";
}

int Upgrade::preflight() {
    auto first_gate = std::find_if(m_plan.begin(), m_plan.end(), [](auto& p) { return p.gate; });
    if (first_gate == m_plan.end()) {
        return k_exit_success;
    }
    if (int code = preflight_access(first_gate->job->namespace_); code != k_exit_success) {
        return code;
    }
    for (const Planned& p : m_plan) {
        if (!p.gate) {
            continue;
        }
        Status admitted = m_kube->api->create_dry_run(kube::jobs(p.job->namespace_), p.job->object);
        if (admitted.is_ok() || admitted.code() == Code::already_exists) {
            continue;  // an existing Job of the same spec is re-attached to
        }
        m_ctx.err << "envgate run: preflight, before the lock: " << p.name << " (" << p.file
                  << "): " << m_log.mask(admitted.message()) << cluster_of(admitted)
                  << "; nothing was touched\n";
        return exit_for(admitted, Stage::preflight);
    }
    return k_exit_success;
}

int Upgrade::preflight_access(const std::string& gate_namespace) {
    std::optional<std::string> lease_namespace;
    if (m_env.lock.store == LockStoreKind::kubernetes) {
        lease_namespace = m_env.lock.namespace_;
    }
    auto denied = denied_needs(*m_kube->api, run_access_needs(gate_namespace, lease_namespace));
    if (!denied) {
        m_ctx.err << "envgate run: preflight, before the lock: access review: "
                  << m_log.mask(denied.status().message()) << cluster_of(denied.status())
                  << "; nothing was touched\n";
        return exit_for(denied.status(), Stage::preflight);
    }
    std::string missing;
    for (const AccessNeed& need : *denied) {
        if (!need.required) {
            m_log.line(Tone::retrying, "warning: preflight: the credentials may not " +
                                           describe_need(need) +
                                           "; the gate's Events will not be recorded");
            continue;
        }
        missing += (missing.empty() ? "" : ", ") + describe_need(need);
    }
    if (missing.empty()) {
        return k_exit_success;
    }
    m_ctx.err << "envgate run: preflight, before the lock: the credentials may not " << missing
              << " (RBAC); nothing was touched. Check with: kubectl auth can-i --list -n "
              << gate_namespace << "\n";
    return k_exit_usage;
}

int Upgrade::run_shell_step(const Planned& p, StepReport& step) {
    std::map<std::string, std::string> env = {{"ENVGATE_ENV", m_env.name},
                                              {"ENVGATE_NAMESPACE", m_env.namespace_},
                                              {"ENVGATE_STEP", p.name}};
    if (m_settings.kubeconfig) {
        env["KUBECONFIG"] = *m_settings.kubeconfig;
    }
    m_log.line(Tone::plain, "$ " + p.command);
    // A lost lock stops the step soon enough that it is gone before the lease ends.
    Duration grace = std::chrono::seconds(10);
    if (m_lock) {
        grace = std::min(grace, m_lock->spec.lease_duration / 6);
    }
    StepCommand command;
    command.command = p.command;
    command.env = env;
    command.grace = grace;
    if (m_fence) {
        // Envgate stopped (SIGSTOP, a paused runner) stops proving the lock: its step is
        // killed within lease / 6, long before the lease can run out for anyone else.
        command.watchdog = m_lock->spec.lease_duration / 6;
        command.holding = [this] { return !m_fence->doubt(); };
    }
    auto exit = m_processes.run(
        command, [this](const std::string& line) { m_log.output(line); }, stop_signal());
    if (!exit) {
        step.attempts = 1;  // a step runs once: a failed run is its one attempt
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
        step.attempts = 1;
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
    settings.gate = gates::custom_gate(p.name);
    settings.timeout = p.timeout;
    settings.poll_interval = m_settings.poll_interval;
    settings.progress_every = m_settings.progress_interval;
    settings.on_cancel = m_settings.delete_jobs_on_cancel ? OnCancel::remove : OnCancel::leave;
    settings.instance = "envgate-" + m_me.id;
    settings.cluster = describe_cluster(m_kube->config);
    settings.pending_signal = stop_signal();
    settings.job_url = m_report.job_url.value_or("");
    RenderedJob job = *p.job;
    if (m_unlock) {  // a person unlocked the environment: try again, with a new Job
        job = after_unlock(std::move(job), *m_unlock);
        m_log.line(Tone::plain, fmt::format("{}: {}", p.name, after_unlock_text(*m_unlock)));
    }
    if (m_fence) {  // a later holder's Jobs carry a higher token; see GateRunner::launch
        job.object["metadata"]["labels"][k_label_fence] = std::to_string(m_fence->token());
    }
    GateRunner runner(*m_kube->api, m_kube->connect, m_ctx.clock, m_log);
    GateResult result = runner.run(settings, job);
    m_changed = m_changed || result.job_exists;
    std::string file = step.file;
    step = std::move(result.step);
    step.file = file;
    return result.exit_code;
}

int Upgrade::run_qa(const Planned& p, StepReport& step) {
    int exit = k_exit_usage;
    auto qa = lock_target(m_config, "qa", m_ctx, exit,
                          {m_settings.kubeconfig, std::nullopt, std::nullopt, std::nullopt});
    if (!qa) {
        step.state = StepState::failed;
        step.reason = "LockStoreError";
        step.message = "the global qa lock could not be opened";
        return exit;
    }
    qa->spec.step = "qa";
    qa->spec.wait_timeout = m_settings.wait_timeout.value_or(qa->spec.wait_timeout);
    locks::LockManager manager(*qa->store, m_ctx.clock, m_ctx.out, m_ctx.pending_signal,
                               lock_manager_options(m_ctx.env));
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
    // diff only reads; deploy, qa and the steps a config adds may change things
    m_changed = m_changed || p.name != "diff";
    return p.name == "qa" ? run_qa(p, step) : run_shell_step(p, step);
}

int Upgrade::run_steps() {
    for (size_t i = 0; i < m_plan.size(); ++i) {
        const Planned& p = m_plan[i];
        add_step(p.name, p.gate ? "gate" : "step", p.file).started = m_ctx.clock.now();
        int code = k_exit_success;
        if (Status held = still_holding(p.name); !held.is_ok()) {
            (void)stopped_for_lock(m_report.steps.back(), code);  // never started
        } else {
            m_log.section_start(upgrade_section(m_env.name, p.name), p.name + " on " + m_env.name);
            code = run_planned(p, m_report.steps.back());
            (void)stopped_for_lock(m_report.steps.back(), code);
            m_log.section_end(upgrade_section(m_env.name, p.name));
        }
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

void Upgrade::record_internal_error(const std::string& what) {
    StepReport* current = nullptr;
    for (StepReport& s : m_report.steps) {
        if (s.started && !s.finished) {
            current = &s;
        }
    }
    if (current == nullptr) {
        current = &add_step("run", "step", m_config.path);
        current->started = m_ctx.clock.now();
    }
    current->finished = m_ctx.clock.now();
    current->state = StepState::failed;
    current->reason = "InternalError";
    current->message = "envgate stopped on an internal error: " + what;
    m_log.line(Tone::failed, current->message);
}

int Upgrade::guarded(int (Upgrade::*stage)()) {
    try {
        return (this->*stage)();
    } catch (const std::exception& e) {  // no input may crash a run that may hold the lock
        record_internal_error(e.what());
    } catch (...) {
        record_internal_error("unknown exception");
    }
    return k_exit_failed;
}

int Upgrade::run() {
    m_report.started = m_ctx.clock.now();
    int code = guarded(&Upgrade::plan);
    if (code != k_exit_success) {
        m_report.lock.name.clear();  // not touched: its state is not this run's to report
    } else {
        code = guarded(&Upgrade::lock);
    }
    if (code == k_exit_success) {
        code = guarded(&Upgrade::run_steps);
    }
    try {
        code = settle(code);
    } catch (const std::exception& e) {
        m_report.lock.update_error = std::string("the lock could not be updated: ") + e.what();
        m_log.line(Tone::failed, *m_report.lock.update_error);
        code = code == k_exit_success ? k_exit_failed : code;
    }
    if (int sig = m_ctx.pending_signal(); sig != 0 && code != k_exit_success && code < 128) {
        for (StepReport& s : m_report.steps) {  // an API call or plugin stopped by it
            if (s.state == StepState::failed) {
                mark_cancelled(s, sig);
            }
        }
        code = exit_for_signal(sig);
    }
    m_report.finished = m_ctx.clock.now();
    m_report.result = code == k_exit_success ? RunResult::success
                      : code >= 128          ? RunResult::cancelled
                                             : RunResult::failed;
    return code;
}

}  // namespace envgate
