// `envgate status --output prometheus`: the locks as Prometheus metrics, in the text
// exposition format that is also valid OpenMetrics (gauges only, `# EOF` last), for a
// node-exporter textfile collector or a Pushgateway. Names follow the Prometheus naming
// conventions (envgate_ prefix, base units, _seconds); labels: environment, state.
#pragma once

#include <string>
#include <vector>

#include "gates/status.h"
#include "gates/time.h"
#include "runner/cmd_status.h"

namespace envgate {

// Every lock's figures:
//   envgate_lock_state{environment,state}      1 for its state (free|held|failed), else 0
//   envgate_lock_holder_age_seconds{environment}  since the holder acquired it (held, failed)
//   envgate_lock_queue_length{environment}     waiters in its queue
//   envgate_lock_read_success{environment}     0 when the store could not be read
//   envgate_lock_transitions{environment}      Lease transitions so far (holder changes)
std::string render_status_prometheus(const std::vector<LockStatus>& locks, TimePoint now);

}  // namespace envgate
