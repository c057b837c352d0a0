// YAML nodes as the JSON values Kubernetes tools read them as (sigs.k8s.io/yaml: YAML
// 1.1 plain scalars, so yes/no/on/off are booleans; quoted scalars stay strings).
// Used for Job manifests and for kubeconfig extensions handed to credential plugins.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/base/vocab/status.h"

namespace envgate {

// The JSON value of a plain (unquoted) YAML scalar `text`.
nlohmann::json yaml_plain_scalar(const std::string& text);

// A scalar node's value given its (possibly rewritten) `text`: a string when the node
// was quoted or tagged !!str, else yaml_plain_scalar(text).
nlohmann::json yaml_scalar_value(const YAML::Node& node, const std::string& text);

// Converts one scalar; `field` is its dotted path ("spec.template...").
using YamlScalarToJson =
    std::function<Result<nlohmann::json>(const YAML::Node& node, const std::string& field)>;

// `node` as JSON. Scalars go through `scalar` (default: yaml_scalar_value of the node's
// own text). Code::invalid for a non-string map key, as "ORIGIN:LINE:COL: FIELD: ...".
Result<nlohmann::json> yaml_to_json(const YAML::Node& node, const std::string& origin,
                                    const YamlScalarToJson& scalar = {});

// "ORIGIN:LINE:COL: FIELD", without the parts that are unknown or empty.
std::string yaml_where(const std::string& origin, const YAML::Mark& mark, const std::string& field);

}  // namespace envgate
