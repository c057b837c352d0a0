// envgate.yml's `lint:` section (the settings of `envgate lint`), read with the
// same file:line:column: field errors as the rest of the config.
#pragma once

#include <yaml-cpp/yaml.h>

#include "runner/config/config_yaml.h"
#include "runner/lint/settings.h"

namespace envgate {

// Reads `node` (the value of `lint`, possibly undefined) into `out`, recording any
// error in `fields`.
void read_lint_section(const YAML::Node& node, YamlFields& fields, lint::LintSettings& out);

}  // namespace envgate
