#include "runner/kube/retry.h"

#include <algorithm>
#include <charconv>

#include <Poco/DateTimeFormat.h>
#include <Poco/DateTimeParser.h>
#include <Poco/Exception.h>
#include <fmt/format.h>

namespace envgate::kube {

Duration Backoff::next() {
    double base = static_cast<double>(m_policy.initial_backoff.count());
    for (int i = 0; i < m_step; ++i) {
        base *= m_policy.multiplier;
    }
    base = std::min(base, static_cast<double>(m_policy.max_backoff.count()));
    ++m_step;
    const double jittered = base * (1.0 + m_policy.jitter * m_random.uniform());
    return Duration(static_cast<Duration::rep>(jittered));
}

Status retry_transient(Clock& clock, Random& random, const RetryPolicy& policy, TimePoint deadline,
                       const std::function<Attempt()>& attempt,
                       const std::function<int()>& pending_signal) {
    Backoff backoff(policy, random);
    for (int tries = 1;; ++tries) {
        Attempt result = attempt();
        if (result.status.is_ok() || result.status.code() != Code::transient) {
            return result.status;
        }
        const Duration wait = result.retry_after ? *result.retry_after : backoff.next();
        const TimePoint wake = clock.now() + wait;
        if (tries >= policy.max_attempts || wake > deadline) {
            return Status(Code::transient,
                          fmt::format("{} (gave up after {} attempt{})", result.status.message(),
                                      tries, tries == 1 ? "" : "s"));
        }
        clock.sleep_until(wake);
        if (int sig = pending_signal ? pending_signal() : 0; sig != 0) {
            return Status(Code::cancelled,
                          fmt::format("{} (stopped by signal {})", result.status.message(), sig));
        }
    }
}

// A server may ask for any wait; more than a day is read as a day, which every retry
// deadline is shorter than (so the caller gives up rather than overflowing `now + wait`).
constexpr std::chrono::seconds k_max_retry_after = std::chrono::hours(24);

std::optional<Duration> parse_retry_after(const std::string& value, TimePoint now) {
    long seconds = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (end == value.data() + value.size() && error == std::errc::result_out_of_range &&
        value.front() != '-') {
        return k_max_retry_after;
    }
    if (error == std::errc() && end == value.data() + value.size() && seconds >= 0) {
        return std::min(std::chrono::seconds(seconds), k_max_retry_after);  // then to µs
    }
    try {
        int tz = 0;
        Poco::DateTime when =
            Poco::DateTimeParser::parse(Poco::DateTimeFormat::HTTP_FORMAT, value, tz);
        auto at = TimePoint(Duration(when.timestamp().epochMicroseconds()));
        return std::clamp<Duration>(at - now, Duration(0), k_max_retry_after);
    } catch (const Poco::Exception&) {
        return std::nullopt;
    }
}

}  // namespace envgate::kube
