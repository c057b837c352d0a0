// What envgate.yml's `lint:` section sets (runner/config/config_lint.cpp reads it): checks
// turned off, thresholds, and input paths skipped. The defaults apply without it.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace envgate::lint {

struct LintSettings {
    std::set<std::string> disabled;          // check ids never reported
    std::int64_t max_startup_seconds = 300;  // startupProbe budget (the source's example: 2m)
    std::int64_t max_initial_delay_seconds = 120;
    std::int64_t max_progress_deadline_seconds = 900;  // Kubernetes' default is 600
    std::int64_t max_backoff_limit = 3;
    std::int64_t min_evidence_ttl_seconds = 86400;  // keep a failed Job a day
    std::vector<std::string> exclude_paths;         // globs of input files not linted
};

}  // namespace envgate::lint
