// Decodes Kubernetes API JSON (kubectl get -o json, or an API response body) into the
// typed snapshots of gates/snapshot.h. Errors are Code::invalid values naming the input
// and the JSON path: `job.json: .status.conditions[1].status: expected a string, got number`.
#pragma once

#include <string_view>
#include <vector>

#include "gates/snapshot.h"
#include "runner/base/vocab/status.h"

namespace envgate::gates {

// A Job object; `source` names the input in error messages.
Result<Job> decode_job(std::string_view text, std::string_view source);

// A PodList (`{"kind": "PodList", "items": [...]}`) or a JSON array of pods.
Result<std::vector<Pod>> decode_pods(std::string_view text, std::string_view source);

}  // namespace envgate::gates
