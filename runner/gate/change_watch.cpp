#include "runner/gate/change_watch.h"

#include <utility>

namespace envgate {

ChangeWatch::ChangeWatch(KubeApiFactory factory, Clock& clock, kube::ReflectorOptions options)
    : m_factory(std::move(factory)), m_clock(clock), m_options(std::move(options)) {}

ChangeWatch::~ChangeWatch() {
    stop();
}

Status ChangeWatch::start(const kube::ResourceRef& collection, const kube::ListOptions& selectors,
                          TimePoint deadline, KeepDeleted keep) {
    TRY_ASSIGN(auto api, m_factory());
    auto worker = std::make_unique<Worker>();
    worker->api = std::move(api);
    kube::ReflectorOptions options = m_options;
    options.selectors = selectors;
    kube::KubeApi* raw = worker->api.get();
    worker->thread = std::thread([this, raw, collection, options, deadline, keep] {
        Status end = kube::watch_until(
            *raw, m_clock, collection, options, deadline,
            [this, keep](kube::EventType type, const nlohmann::json& object) {
                std::lock_guard lock(m_mutex);
                if (keep == KeepDeleted::yes && type == kube::EventType::deleted) {
                    m_deleted.push_back(object);
                }
                m_changed = true;
                m_cv.notify_all();
                return m_stopping ? kube::WatchNext::stop : kube::WatchNext::proceed;
            });
        std::lock_guard lock(m_mutex);
        if (!end.is_ok() && end.code() != Code::timeout && !m_stopping) {
            m_failures.push_back(end);
            m_changed = true;
            m_cv.notify_all();
        }
    });
    m_workers.push_back(std::move(worker));
    return Status::ok();
}

bool ChangeWatch::wait(TimePoint until, const std::function<int()>& pending_signal) {
    std::unique_lock lock(m_mutex);
    while (!m_changed) {
        if (pending_signal() != 0 || m_clock.now() >= until) {
            return false;
        }
        // Short slices: a signal handler cannot notify a condition variable.
        m_cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    m_changed = false;
    return true;
}

void ChangeWatch::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    for (auto& w : m_workers) {
        w->api->cancel_watches();
    }
    for (auto& w : m_workers) {
        if (w->thread.joinable()) {
            w->thread.join();
        }
    }
    m_workers.clear();
}

std::vector<nlohmann::json> ChangeWatch::take_deleted() {
    std::lock_guard lock(m_mutex);
    return std::exchange(m_deleted, {});
}

std::vector<Status> ChangeWatch::failures() {
    std::lock_guard lock(m_mutex);
    return m_failures;
}

}  // namespace envgate
