// The JSON-value forms of gates/decode.h, for callers that already hold parsed JSON
// (the Kubernetes client, watch events). Errors name `source` and the JSON path.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "gates/snapshot.h"
#include "runner/base/vocab/status.h"

namespace envgate::gates {

Result<Job> decode_job_json(const nlohmann::json& j, std::string_view source);
Result<Pod> decode_pod_json(const nlohmann::json& j, std::string_view source);
Result<std::vector<Pod>> decode_pods_json(const nlohmann::json& j, std::string_view source);

}  // namespace envgate::gates
