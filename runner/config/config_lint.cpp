// lint:
//   disable: [migration-job-no-pod-failure-policy]   # check ids
//   exclude_paths: ["charts/*/tests/**/*"]           # globs of input files
//   thresholds: {startup: 5m, initial_delay: 2m, progress_deadline: 15m,
//                evidence_ttl: 24h, backoff_limit: 3}
#include "runner/config/config_lint.h"

#include <fmt/format.h>

#include "runner/config/glob.h"
#include "runner/lint/check.h"

namespace envgate {
namespace {

const std::vector<std::string> k_lint_keys = {"disable", "exclude_paths", "thresholds"};
const std::vector<std::string> k_threshold_keys = {"startup", "initial_delay", "progress_deadline",
                                                   "evidence_ttl", "backoff_limit"};

std::vector<std::string> check_ids() {
    std::vector<std::string> out;
    for (const lint::Check* c : lint::all_checks()) {
        out.emplace_back(c->id);
    }
    return out;
}

void read_disable(const YAML::Node& node, YamlFields& f, lint::LintSettings& out) {
    auto ids = f.read_string_list(node, "lint.disable");
    for (std::size_t i = 0; ids && i < ids->size(); ++i) {
        const std::string& id = (*ids)[i];
        if (lint::find_check(id) != nullptr) {
            out.disabled.insert(id);
            continue;
        }
        auto guess = did_you_mean(id, check_ids());
        f.error(f.where(node[i]), fmt::format("lint.disable[{}]", i),
                fmt::format("\"{}\" is not a check{}", id,
                            guess ? fmt::format("; did you mean \"{}\"?", *guess)
                                  : std::string("; see docs/lint.md")));
    }
}

void seconds(const YAML::Node& node, const std::string& key, YamlFields& f, std::int64_t& into) {
    if (!node[key]) {
        return;
    }
    if (auto d = f.read_duration(node[key], "lint.thresholds." + key, std::chrono::seconds(1))) {
        into = std::chrono::duration_cast<std::chrono::seconds>(*d).count();
    }
}

void read_thresholds(const YAML::Node& node, YamlFields& f, lint::LintSettings& out) {
    if (!f.expect_map(node, "lint.thresholds")) {
        return;
    }
    f.check_keys(node, "lint.thresholds", k_threshold_keys);
    seconds(node, "startup", f, out.max_startup_seconds);
    seconds(node, "initial_delay", f, out.max_initial_delay_seconds);
    seconds(node, "progress_deadline", f, out.max_progress_deadline_seconds);
    seconds(node, "evidence_ttl", f, out.min_evidence_ttl_seconds);
    if (node["backoff_limit"]) {
        auto n = f.read_int(node["backoff_limit"], "lint.thresholds.backoff_limit");
        if (n && *n < 0) {
            f.error(f.where(node["backoff_limit"]), "lint.thresholds.backoff_limit",
                    "must be 0 or more");
        } else if (n) {
            out.max_backoff_limit = *n;
        }
    }
}

}  // namespace

void read_lint_section(const YAML::Node& node, YamlFields& f, lint::LintSettings& out) {
    if (!node.IsDefined() || !f.expect_map(node, "lint")) {
        return;
    }
    f.check_keys(node, "lint", k_lint_keys);
    if (node["disable"]) {
        read_disable(node["disable"], f, out);
    }
    if (YAML::Node n = node["exclude_paths"]) {
        out.exclude_paths = f.read_string_list(n, "lint.exclude_paths").value_or(out.exclude_paths);
        for (size_t j = 0; n.IsSequence() && j < n.size() && j < out.exclude_paths.size(); ++j) {
            if (std::string why = glob_error(out.exclude_paths[j]); !why.empty()) {
                f.error(f.where(n[j]), fmt::format("lint.exclude_paths[{}]", j),
                        "\"" + out.exclude_paths[j] + "\": " + why);
            }
        }
    }
    if (node["thresholds"]) {
        read_thresholds(node["thresholds"], f, out);
    }
}

}  // namespace envgate
