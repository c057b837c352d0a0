// Checks of envgate.yml that need the whole file read: environment names (DNS-1123
// labels, unique, not the reserved `qa`) and the `after` promotion order (known
// environments, no cycle). Errors go to the same YamlFields collector as parsing.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string_view>
#include <vector>

#include "runner/config.h"
#include "runner/config_yaml.h"

namespace envgate {

// Where each part of one environment was written, for messages.
struct EnvironmentMarks {
    YAML::Mark name;
    std::vector<YAML::Mark> after;  // one per `after` item
};

// True for a Kubernetes DNS-1123 label: 1-63 of [a-z0-9-], alphanumeric at both ends.
bool is_dns1123_label(std::string_view s);

// REQUIRES: `marks` has one entry per environment, in the same order.
void check_environments(const std::vector<Environment>& environments,
                        const std::vector<EnvironmentMarks>& marks, YamlFields& fields);

}  // namespace envgate
