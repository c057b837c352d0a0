// Reading locks for `status` and `dashboard`: each lock's record from the store
// envgate.yml gives it, within one time budget, as a LockStatus that says what could
// not be read instead of guessing a state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "locks/lock_record.h"
#include "runner/connect/context.h"
#include "runner/connect/lock_target.h"

namespace envgate {

struct Config;

// One lock as status shows it; `error` is set when it could not be read, and
// `repair` too when the store answered but the record is not understood.
struct LockStatus {
    locks::LockRecord record;
    std::string store;
    std::string error;
    std::string repair;  // repair_instructions(): how to look at it and clear it
};

// The locks to show: `env` alone, else every environment of the config and `qa`.
std::vector<std::string> lock_names(const Config& config, const std::optional<std::string>& env);

// Reads lock `name` from the store the config gives it. Nullopt (and `exit` set) when
// there is no store to read from; a store that fails to answer is an `error`.
std::optional<LockStatus> read_lock_status(const Config& config, const std::string& name,
                                           Context& ctx, int& exit, const StoreOptions& store = {});

// Reads the locks `names` within one `budget` shared by all: each store read is given
// what is left of it (its retries and each request end with it), and a lock whose turn
// comes once it is spent is not read: its error says so. Nullopt (and `exit` set) when
// a lock has no store to read from.
std::optional<std::vector<LockStatus>> read_lock_statuses(const Config& config,
                                                          const std::vector<std::string>& names,
                                                          Context& ctx, int& exit,
                                                          StoreOptions store, Duration budget);

}  // namespace envgate
