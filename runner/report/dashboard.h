// The dashboard of `envgate dashboard`: every environment's lock and its last run
// as plain data, and the pure renderer of the one self-contained HTML page (inline
// CSS, no scripts, no external resources) that shows them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gates/time.h"
#include "locks/lock_record.h"
#include "runner/report/run_report.h"

namespace envgate {

// One lock (an environment, or the global `qa` lock) and what last ran on it.
struct DashboardLock {
    locks::LockRecord lock;             // lock.name names the row
    std::string store;                  // "file store /srv/locks"
    std::string error;                  // set when the lock could not be read
    std::optional<RunReport> last_run;  // the newest run.json found for it
    std::string last_run_origin;        // where that run.json was read from
};

struct DashboardModel {
    std::vector<DashboardLock> locks;  // in config order, `qa` last
    std::vector<std::string> notes;    // run.json files that could not be read, ...
};

// The whole page. Times are shown as RFC 3339 and as "4m10s ago" against `now`.
std::string render_dashboard(const DashboardModel& model, TimePoint now);

}  // namespace envgate
