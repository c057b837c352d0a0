// The stable JSON form of a LockRecord (schema "envgate.dev/lock/v1", documented in
// locks/README.md): what the file store writes and what `status --output json` prints.
#pragma once

#include <nlohmann/json.hpp>

#include "gates/status.h"
#include "locks/lock_record.h"

namespace envgate::locks {

inline constexpr const char* k_record_schema = "envgate.dev/lock/v1";

nlohmann::json to_json(const LockRecord& record);
nlohmann::json to_json(const Holder& holder);

// An `invalid` Status names the field that is wrong.
Result<LockRecord> record_from_json(const nlohmann::json& j);

}  // namespace envgate::locks
