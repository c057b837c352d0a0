// GateMemory as JSON (the `memory` object of `envgate explain`) and as the two Job
// annotations that carry it across processes: `envgate.dev/observed-failures` (counts,
// exactly-once keys, recorded flags) and `envgate.dev/last-failure`.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gates/verdict.h"
#include "runner/base/vocab/status.h"

namespace envgate::gates {

nlohmann::json failure_to_json(const Failure& failure);
nlohmann::json memory_to_json(const GateMemory& memory);
Result<GateMemory> memory_from_json(const nlohmann::json& j, std::string_view source);

std::string encode_memory(const GateMemory& memory);
Result<GateMemory> decode_memory(std::string_view text, std::string_view source);

// The annotations to write on the Job (values are JSON strings). The last-failure
// annotation is absent while no failure was seen.
std::map<std::string, std::string> memory_annotations(const GateMemory& memory);

// The memory stored in a Job's `annotations`; empty memory when they are absent.
Result<GateMemory> memory_from_annotations(const std::map<std::string, std::string>& annotations);

}  // namespace envgate::gates
