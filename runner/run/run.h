// `envgate run`: the whole upgrade of one environment in one CI job, then the
// reports of spec/reports.md, written whatever the outcome.
#pragma once

#include <optional>
#include <string>

#include "runner/connect/context.h"
#include "runner/run/upgrade_choices.h"

namespace envgate {

// What `envgate run` and `envgate gate` both read from the command line: the
// environment, its config and report folder, how to reach its cluster, how often to
// look and to say so, what to do with a Job on cancel.
struct UpgradeCommandOptions {
    std::string environment;
    std::string config = "envgate.yml";
    std::string report_dir = "envgate-report";
    std::string on_cancel = "leave";
    std::optional<std::string> kubeconfig;
    std::optional<std::string> context;     // --context: instead of the environment's
    std::optional<std::string> namespace_;  // -n: the gates' namespace, instead of the config's
    std::string poll_interval = "5s";
    std::string progress_interval = "30s";
    std::string output = "text";  // json: the log on stderr, the run's report on stdout
};

struct RunOptions : UpgradeCommandOptions, UpgradeChoices {
    std::optional<std::string> wait_timeout;
    std::optional<std::string> gate_timeout;  // `envgate gate` through run: its --timeout
};

int run_run(const RunOptions& options, Context& ctx);

}  // namespace envgate
