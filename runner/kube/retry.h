// Retries of transient API failures: jittered exponential back-off under a deadline,
// honouring a server's Retry-After. Waits go through the Clock seam, so tests with
// FakeClock run instantly and can read every chosen sleep.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate::kube {

using namespace std::chrono_literals;

struct RetryPolicy {
    Duration initial_backoff = 250ms;
    Duration max_backoff = 8s;
    double multiplier = 2.0;
    double jitter = 0.5;         // a delay d becomes d * (1 + jitter * u), u in [0, 1)
    Duration max_elapsed = 60s;  // per call: retries stop once this much time has gone
    int max_attempts = 8;
};

// The random source of the jitter; seeded for reproducible tests.
class Random {
  public:
    Random() : m_engine(std::random_device{}()) {}
    explicit Random(std::uint64_t seed) : m_engine(seed) {}
    double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(m_engine); }

  private:
    std::mt19937_64 m_engine;
};

// The sequence of back-off delays of one retry loop.
class Backoff {
  public:
    Backoff(const RetryPolicy& policy, Random& random) : m_policy(policy), m_random(random) {}
    Duration next();
    void reset() { m_step = 0; }

  private:
    const RetryPolicy& m_policy;
    Random& m_random;
    int m_step = 0;
};

// What one attempt returned: its Status and, for 429/503, the server's Retry-After.
struct Attempt {
    Status status;
    std::optional<Duration> retry_after;
};

// Runs `attempt` until it succeeds or fails with a non-transient code, sleeping between
// tries on `clock`. Stops when the next sleep would pass `deadline` or the attempt budget
// is spent, and returns the last failure with "(gave up after N attempts)" appended.
// A SIGTERM/SIGINT that `pending_signal` reports (when set) after a sleep ends the loop
// at once with Code::cancelled: a cancelled job does not retry.
Status retry_transient(Clock& clock, Random& random, const RetryPolicy& policy, TimePoint deadline,
                       const std::function<Attempt()>& attempt,
                       const std::function<int()>& pending_signal);

// Parses a Retry-After value: delta-seconds or an HTTP date (relative to `now`).
std::optional<Duration> parse_retry_after(const std::string& value, TimePoint now);

}  // namespace envgate::kube
