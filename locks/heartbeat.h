// Heartbeat: renews a held lock every lease_duration / 3 on a thread until stopped,
// so a process that holds a lock for long keeps it alive and a killed one goes stale.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

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
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::atomic<bool> m_lost{false};
    std::thread m_thread;
};

}  // namespace envgate::locks
