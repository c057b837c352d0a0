// Heartbeat: renews a held lock every lease_duration / 3 on a thread until stopped,
// so a process that holds a lock for long keeps it alive and a killed one goes stale.
// Threads: the constructor starts one thread, which alone calls `renew_once` (never
// under the mutex, so a renewal's HTTP call blocks nobody). stop() and the destructor
// may run on any one other thread; lost() on any thread. m_mutex guards m_stopping,
// which the thread waits on between renewals.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "runner/base/thread_annotations.h"

namespace envgate::locks {

class Heartbeat {
  public:
    // `renew_once` renews and returns false when the lock is no longer ours; the
    // heartbeat then stops and lost() turns true.
    Heartbeat(std::chrono::microseconds every, std::function<bool()> renew_once);
    ~Heartbeat();
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

    void stop();
    bool lost() const { return m_lost.load(); }

  private:
    void run();

    std::chrono::microseconds m_every;
    std::function<bool()> m_renew_once;
    Mutex m_mutex;
    CondVar m_wake;
    bool m_stopping GUARDED_BY(m_mutex) = false;
    std::atomic<bool> m_lost{false};
    std::thread m_thread;
};

}  // namespace envgate::locks
