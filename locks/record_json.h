// The stable JSON form of a LockRecord (schema "envgate.dev/lock/v1", documented in
// locks/README.md): what the file store writes and what `status --output json` prints.
#pragma once

#include <nlohmann/json.hpp>

#include "locks/lock_record.h"
#include "runner/base/vocab/status.h"

namespace envgate::locks {

inline constexpr const char* k_record_schema = "envgate.dev/lock/v1";
// A waiter's own record (its place in the queue of `lock`).
inline constexpr const char* k_waiter_schema = "envgate.dev/waiter/v1";

nlohmann::json to_json(const LockRecord& record);
nlohmann::json to_json(const Holder& holder);

// Parses stored text; empty text or a syntax error is `invalid`, saying where
// ("not JSON: parse error at line 1, column 2: ...").
Result<nlohmann::json> parse_record_text(const std::string& text);

// Decodes strictly: anything not understood (another schema, a wrong type, a held
// lock without a holder) is an `invalid` Status naming the field, never a guess, so a
// store never overwrites a record it could not read.
Result<LockRecord> record_from_json(const nlohmann::json& j);
// The same for the record stored as lock `name`: a record of another lock is invalid.
Result<LockRecord> record_from_json(const nlohmann::json& j, const std::string& name);

// A waiter's own record: {"schema", "lock", "who", "seq", "since", "last_seen",
// "ttl_seconds"}; decoded as strictly as a lock record (another lock's: invalid).
nlohmann::json waiter_to_json(const std::string& lock, const Waiter& waiter);
Result<Waiter> waiter_from_json(const nlohmann::json& j, const std::string& lock);

}  // namespace envgate::locks
