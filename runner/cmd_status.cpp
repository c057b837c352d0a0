#include "runner/cmd_status.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <ostream>
#include <sstream>

#include "locks/describe.h"
#include "locks/record_json.h"
#include "runner/base/exit_status.h"
#include "runner/base/files.h"
#include "runner/base/utf8.h"
#include "runner/config/config.h"
#include "runner/status_metrics.h"
#include "runner/status_read.h"

namespace envgate {

int run_status(const StatusOptions& o, Context& ctx) {
    if (o.output != "text" && o.output != "json" && o.output != "prometheus") {
        ctx.err << "envgate status: --output must be text, json or prometheus\n";
        return k_exit_usage;
    }
    if (!o.textfile.empty() && o.output != "prometheus") {
        ctx.err << "envgate status: --textfile needs --output prometheus\n";
        return k_exit_usage;
    }
    auto config = load_config_or_say(o.config_path, ctx.err);
    if (!config) {
        return k_exit_usage;
    }
    auto budget = parse_bounded_duration("--timeout", o.timeout, std::chrono::milliseconds(100));
    if (!budget) {
        ctx.err << "envgate status: " << budget.status().message() << "\n";
        return k_exit_usage;
    }
    int exit = k_exit_usage;
    std::optional<GateSource> gate_source;
    if (o.output == "prometheus") {
        gate_source = GateSource{o.kubeconfig, o.context};
    }
    auto read =
        read_status(*config, lock_names(*config, o.env), ctx, exit,
                    {o.kubeconfig, std::nullopt, o.context, o.namespace_}, gate_source, *budget);
    if (!read) {
        return exit;
    }
    const std::vector<LockStatus>& out = read->locks;
    const std::vector<GateRuns>& gates = read->gates;
    const TimePoint now = read->now;
    if (o.output == "prometheus" && !o.textfile.empty()) {
        Status written = write_file_atomic(o.textfile, render_status_prometheus(out, gates, now));
        if (!written.is_ok()) {
            ctx.err << "envgate status: " << written.message() << "\n";
            return k_exit_infra;
        }
    } else if (o.output == "prometheus") {
        ctx.out << render_status_prometheus(out, gates, now);
    } else if (o.output == "json") {
        ctx.out << dump_json(render_status_json(out, now), 2) << "\n";
    } else {
        ctx.out << render_status_text(out, now, o.wide ? 0 : terminal_width(ctx.getenv));
    }
    for (const auto& s : out) {
        if (!s.error.empty()) {
            return k_exit_infra;
        }
    }
    return k_exit_success;
}

}  // namespace envgate
