// `envgate gate`: one gate in one CI job — launch the gate's migration Job (or
// re-attach to it) and block on it until it succeeds, fails or times out.
#pragma once

#include <optional>
#include <string>

#include "runner/base/context.h"

namespace envgate {

struct GateOptions {
    std::string environment;
    std::string gate;
    std::optional<std::string> manifest;  // default: the config's gates.<gate>.job
    std::string config = "envgate.yml";
    std::optional<std::string> namespace_;
    std::optional<std::string> timeout;
    std::string poll_interval = "5s";
    std::string progress_interval = "30s";
    std::string on_cancel = "leave";
    std::optional<std::string> kubeconfig;
    std::optional<std::string> context;
    std::string report_dir = "envgate-report";
    std::string output = "text";  // json: the log on stderr, the run's report on stdout
};

int run_gate(const GateOptions& options, Context& ctx);

}  // namespace envgate
