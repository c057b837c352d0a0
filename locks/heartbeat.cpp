#include "locks/heartbeat.h"

namespace envgate::locks {

Heartbeat::Heartbeat(std::chrono::microseconds every, std::function<bool()> renew_once)
    : m_every(every), m_renew_once(std::move(renew_once)), m_thread([this] { run(); }) {}

Heartbeat::~Heartbeat() {
    stop();
}

void Heartbeat::stop() {
    {
        MutexLock guard(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void Heartbeat::run() {
    MutexLock lock(m_mutex);
    while (!m_stopping) {
        const auto due = std::chrono::steady_clock::now() + m_every;
        while (!m_stopping && m_wake.wait_until(lock, due) == std::cv_status::no_timeout) {
        }
        if (m_stopping) {
            return;
        }
        lock.unlock();
        bool still_ours = m_renew_once();
        lock.lock();
        if (!still_ours) {
            m_lost = true;
            return;
        }
    }
}

}  // namespace envgate::locks
