// `envgate status [ENV] [--output text|json|prometheus] [--textfile FILE]`: every lock's
// state, holder and links, step, failure (with the unlock command), waiters and last
// transitions; as Prometheus metrics (runner/status_metrics.h) on stdout or written
// atomically to FILE for a node-exporter textfile collector.
// The JSON schema ("envgate.dev/status/v1") is documented in locks/README.md.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "locks/lock_record.h"
#include "runner/cmd_lock.h"
#include "runner/config.h"
#include "runner/context.h"

namespace envgate {

struct StatusOptions {
    std::optional<std::string> env;
    std::string output = "text";
    std::string textfile;  // --output prometheus: write here atomically instead of stdout
    std::string config_path = "envgate.yml";
    bool wide = false;                      // --wide: text output on long lines, never wrapped
    std::optional<std::string> kubeconfig;  // clusters of the Lease store and of the gates
    std::optional<std::string> context;     // --context: instead of each environment's
    std::optional<std::string> namespace_;  // -n: the Leases' namespace, instead of the config's
    std::string timeout = "5s";  // --timeout: for reading every lock (and gate), all together
};

int run_status(const StatusOptions& options, Context& ctx);

// One lock as status shows it; `error` is set when it could not be read, and
// `repair` too when the store answered but the record is not understood.
struct LockStatus {
    locks::LockRecord record;
    std::string store;
    std::string error;
    std::string repair;  // repair_instructions(): how to look at it and clear it
};

// The locks to show: `env` alone, else every environment of the config and `qa`.
std::vector<std::string> lock_names(const Config& config, const std::optional<std::string>& env);

// Reads lock `name` from the store the config gives it. Nullopt (and `exit` set) when
// there is no store to read from; a store that fails to answer is an `error`.
std::optional<LockStatus> read_lock_status(const Config& config, const std::string& name,
                                           Context& ctx, int& exit, const StoreOptions& store = {});

// Reads the locks `names` within one `budget` shared by all: each store read is given
// what is left of it (its retries and each request end with it), and a lock whose turn
// comes once it is spent is not read: its error says so. Nullopt (and `exit` set) when
// a lock has no store to read from.
std::optional<std::vector<LockStatus>> read_lock_statuses(const Config& config,
                                                          const std::vector<std::string>& names,
                                                          Context& ctx, int& exit,
                                                          StoreOptions store, Duration budget);

// Pure renderers. A lock that could not be read is "unknown" in each (JSON: its
// lock.state), with the error, never a state it may not be in. Text wraps long values (failures,
// unlock reasons) at spaces to `width` columns, continuing under themselves; `width` 0 keeps each
// on one line. Nothing is cut.
std::string render_status_text(const std::vector<LockStatus>& locks, TimePoint now,
                               std::size_t width = 0);

// The width to wrap status text to: $COLUMNS when it is a number, else the terminal's
// (ioctl TIOCGWINSZ on stdout), else 0 (not a terminal: no wrapping).
std::size_t terminal_width(
    const std::function<std::optional<std::string>(const std::string&)>& getenv);
nlohmann::json render_status_json(const std::vector<LockStatus>& locks, TimePoint now);

}  // namespace envgate
