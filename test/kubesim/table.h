// Server-side printing: the meta.k8s.io/v1 Table that `kubectl get` asks for
// (Accept: ...;as=Table), with the columns kube-apiserver prints for each kind.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/kubesim/resources.h"

namespace kubesim {

// A Table of `objects` (stored form) with the given list resourceVersion.
nlohmann::json to_table(const ResourceInfo& info, const std::vector<nlohmann::json>& objects,
                        const std::string& resource_version);
// True when an Accept header asks for a Table.
bool wants_table(const std::string& accept);

}  // namespace kubesim
