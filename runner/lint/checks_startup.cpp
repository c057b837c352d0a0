// migrate-on-start-flag and stretched-startup: the application told to migrate on
// boot, and probe or rollout budgets stretched far past a normal start.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "runner/lint/check.h"
#include "runner/lint/checks.h"

namespace envgate::lint {
namespace {

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
}

bool contains_any(const std::string& s, std::initializer_list<std::string_view> parts) {
    return std::any_of(parts.begin(), parts.end(),
                       [&](std::string_view p) { return s.find(p) != std::string::npos; });
}

// RUN_MIGRATIONS, MIGRATE_ON_START, DB_MIGRATE, AUTO_MIGRATE, SPRING_FLYWAY_ENABLED, ...
// but not MIGRATIONS_PATH or SKIP_MIGRATIONS.
bool migrate_flag_name(const std::string& name) {
    std::string n = upper(name);
    if (contains_any(n,
                     {"SKIP", "DISABLE", "NO_", "PATH", "DIR", "TABLE", "LOCK", "TIMEOUT", "FOLDER",
                      "SOURCE", "FILE", "URL", "USER", "PASSWORD", "VERSION", "LOG"})) {
        return false;
    }
    return n.find("MIGRAT") != std::string::npos || n == "SPRING_FLYWAY_ENABLED" ||
           n == "SPRING_LIQUIBASE_ENABLED" || n == "FLYWAY_ENABLED" || n == "LIQUIBASE_ENABLED";
}

bool truthy(const std::string& v) {
    std::string u = upper(v);
    return u == "TRUE" || u == "1" || u == "YES" || u == "ON" || u == "Y" || u == "ALWAYS" ||
           u == "ENABLED";
}

void run_flag(const Workload& w, const Objects&, const LintSettings&, Emitter& out) {
    if (!w.long_running()) {
        return;
    }
    for (const Container& c : w.containers) {
        for (const EnvVar& e : c.env) {
            if (e.value && truthy(*e.value) && migrate_flag_name(e.name)) {
                out.report(e.loc,
                           fmt::format("container \"{}\" sets {}={}: the application migrates "
                                       "the database on every boot of every replica",
                                       c.name, e.name, *e.value),
                           c.name + "|" + e.name);
            }
        }
    }
}

std::string duration(std::int64_t seconds) {
    std::string out;
    if (seconds >= 3600) {
        out += fmt::format("{}h", seconds / 3600);
    }
    if (seconds % 3600 >= 60) {
        out += fmt::format("{}m", seconds % 3600 / 60);
    }
    if (seconds % 60 != 0 || out.empty()) {
        out += fmt::format("{}s", seconds % 60);
    }
    return out;
}

void check_probe(const Container& c, const Probe& p, const LintSettings& s, Emitter& out) {
    std::int64_t delay = p.initial_delay.value.value_or(0);
    if (p.kind == "startupProbe") {
        std::int64_t threshold = p.failure_threshold.value.value_or(3);
        std::int64_t period = p.period.value.value_or(10);
        std::int64_t budget = delay + threshold * period;
        if (budget > s.max_startup_seconds) {
            const Location& at = p.failure_threshold.value ? p.failure_threshold.loc : p.loc;
            out.report(at,
                       fmt::format("container \"{}\": startup may take {} before its startupProbe "
                                   "gives up (initialDelaySeconds {} + failureThreshold {} x "
                                   "periodSeconds {}; the limit is {})",
                                   c.name, duration(budget), delay, threshold, period,
                                   duration(s.max_startup_seconds)),
                       c.name + "|startupProbe");
        }
        return;
    }
    if (delay > s.max_initial_delay_seconds) {
        out.report(p.initial_delay.loc,
                   fmt::format("container \"{}\": {} waits {} before its first check "
                               "(initialDelaySeconds {}; the limit is {})",
                               c.name, p.kind, duration(delay), delay,
                               duration(s.max_initial_delay_seconds)),
                   c.name + "|" + p.kind);
    }
}

void run_stretched(const Workload& w, const Objects&, const LintSettings& s, Emitter& out) {
    if (!w.long_running()) {
        return;
    }
    if (auto d = w.progress_deadline.value; d && *d > s.max_progress_deadline_seconds) {
        out.report(w.progress_deadline.loc,
                   fmt::format("a rollout may take {} before it counts as stuck "
                               "(progressDeadlineSeconds {}; the limit is {})",
                               duration(*d), *d, duration(s.max_progress_deadline_seconds)),
                   "progressDeadlineSeconds");
    }
    for (const Container& c : w.containers) {
        for (const Probe& p : c.probes) {
            check_probe(c, p, s, out);
        }
    }
}

}  // namespace

const Check k_migrate_on_start_flag = {
    "migrate-on-start-flag",
    Severity::warning,
    true,
    "An environment variable tells the application to migrate the database when it boots",
    "A migrate-on-boot switch puts the schema change on the start-up path of every replica, "
    "hidden from the manifest's commands",
    "Turn the switch off in the service and run the same migration once, as a Job before the "
    "rollout (an envgate gate)",
    "A container of a long-running workload sets a variable such as `RUN_MIGRATIONS=true`, "
    "`MIGRATE_ON_START=1`, `DB_MIGRATE=true`, `AUTO_MIGRATE=yes` or "
    "`SPRING_FLYWAY_ENABLED=true` to a true value. Names that point somewhere "
    "(`MIGRATIONS_PATH`) or switch migrating off (`SKIP_MIGRATIONS`) are not reported.\n\n"
    "The flag is the same pattern as a migration in the start command, one step less "
    "visible: the framework migrates inside the process the orchestrator treats as an "
    "ordinary instance. \"The service migrates itself on start-up\" feels like automation "
    "while tables are small and there is one replica; it is a loan that falls due during a "
    "tense release, as hung rollouts, restart loops, readiness timeouts and a hot database.",
    run_flag,
};

const Check k_stretched_startup = {
    "stretched-startup",
    Severity::warning,
    true,
    "Start-up budgets stretched beyond sane bounds: startupProbe, initialDelaySeconds, "
    "progressDeadlineSeconds",
    "Long probe and rollout budgets do not make a slow start-up safe; they hide the work "
    "(often a migration) that makes it slow",
    "Find what makes start-up slow; move migrations and backfills out of it, then bring "
    "the budgets back to the time a process needs to start",
    "Reported with the computed budget:\n\n"
    "* a `startupProbe` whose `initialDelaySeconds + failureThreshold x periodSeconds` "
    "exceeds `lint.thresholds.startup` (default 5m; Kubernetes' defaults give 30s);\n"
    "* a readiness or liveness probe whose `initialDelaySeconds` exceeds "
    "`lint.thresholds.initial_delay` (default 2m);\n"
    "* a `progressDeadlineSeconds` above `lint.thresholds.progress_deadline` (default 15m; "
    "Kubernetes' default is 10m).\n\n"
    "When a service takes 8 to 15 minutes to come up, the usual reflex is to turn the same "
    "knobs: raise `initialDelaySeconds`, add a `startupProbe` of twenty minutes, raise "
    "`progressDeadlineSeconds`. A startupProbe is right for a process that really initialises "
    "slowly (a JVM, a cache to warm); it keeps the kubelet from killing it too early. It does "
    "not turn a heavy migration into a good release pattern; it only lets the container stay "
    "in its transitional state longer. `/startup` should answer \"has the process finished "
    "initialising?\", not \"have I applied 17 SQL scripts yet?\". A sane startupProbe allows "
    "a couple of minutes (periodSeconds 5 x failureThreshold 24 = 2m).",
    run_stretched,
};

}  // namespace envgate::lint
