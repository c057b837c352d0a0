// `envgate status --output prometheus`: the locks as Prometheus metrics, in the text
// exposition format that is also valid OpenMetrics (gauges only, `# EOF` last), for a
// node-exporter textfile collector or a Pushgateway. Names follow the Prometheus naming
// conventions (envgate_ prefix, base units, _seconds); labels: environment, state, gate,
// result.
#pragma once

#include <string>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/connect/lock_status.h"
#include "runner/status_gates.h"

namespace envgate {

// Every lock's figures:
//   envgate_lock_state{environment,state}      1 for its state (free|held|failed), else 0
//   envgate_lock_holder_age_seconds{environment}  since the holder acquired it (held, failed)
//   envgate_lock_queue_length{environment}     waiters in its queue
//   envgate_lock_read_success{environment}     0 when the store could not be read
//   envgate_lock_transitions{environment}      Lease transitions so far (holder changes)
// And, with `gates` (environments of a config with gates), each gate's last run:
//   envgate_gate_last_run_result{environment,gate,result}  1 for running|succeeded|failed
//   envgate_gate_last_run_duration_seconds{environment,gate}
//   envgate_gate_last_run_retries{environment,gate}        its attempts (docs/attempts.md)
//   envgate_gate_last_run_start_timestamp_seconds{environment,gate}
//   envgate_gate_read_success{environment}                 0 when its Jobs could not be listed
struct MetricSample {
    std::vector<std::pair<std::string, std::string>> labels;  // environment first
    double value = 0;
};

struct MetricFamily {
    std::string name;
    std::string help;
    bool one_hot = false;  // 1 on the sample whose last label holds, 0 on the others
    std::vector<MetricSample> samples;
};

// The figures above as data, in the order they are written (the dashboard shows them).
std::vector<MetricFamily> status_metric_families(const std::vector<LockStatus>& locks,
                                                 const std::vector<GateRuns>& gates, TimePoint now);

// The families as text.
std::string render_status_prometheus(const std::vector<LockStatus>& locks,
                                     const std::vector<GateRuns>& gates, TimePoint now);

}  // namespace envgate
