// Label and field selectors as the Kubernetes API parses them from list/watch queries:
// labels with =, ==, !=, in, notin, exists and !exists; fields with =, == and != on a
// dotted path (metadata.name, involvedObject.uid, status.phase, ...).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"

namespace kubesim {

struct Requirement {
    std::string key;
    std::string op;  // "=", "!=", "in", "notin", "exists", "!exists"
    std::vector<std::string> values;
};

struct Selector {
    std::vector<Requirement> labels;
    std::vector<Requirement> fields;
    bool empty() const { return labels.empty() && fields.empty(); }
};

// Parses `labelSelector` and `fieldSelector` query values. 400 BadRequest on bad syntax.
envgate::Result<Selector> parse_selector(const std::string& label_selector,
                                         const std::string& field_selector);
// True when `obj` satisfies every requirement. `field_alias` maps API field names to
// stored ones (events.k8s.io "regarding.name" -> "involvedObject.name").
bool selector_matches(const Selector& selector, const nlohmann::json& obj);
// A label selector built from a LabelSelector object ({matchLabels, matchExpressions}).
bool label_selector_matches(const nlohmann::json& label_selector, const nlohmann::json& labels);

}  // namespace kubesim
