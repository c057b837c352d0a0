// envgate.yml `gates:` and `steps:`: the three built-in gates and diff/deploy/qa, and
// the gates and steps an app team adds, each with `after:` naming where it runs
// (runner/config/run_order.h). Part of load_config; every error names file:line:column and
// the field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "runner/config/config.h"
#include "runner/config/config_yaml.h"

namespace envgate {

// `relative` against `dir` (the config file's directory), normalised; absolute as is.
std::string resolve_config_path(const std::filesystem::path& dir, const std::string& relative);

// Where each added gate or step was written, for the cross-checks.
struct AddedMarks {
    std::map<std::string, YAML::Mark> key;     // the entry's name
    std::map<std::string, YAML::Mark> after;   // its `after` value
    std::map<std::string, std::string> field;  // "gates.seed-check"
    // Every valid added name, read or not: an `after` naming one that had its own error
    // is not reported again.
    std::set<std::string> declared;
};

// Read `gates:` / `steps:` into `config`; an added entry is appended to config.added.
void read_gates_section(const YAML::Node& node, const std::filesystem::path& dir, YamlFields& f,
                        Config& config, AddedMarks& marks);
void read_steps_section(const YAML::Node& node, YamlFields& f, Config& config, AddedMarks& marks);

// Once both are read: names clash with neither the other section nor a reserved name,
// each `after` names a built-in or added entry, no cycle; config.added is put in file
// order.
void check_added_entries(Config& config, const AddedMarks& marks, YamlFields& f);

}  // namespace envgate
