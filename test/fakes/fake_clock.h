// A Clock for tests: `now` moves only when told to.
//
// Threads: every member may be called from any thread (a watch's or heartbeat's
// threads read it while the test advances it); m_mutex guards the time and the record
// of sleeps.
//
// Two ways to sleep:
// * Sleep::jump (the default, for code on one thread): sleep_until jumps to its deadline
//   at once, recording each sleep so a test can check how long code chose to wait.
// * Sleep::driven (for code with threads of its own): sleep_until blocks until the test
//   moves the time to the deadline (advance, set) or interrupt() is called, so that a
//   worker thread's back-off cannot move the time under the test. The sleep is recorded
//   too.
#pragma once

#include <vector>

#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/time.h"

namespace envgate::test {

class FakeClock : public Clock {
  public:
    enum class Sleep { jump, driven };
    explicit FakeClock(TimePoint start, Sleep sleep = Sleep::jump) : m_sleep(sleep), m_now(start) {}

    TimePoint now() override EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        return m_now;
    }

    void sleep_until(TimePoint deadline) override EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        m_sleeps.push_back(deadline - m_now);
        if (m_sleep == Sleep::jump) {
            if (deadline > m_now) {
                m_now = deadline;
            }
            return;
        }
        const auto interrupts = m_interrupts;
        ++m_sleepers;
        m_moved.notify_all();
        while (m_now < deadline && m_interrupts == interrupts && !m_released) {
            m_moved.wait(lock);
        }
        --m_sleepers;
    }

    void advance(Duration d) EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        m_now += d;
        m_moved.notify_all();
    }

    // Ends every driven sleep in progress early, as a signal ends a real one.
    void interrupt() EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        ++m_interrupts;
        m_moved.notify_all();
    }

    // Driven: every sleep from now on returns at once, the time unmoved (as after a
    // signal), so that threads still running can end, e.g. when a test tears down.
    void release() EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        m_released = true;
        m_moved.notify_all();
    }

    // Driven: blocks (real time, at most `patience`) until `n` threads sleep on this
    // clock; true when they do. Lets a test advance the time once a worker waits on it.
    bool await_sleepers(int n, std::chrono::milliseconds patience) EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        return m_moved.wait_for(lock, patience,
                                [&]() REQUIRES(m_mutex) { return m_sleepers >= n; });
    }

    // A copy: other threads may sleep meanwhile.
    std::vector<Duration> sleeps() const EXCLUDES(m_mutex) {
        MutexLock lock(m_mutex);
        return m_sleeps;
    }

  private:
    const Sleep m_sleep;
    mutable Mutex m_mutex;
    CondVar m_moved;  // the time moved, a sleep began, or an interrupt came
    TimePoint m_now GUARDED_BY(m_mutex);
    std::vector<Duration> m_sleeps GUARDED_BY(m_mutex);
    int m_sleepers GUARDED_BY(m_mutex) = 0;
    unsigned m_interrupts GUARDED_BY(m_mutex) = 0;
    bool m_released GUARDED_BY(m_mutex) = false;
};

}  // namespace envgate::test
