#include "runner/cmd_gate.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "locks/identity.h"
#include "runner/base/exit_code.h"
#include "runner/base/files.h"
#include "runner/config/config.h"
#include "runner/config/run_order.h"
#include "runner/connect/kube_session.h"
#include "runner/gating/gate_runner.h"
#include "runner/report/render.h"
#include "runner/run/run.h"

namespace envgate {
namespace {

struct Plan {
    gates::Gate gate = gates::Gate::pre_migrations;
    std::string manifest_path;
    std::string namespace_;
    std::optional<std::string> kube_context;
    Duration timeout = std::chrono::hours(1);
    Duration poll_interval = std::chrono::seconds(5);
    Duration progress_interval = std::chrono::seconds(30);
    OnCancel on_cancel = OnCancel::leave;
};

Result<Duration> duration_option(const std::string& flag, const std::string& text) {
    return parse_bounded_duration(flag, text, std::chrono::milliseconds(1));
}

// Options first, then the config (when present) fills what they left open.
Result<Plan> make_plan(const GateOptions& o) {
    Plan plan;
    if (o.on_cancel != "leave" && o.on_cancel != "delete") {
        return Status(Code::invalid, "--on-cancel \"" + o.on_cancel + "\": leave or delete");
    }
    plan.on_cancel = o.on_cancel == "delete" ? OnCancel::remove : OnCancel::leave;
    TRY_ASSIGN(plan.poll_interval, duration_option("--poll-interval", o.poll_interval));
    TRY_ASSIGN(plan.progress_interval, duration_option("--progress-interval", o.progress_interval));
    bool have_config = std::filesystem::exists(o.config);
    if (!have_config && !o.manifest) {
        return Status(Code::invalid, fmt::format("{} not found: give --manifest, or --config with "
                                                 "the gate's Job manifest",
                                                 o.config));
    }
    std::optional<Config> config;
    if (have_config) {
        TRY_ASSIGN(config, load_config(o.config));
    }
    TRY_ASSIGN(plan.gate, resolve_gate(o.gate, config ? &*config : nullptr));
    if (config) {
        const Environment* env = config->find_environment(o.environment);
        if (env == nullptr) {
            return Status(Code::invalid,
                          fmt::format("{}: no environment \"{}\"{}", o.config, o.environment,
                                      unknown_environment_hint(*config, o.environment)));
        }
        plan.namespace_ = env->namespace_;
        plan.kube_context = env->kube_context;
        if (auto it = config->gates.find(o.gate); it != config->gates.end()) {
            plan.manifest_path = it->second.job;
            plan.timeout = it->second.timeout.value_or(plan.timeout);
        }
    }
    if (o.manifest) {
        plan.manifest_path = *o.manifest;
    }
    if (plan.manifest_path.empty()) {
        return Status(Code::invalid, fmt::format("{}: gates.{} has no job manifest; give "
                                                 "--manifest",
                                                 o.config, o.gate));
    }
    if (o.namespace_) {
        plan.namespace_ = *o.namespace_;
    }
    if (o.context) {
        plan.kube_context = o.context;
    }
    if (o.timeout) {
        TRY_ASSIGN(plan.timeout, duration_option("--timeout", *o.timeout));
    }
    return plan;
}

std::string instance_name(Context& ctx) {
    if (auto job = ctx.getenv("CI_JOB_ID")) {
        return "gitlab-job-" + *job;
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return std::string("envgate@") + host;
}

// With envgate.yml the gate is one job of a pipeline that holds the environment's lock:
// it runs as `envgate run --only GATE`, which proves the hold before creating the Job,
// renews it while the gate blocks, stamps the fencing token on the Job, stops when the
// hold is lost and records a failure in the lock.
int run_fenced_gate(const GateOptions& o, Context& ctx) {
    // Only a gate: run --only would also take a step's name (deploy, qa).
    auto config = load_config_or_say(o.config, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    if (auto gate = resolve_gate(o.gate, &*config); !gate) {
        ctx.err << "envgate gate: " << gate.status().message() << "\n";
        return k_exit_usage;
    }
    RunOptions r;
    static_cast<UpgradeCommandOptions&>(r) = o;
    r.no_wait = true;
    r.only = o.gate;
    r.manifest = o.manifest;
    r.gate_timeout = o.timeout;
    r.may_take_lock = false;
    return run_run(r, ctx);
}

// Without envgate.yml (outside CI only) there is no lock to prove: the gate runs alone.
int run_unlocked_gate(const GateOptions& o, Context& ctx) {
    // -o json: stdout is the report alone (a script pipes it to jq), the log goes to stderr.
    const bool json = o.output == "json";
    JobLog log(json ? ctx.err : ctx.out, ctx.clock,
               log_settings_from(ctx.getenv, ::isatty(json ? 2 : 1) != 0));
    auto plan = make_plan(o);
    if (!plan) {
        ctx.err << "envgate gate: " << plan.status().message() << "\n";
        return k_exit_usage;
    }
    auto text = read_file(plan->manifest_path);
    if (!text) {
        ctx.err << "envgate gate: " << text.status().message() << "\n";
        return k_exit_usage;
    }
    std::string pipeline = ctx.getenv("CI_PIPELINE_ID").value_or("local");
    ManifestInput input{*text,  plan->manifest_path, o.environment,
                        o.gate, plan->namespace_,    pipeline};
    auto rendered = render_job_manifest(input, ctx.getenv);
    if (!rendered) {
        ctx.err << "envgate gate: " << rendered.status().message() << "\n";
        return k_exit_usage;
    }
    auto session =
        ctx.env.connect_kube({o.kubeconfig, plan->kube_context, std::nullopt}, ctx.getenv, log);
    if (!session) {
        ctx.err << "envgate gate: " << log.mask(session.status().message()) << "\n";
        return exit_for(session.status(), Stage::connect);
    }
    GateRunSettings settings;
    settings.gate = plan->gate;
    settings.timeout = plan->timeout;
    settings.poll_interval = plan->poll_interval;
    settings.progress_every = plan->progress_interval;
    settings.on_cancel = plan->on_cancel;
    settings.instance = instance_name(ctx);
    settings.cluster = describe_cluster(session->config);
    settings.pending_signal = ctx.pending_signal;
    settings.job_url = ctx.getenv("CI_JOB_URL").value_or("");

    RunReport report;
    report.environment = o.environment;
    report.namespace_ = rendered->namespace_;
    report.started = ctx.clock.now();
    report.pipeline_url = ctx.getenv("CI_PIPELINE_URL");
    report.job_url = ctx.getenv("CI_JOB_URL");
    report.environments_url = environments_page(ctx.getenv("CI_PROJECT_URL"));
    std::string section = "envgate_gate_" + o.environment + "_" + o.gate;
    log.section_start(section, fmt::format("envgate gate {} on {}: Job {}/{}", o.gate,
                                           o.environment, rendered->namespace_, rendered->name));
    GateRunner runner(*session->api, session->connect, ctx.clock, log);
    GateResult result;
    try {
        result = runner.run(settings, *rendered);
    } catch (const std::exception& e) {  // still write the reports that say so
        result.step.name = o.gate;
        result.step.kind = "gate";
        result.step.state = StepState::failed;
        result.step.reason = "InternalError";
        result.step.message = std::string("envgate stopped on an internal error: ") + e.what();
        result.exit_code = k_exit_failed;
        log.line(Tone::failed, result.step.message);
    }
    log.section_end(section);
    if (int sig = ctx.pending_signal();
        sig != 0 && result.exit_code != k_exit_success && result.exit_code < 128) {
        mark_cancelled(result.step, sig);
        result.exit_code = exit_for_signal(sig);
    }
    result.step.file = plan->manifest_path;
    report.steps.push_back(result.step);
    report.finished = ctx.clock.now();
    report.result = result.exit_code == k_exit_success ? RunResult::success
                    : result.exit_code >= 128          ? RunResult::cancelled
                                                       : RunResult::failed;
    const RunReport shown =
        masked(report, [&log](std::string t) { return log.mask(std::move(t)); });
    if (Status written = write_reports(o.report_dir, shown); !written.is_ok()) {
        ctx.err << "envgate gate: reports not written: " << written.message() << "\n";
    }
    if (json) {
        ctx.out << render_run_json(shown);
    }
    return result.exit_code;
}

}  // namespace

int run_gate(const GateOptions& o, Context& ctx) {
    if (std::filesystem::exists(o.config)) {
        return run_fenced_gate(o, ctx);
    }
    if (locks::in_ci(ctx.getenv)) {
        ctx.err << "envgate gate: " << o.config
                << " not found: in GitLab CI a gate runs under its environment's lock, which "
                   "envgate.yml configures (--config)\n";
        return k_exit_usage;
    }
    return run_unlocked_gate(o, ctx);
}

}  // namespace envgate
