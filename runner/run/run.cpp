#include "runner/run/run.h"

#include <unistd.h>

#include <filesystem>
#include <ostream>

#include "locks/identity.h"
#include "runner/base/exit_status.h"
#include "runner/base/vocab/dns_label.h"
#include "runner/config/config.h"
#include "runner/report/render.h"
#include "runner/run/upgrade.h"

namespace envgate {
namespace {

Result<UpgradeSettings> settings_from(const RunOptions& o) {
    UpgradeSettings s;
    static_cast<UpgradeChoices&>(s) = o;
    if (o.gate_timeout) {
        TRY_ASSIGN(s.gate_timeout, parse_bounded_duration("--timeout", *o.gate_timeout,
                                                          std::chrono::milliseconds(1)));
    }
    s.kubeconfig = o.kubeconfig;
    if (o.on_cancel != "leave" && o.on_cancel != "delete") {
        return Status(Code::invalid, "--on-cancel \"" + o.on_cancel + "\": leave or delete");
    }
    s.delete_jobs_on_cancel = o.on_cancel == "delete";
    if (o.wait_timeout) {
        TRY_ASSIGN(s.wait_timeout,
                   parse_bounded_duration("--wait-timeout", *o.wait_timeout, Duration{0}));
    }
    TRY_ASSIGN(Duration poll, parse_bounded_duration("--poll-interval", o.poll_interval,
                                                     std::chrono::milliseconds(1)));
    s.poll_interval = poll;
    TRY_ASSIGN(s.progress_interval,
               parse_bounded_duration("--progress-interval", o.progress_interval,
                                      std::chrono::milliseconds(1)));
    return s;
}

}  // namespace

int run_run(const RunOptions& o, Context& ctx) {
    auto settings = settings_from(o);
    if (!settings) {
        ctx.err << "envgate run: " << settings.status().message() << "\n";
        return k_exit_usage;
    }
    if (Status own = locks::check_holder_override(ctx.getenv, o.holder); !own.is_ok()) {
        ctx.err << "envgate run: " << own.message() << "\n";
        return k_exit_usage;
    }
    auto config = load_config_or_say(o.config, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    const Environment* env = config->find_environment(o.environment);
    if (env == nullptr) {
        ctx.err << "envgate run: " << o.config << ": no environment \"" << o.environment << "\""
                << unknown_environment_hint(*config, o.environment) << "\n";
        return k_exit_usage;
    }
    Environment target = *env;  // --context and -n as kubectl takes them
    if (o.context) {
        target.kube_context = o.context;
    }
    if (o.namespace_) {
        if (!is_dns1123_label(*o.namespace_)) {
            ctx.err << "envgate run: -n \"" << *o.namespace_
                    << "\": not a Kubernetes namespace name (a DNS-1123 label)\n";
            return k_exit_usage;
        }
        target.namespace_ = *o.namespace_;
    }
    // -o json: stdout is the report alone (a script pipes it to jq); the log, the lock's
    // messages and the steps' output go to stderr.
    const bool json = o.output == "json";
    Context run_ctx{ctx.in, json ? ctx.err : ctx.out, ctx.err, ctx.env, ctx.getenv};
    JobLog log(run_ctx.out, ctx.clock, log_settings_from(ctx.getenv, ::isatty(json ? 2 : 1) != 0));
    Upgrade upgrade(*config, target, run_ctx, log, ctx.env.processes(), *settings);
    std::string section = "envgate_run_" + env->name;
    log.section_start(section, "envgate run " + env->name);
    int code = upgrade.run();
    log.section_end(section);
    const RunReport shown =
        masked(upgrade.report(), [&log](std::string t) { return log.mask(std::move(t)); });
    Status written = write_reports(o.report_dir, shown);
    if (!written.is_ok()) {
        ctx.err << "envgate run: reports not written: " << written.message() << "\n";
    } else {
        run_ctx.out << "reports: " << std::filesystem::absolute(o.report_dir).string()
                    << " (junit.xml, summary.md, summary.html, envgate.env, annotations.json, "
                       "run.json)\n";
    }
    run_ctx.out << "envgate run " << env->name << ": " << run_result_name(upgrade.report().result)
                << " (exit " << code << ")\n";
    if (json) {
        ctx.out << render_run_json(shown);
    }
    return code;
}

}  // namespace envgate
