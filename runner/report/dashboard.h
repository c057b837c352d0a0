// The dashboard of `envgate dashboard`: every environment's lock, its figures (those
// of `envgate status --output prometheus`) and its last run as plain data, and the pure
// renderer of the one self-contained HTML page (inline CSS, no scripts, no external
// resources) that shows them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "locks/lock_record.h"
#include "runner/base/vocab/time.h"
#include "runner/report/run_report.h"

namespace envgate {

// One sample of `envgate status --output prometheus` for the lock's environment.
struct Figure {
    std::string name;    // envgate_lock_queue_length, ...
    std::string labels;  // its labels other than environment: gate="pre-migrations"
    double value = 0;
    std::string help;
};

// One lock (an environment, or the global `qa` lock) and what last ran on it.
struct DashboardLock {
    locks::LockRecord lock;             // lock.name names the row
    std::string store;                  // "file store /srv/locks"
    std::string error;                  // set when the lock could not be read
    std::optional<RunReport> last_run;  // the newest run.json found for it
    std::string last_run_origin;        // where that run.json was read from
    std::vector<Figure> figures;        // one-hot families: only the sample that holds
};

struct DashboardModel {
    std::vector<DashboardLock> locks;  // in config order, `qa` last
    std::vector<std::string> notes;    // run.json files that could not be read, ...
    int refresh_seconds = 0;           // > 0: the page reloads itself that often
};

// The whole page: failed locks first (then unreadable ones, those whose last run
// failed, held, free; config order within each). Times are shown as RFC 3339 and as
// "4m10s ago" against `now`.
std::string render_dashboard(const DashboardModel& model, TimePoint now);

}  // namespace envgate
