// The system clock behind the Clock seam.
#pragma once

#include <functional>

#include "runner/base/vocab/time.h"

namespace envgate {

class RealClock : public Clock {
  public:
    // `pending_signal` (optional) returns the SIGTERM/SIGINT received, or 0.
    explicit RealClock(std::function<int()> pending_signal = {})
        : m_pending_signal(std::move(pending_signal)) {}
    TimePoint now() override;
    // Returns at `deadline`, or within 50 ms of a signal `pending_signal` reports.
    void sleep_until(TimePoint deadline) override;

  private:
    const std::function<int()> m_pending_signal;
};

}  // namespace envgate
