// `envgate dashboard --out DIR [--config envgate.yml] [--runs DIR...] [--refresh S]`:
// gathers every lock of the config, the figures `envgate status --output prometheus`
// gives (its gates' last runs read from the cluster when the config has gates) and the
// newest run.json of each environment found in the report dirs, and writes the static
// page DIR/index.html (report/dashboard.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/connect/context.h"
#include "runner/report/dashboard.h"

namespace envgate {

struct DashboardOptions {
    std::string out_dir;
    std::string config_path = "envgate.yml";
    // Report dirs: each holds a run.json, or sub-folders that hold one.
    std::vector<std::string> runs;
    int refresh_seconds = 0;                // > 0: the page reloads itself that often
    std::optional<std::string> kubeconfig;  // the kubernetes lock store's cluster
    std::optional<std::string> context;     // --context: instead of each environment's
    std::optional<std::string> namespace_;  // -n: the Leases' namespace, instead of the config's
    std::string output = "text";            // json: stdout gets the page's content as one document
    std::string timeout = "5s";             // --timeout: for reading every lock and gate
};

int run_dashboard(const DashboardOptions& options, Context& ctx);

// The run.json files in `dir` and its direct sub-folders, sorted.
std::vector<std::string> find_run_files(const std::string& dir);

}  // namespace envgate
