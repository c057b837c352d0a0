// Reads YAML text that envgate did not write (envgate.yml, gate manifests,
// kubeconfigs) within fixed bounds. yaml-cpp parses aliases as shared nodes, but
// every walk over the nodes expands them again, so a few lines of nested aliases
// (a "billion laughs" document) would take all memory and minutes: the size, the
// nesting and the number of nodes a walk visits are checked once, here.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"

namespace envgate {

struct YamlLimits {
    std::size_t max_bytes = 4 * 1024 * 1024;  // Kubernetes objects stay far below this
    std::size_t max_nodes = 200000;           // nodes visited, aliases expanded
    int max_depth = 64;                       // a Job nests about 12 levels deep
    // Scalar text a walk visits, aliases expanded: a long scalar aliased many times
    // within max_nodes is as costly as a deep alias tree.
    std::size_t max_expanded_bytes = 8 * 1024 * 1024;
};

// Parses every document of `text`. Code::invalid, naming `origin` (and the line where
// it is known), for a syntax error, a text over `limits.max_bytes`, or documents
// whose walk, aliases expanded, visits more than `limits.max_nodes` nodes or nests
// deeper than `limits.max_depth`, or holds more than `limits.max_expanded_bytes` of scalar
// text once aliases are expanded.
Result<std::vector<YAML::Node>> load_yaml_bounded(const std::string& text,
                                                  const std::string& origin,
                                                  const YamlLimits& limits = {});

}  // namespace envgate
