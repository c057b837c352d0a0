#include "runner/base/real_clock.h"

#include <algorithm>
#include <thread>

namespace envgate {

TimePoint RealClock::now() {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

void RealClock::sleep_until(TimePoint deadline) {
    // In slices, so that a SIGTERM ends any wait (back-off, poll interval) within 50 ms.
    constexpr auto k_slice = std::chrono::milliseconds(50);
    while (!m_pending_signal || m_pending_signal() == 0) {
        TimePoint t = now();
        if (t >= deadline) {
            return;
        }
        std::this_thread::sleep_for(std::min<Duration>(deadline - t, k_slice));
    }
}

}  // namespace envgate
