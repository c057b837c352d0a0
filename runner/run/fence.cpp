#include "runner/run/fence.h"

#include <fmt/format.h>

namespace envgate {
namespace {

std::int64_t micros(TimePoint t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

LockFence::LockFence(Clock& clock, Duration lease, std::int64_t token, TimePoint taken)
    : m_clock(clock),
      m_lease(lease),
      m_deadline(lease * 2 / 3),
      m_token(token),
      m_last_proof_us(micros(taken)) {}

void LockFence::proven(TimePoint sent) {
    std::int64_t at = micros(sent);
    std::int64_t seen = m_last_proof_us.load();
    while (seen < at && !m_last_proof_us.compare_exchange_weak(seen, at)) {
    }
}

void LockFence::lost(const std::string& why) {
    MutexLock lock(m_mutex);
    if (!m_lost.load()) {
        m_why = why;
        m_lost.store(true);
    }
}

std::optional<std::string> LockFence::doubt() const {
    if (m_lost.load()) {
        MutexLock lock(m_mutex);
        return "the lock is no longer held by this run: " + m_why;
    }
    Duration since = std::chrono::microseconds(micros(m_clock.now()) - m_last_proof_us.load());
    if (since >= m_deadline) {
        return fmt::format(
            "no renewal of the lock succeeded for {} (the renew deadline is {}, 2/3 of the "
            "{} lease): another pipeline may take it over, so this run stops",
            format_duration(since), format_duration(m_deadline), format_duration(m_lease));
    }
    return std::nullopt;
}

}  // namespace envgate
