// Clang's thread-safety annotations (leveldb's port/thread_annotations.h, Abseil's
// names), and a Mutex that carries them: libstdc++'s std::mutex is not annotated, so a
// class whose fields a mutex guards holds an envgate::Mutex instead and says which
// fields it guards (GUARDED_BY) and which functions need it (REQUIRES). Clang checks
// them under -Wthread-safety (ENVGATE_THREAD_SAFETY=ON; .ci/run's thread-safety tier);
// other compilers see empty macros and a plain std::mutex.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define ENVGATE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ENVGATE_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) ENVGATE_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY ENVGATE_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) ENVGATE_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) ENVGATE_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) ENVGATE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) ENVGATE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) ENVGATE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) ENVGATE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS ENVGATE_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace envgate {

// std::mutex, annotated as a capability.
class CAPABILITY("mutex") Mutex {
  public:
    void lock() ACQUIRE() { m_mutex.lock(); }
    void unlock() RELEASE() { m_mutex.unlock(); }

  private:
    friend class MutexLock;
    std::mutex m_mutex;
};

// Holds `mutex` for its scope (std::unique_lock underneath, so a CondVar can wait on
// it: the wait releases and retakes the mutex, which the analysis treats as held
// throughout, as it is whenever the caller's code runs).
class SCOPED_CAPABILITY MutexLock {
  public:
    explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : m_lock(mutex.m_mutex) {}
    ~MutexLock() RELEASE() {}
    MutexLock(const MutexLock&) = delete;
    MutexLock& operator=(const MutexLock&) = delete;

    // Lets go of the mutex around a call that must not hold it, and takes it back.
    void unlock() RELEASE() { m_lock.unlock(); }
    void lock() ACQUIRE() { m_lock.lock(); }

    std::unique_lock<std::mutex>& native() { return m_lock; }

  private:
    std::unique_lock<std::mutex> m_lock;
};

// std::condition_variable over a MutexLock.
class CondVar {
  public:
    void notify_all() { m_cv.notify_all(); }
    void notify_one() { m_cv.notify_one(); }
    void wait(MutexLock& lock) { m_cv.wait(lock.native()); }
    template <class Predicate>
    void wait(MutexLock& lock, Predicate ready) {
        m_cv.wait(lock.native(), ready);
    }
    template <class Rep, class Period, class Predicate>
    bool wait_for(MutexLock& lock, const std::chrono::duration<Rep, Period>& d, Predicate ready) {
        return m_cv.wait_for(lock.native(), d, ready);
    }
    template <class Clock, class Duration>
    std::cv_status wait_until(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& t) {
        return m_cv.wait_until(lock.native(), t);
    }
    template <class Clock, class Duration, class Predicate>
    bool wait_until(MutexLock& lock, const std::chrono::time_point<Clock, Duration>& t,
                    Predicate ready) {
        return m_cv.wait_until(lock.native(), t, ready);
    }

  private:
    std::condition_variable m_cv;
};

}  // namespace envgate
