// A Clock for tests: `now` moves only when told to, and sleep_until jumps there at
// once, recording each sleep so a test can check how long code chose to wait.
#pragma once

#include <vector>

#include "gates/time.h"

namespace envgate::test {

class FakeClock : public Clock {
  public:
    explicit FakeClock(TimePoint start) : m_now(start) {}

    TimePoint now() override { return m_now; }
    void sleep_until(TimePoint deadline) override {
        m_sleeps.push_back(deadline - m_now);
        if (deadline > m_now) {
            m_now = deadline;
        }
    }
    void advance(Duration d) { m_now += d; }
    const std::vector<Duration>& sleeps() const { return m_sleeps; }

  private:
    TimePoint m_now;
    std::vector<Duration> m_sleeps;
};

}  // namespace envgate::test
