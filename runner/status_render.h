// The locks as `envgate status` shows them (text, wrapped to the terminal) and as
// its JSON (schema "envgate.dev/status/v1", documented in locks/README.md), which
// `envgate dashboard` embeds. Pure apart from terminal_width().
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/time.h"
#include "runner/connect/lock_status.h"

namespace envgate {

// Pure renderers. A lock that could not be read is "unknown" in each (JSON: its
// lock.state), with the error, never a state it may not be in. Text wraps long values (failures,
// unlock reasons) at spaces to `width` columns, continuing under themselves; `width` 0 keeps each
// on one line. Nothing is cut.
std::string render_status_text(const std::vector<LockStatus>& locks, TimePoint now,
                               std::size_t width = 0);

// The width to wrap status text to: $COLUMNS when it is a number, else the terminal's
// (ioctl TIOCGWINSZ on stdout), else 0 (not a terminal: no wrapping).
std::size_t terminal_width(
    const std::function<std::optional<std::string>(const std::string&)>& getenv);
nlohmann::json render_status_json(const std::vector<LockStatus>& locks, TimePoint now);

}  // namespace envgate
