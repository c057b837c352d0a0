// envgate.yml's `ci:` section: the GitLab job defaults and deployment tiers that
// `envgate generate` writes into the child pipeline, read with the same
// file:line:column: field errors as the rest of the config.
//
// ci:
//   tags: [kubernetes]                                 # default:tags
//   interruptible: false                               # default:interruptible
//   timeout: 2h                                        # default:timeout
//   deployment_tiers: {production: production, staging: staging}
//   deploy_branches: [main, "release/*"]               # or `protected`; default: the
//                                                      # default branch alone
#pragma once

#include <yaml-cpp/yaml.h>

#include <vector>

#include "runner/config/config.h"
#include "runner/config/config_yaml.h"

namespace envgate {

// GitLab's deployment tiers, the values `ci.deployment_tiers` accepts.
const std::vector<std::string>& deployment_tier_names();

// Reads `node` (the value of `ci`, possibly undefined) into `out`; the names in
// `deployment_tiers` must be among `environments`. Records any error in `fields`.
void read_ci_section(const YAML::Node& node, const std::vector<Environment>& environments,
                     YamlFields& fields, CiSettings& out);

// `d` as GitLab reads a job timeout: "1h 30m", "45m", "90s".
std::string gitlab_duration(Duration d);

}  // namespace envgate
