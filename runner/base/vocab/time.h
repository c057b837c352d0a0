// Time as envgate passes it around: UTC time points with microsecond precision,
// read from and written as RFC 3339 (Kubernetes `Time` and `MicroTime`), and the
// Clock seam that lets tests run a six-hour gate in microseconds.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace envgate {

using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;
using Duration = std::chrono::microseconds;

// Parses "2025-05-29T07:12:38Z", with optional fractional seconds and a numeric
// offset ("+02:00"). Returns nullopt for anything else.
std::optional<TimePoint> parse_rfc3339(std::string_view text);

// "2025-05-29T07:12:38Z" (Kubernetes `Time`, whole seconds).
std::string format_rfc3339(TimePoint t);

// "2025-05-29T07:12:38.123456Z" (Kubernetes `MicroTime`).
std::string format_rfc3339_micro(TimePoint t);

// Parses "90s", "5m", "2h", "1h30m", "250ms", or a bare number of seconds.
std::optional<Duration> parse_duration(std::string_view text);

// "4m10s", "2h0m5s", "850ms": short, for people.
std::string format_duration(Duration d);

// The source of `now` and of waiting. One real implementation (runner/), and a
// fake in test/fakes/ whose sleep_until jumps instantly.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual TimePoint now() = 0;
    // Returns when `deadline` has passed, or earlier if interrupted (a signal).
    virtual void sleep_until(TimePoint deadline) = 0;
};

}  // namespace envgate
