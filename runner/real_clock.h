// The system clock behind the Clock seam.
#pragma once

#include "gates/time.h"

namespace envgate {

class RealClock : public Clock {
  public:
    TimePoint now() override;
    void sleep_until(TimePoint deadline) override;
};

}  // namespace envgate
