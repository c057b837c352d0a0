// The system clock behind the Clock seam.
#pragma once

#include "gates/time.h"

namespace envgate {

class RealClock : public Clock {
  public:
    TimePoint now() override;
    // Returns at `deadline`, or within 50 ms of a SIGTERM/SIGINT (runner/base/signals.h).
    void sleep_until(TimePoint deadline) override;
};

}  // namespace envgate
