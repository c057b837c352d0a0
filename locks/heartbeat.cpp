#include "locks/heartbeat.h"

namespace envgate::locks {

Heartbeat::Heartbeat(std::chrono::microseconds every, std::function<bool()> renew_once)
    : m_every(every), m_renew_once(std::move(renew_once)), m_thread([this] { run(); }) {}

Heartbeat::~Heartbeat() {
    stop();
}

void Heartbeat::stop() {
    {
        std::lock_guard<std::mutex> guard(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void Heartbeat::run() {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (!m_stopping) {
        if (m_wake.wait_for(lock, m_every, [this] { return m_stopping; })) {
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
