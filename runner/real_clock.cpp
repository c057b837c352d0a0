#include "runner/real_clock.h"

#include <thread>

namespace envgate {

TimePoint RealClock::now() {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

void RealClock::sleep_until(TimePoint deadline) {
    std::this_thread::sleep_until(deadline);
}

}  // namespace envgate
