// What `envgate gate` and `envgate run` tell a gate's loop (GateRunner), and what it
// gives back: the gate, its bounds, its cancellation, and its step of the run report.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "gates/gate.h"
#include "runner/base/vocab/time.h"
#include "runner/report/run_report.h"

namespace envgate {

enum class OnCancel { leave, remove };

struct GateRunSettings {
    gates::Gate gate = gates::Gate::pre_migrations;
    Duration timeout = std::chrono::hours(1);
    Duration poll_interval = std::chrono::seconds(5);    // watch fallback
    Duration resync = std::chrono::seconds(30);          // re-read even without events
    Duration progress_every = std::chrono::seconds(30);  // heartbeat line when quiet
    OnCancel on_cancel = OnCancel::leave;
    std::string instance = "envgate";  // reportingInstance of events
    std::string cluster;               // "kubeconfig context C, server S": named by API errors
    // This CI job (CI_JOB_URL; empty: not known): a later run of the gate names it as
    // the one whose reports keep the log tails of the failed runs this run listed.
    std::string job_url;
    std::function<int()> pending_signal = [] { return 0; };
};

struct GateResult {
    int exit_code = 0;        // runner/exit_status.h
    StepReport step;          // for the reports
    bool job_exists = false;  // the gate's Job was created (or re-attached to)
};

}  // namespace envgate
