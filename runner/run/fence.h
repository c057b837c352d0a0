// Whether this run may still act as the environment's lock holder: the one check
// (still_holding) every mutating action of `envgate run` passes first, and the
// fencing token it stamps on what it creates. Modelled on client-go leader election:
// a holder whose last proven renewal is older than the renew deadline (2/3 of the
// lease) stops leading, before the lease can have expired on another observer's clock
// and someone else can have taken the lock over.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/time.h"

namespace envgate {

class LockFence {
  public:
    // `lease`: the lease every renewal extends. `token`: the lock's lease_transitions
    // when this run took it; a later holder's is higher. `taken`: when (on `clock`) the
    // write that took it was decided.
    LockFence(Clock& clock, Duration lease, std::int64_t token, TimePoint taken);

    std::int64_t token() const { return m_token; }
    Duration renew_deadline() const { return m_deadline; }

    // A renewal that was sent at `sent` succeeded: the lock was ours at `sent`.
    void proven(TimePoint sent);
    // The store said the lock is not ours any more (taken over, failed, unlocked).
    void lost(const std::string& why);

    // Why this run cannot prove it holds the lock now, or nullopt when it can: lost,
    // or no renewal proven within the renew deadline. Cheap and thread-safe; the step
    // and gate loops ask it every poll.
    std::optional<std::string> doubt() const;

  private:
    Clock& m_clock;
    Duration m_lease;
    Duration m_deadline;
    std::int64_t m_token;
    std::atomic<std::int64_t> m_last_proof_us;
    std::atomic<bool> m_lost{false};
    mutable Mutex m_mutex;
    std::string m_why GUARDED_BY(m_mutex);
};

}  // namespace envgate
