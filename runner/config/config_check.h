// Checks of envgate.yml that need the whole file read: environment names (DNS-1123
// labels, unique, not the reserved `qa`) and the `after` promotion order (known
// environments, no cycle). Errors go to the same YamlFields collector as parsing.
#pragma once

#include <yaml-cpp/yaml.h>

#include <vector>

#include "runner/base/vocab/dns_label.h"
#include "runner/config/config.h"
#include "runner/config/config_yaml.h"

namespace envgate {

// Where each part of one environment was written, for messages.
struct EnvironmentMarks {
    YAML::Mark name;
    std::vector<YAML::Mark> after;  // one per `after` item
};

// REQUIRES: `marks` has one entry per environment, in the same order.
void check_environments(const std::vector<Environment>& environments,
                        const std::vector<EnvironmentMarks>& marks, YamlFields& fields);

}  // namespace envgate
