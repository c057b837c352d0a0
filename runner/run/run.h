// `envgate run`: the whole upgrade of one environment in one CI job, then the
// reports of spec/reports.md, written whatever the outcome.
#pragma once

#include <optional>
#include <string>

#include "runner/connect/context.h"

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

struct RunOptions : UpgradeCommandOptions {
    std::optional<std::string> holder;
    std::optional<std::string> wait_timeout;
    bool no_wait = false;
    // --only NAME: one gate or step of the upgrade, as one job of a pipeline that holds
    // the lock across its jobs (see UpgradeSettings::only).
    std::optional<std::string> only;
    // `envgate gate` through run: the gate's manifest and timeout, and no lock taken.
    std::optional<std::string> manifest;
    std::optional<std::string> gate_timeout;
    bool may_take_lock = true;
};

int run_run(const RunOptions& options, Context& ctx);

}  // namespace envgate
