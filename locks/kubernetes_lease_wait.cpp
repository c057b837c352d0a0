// KubernetesLeaseStore::wait_for_change: a waiter blocks on a watch of its one Lease
// instead of re-reading it, and the Lease the watch delivers serves the next read.
#include <condition_variable>

#include "locks/kubernetes_lease_store.h"

namespace envgate::locks {
namespace {

std::string resource_version(const nlohmann::json& lease) {
    auto meta = lease.find("metadata");
    if (meta == lease.end() || !meta->is_object()) {
        return {};
    }
    auto rv = meta->find("resourceVersion");
    return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

}  // namespace

// What one watch of a Lease saw, shared with the thread that runs it.
struct LeaseWatch {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    Status status;
    std::optional<kube::WatchEvent> event;
};

KubernetesLeaseStore::~KubernetesLeaseStore() {
    if (m_abandoned.joinable()) {
        m_api->cancel_watches();
        m_abandoned.join();
    }
}

// A watch of this one Lease (fieldSelector metadata.name) from `version`, so every
// write after our read is delivered, ending at its first event (kept for the next
// read). A watch lasts whole seconds (timeoutSeconds): a shorter wait is left to the
// caller's polling. With `interrupted`, the watch runs on a thread and the caller
// looks at `interrupted` every 100 ms (a signal does not end a blocking read of the
// stream); an interrupted wait leaves the watch to end by itself (or in ~).
Result<WaitEnd> KubernetesLeaseStore::wait_for_change(const std::string& name,
                                                      const std::string& version, Duration max_wait,
                                                      const std::function<bool()>& interrupted) {
    TRY(check_lock_name(name));
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(max_wait).count();
    if (seconds < 1) {
        return WaitEnd::unwatched;
    }
    if (m_abandoned.joinable()) {
        m_abandoned.join();
    }
    kube::WatchOptions options;
    options.field_selector = "metadata.name=" + lease_name(name);
    options.resource_version = version;  // empty: the Lease, if any, comes as ADDED
    options.allow_bookmarks = false;
    options.timeout_seconds = static_cast<int>(std::min<std::int64_t>(seconds, 300));
    auto watch = std::make_shared<LeaseWatch>();
    auto run = [api = m_api, ref = kube::leases(m_namespace), options, watch] {
        std::optional<kube::WatchEvent> first;
        Status watched = api->watch(ref, options, [&](const kube::WatchEvent& e) {
            if (e.type == kube::EventType::bookmark) {
                return kube::WatchNext::proceed;
            }
            first = e;
            return kube::WatchNext::stop;
        });
        std::lock_guard lock(watch->mutex);
        watch->status = watched;
        watch->event = std::move(first);
        watch->done = true;
        watch->done_cv.notify_all();
    };
    if (!interrupted) {
        run();
        return end_of_wait(name, version, watch->status, watch->event);
    }
    std::thread thread(run);
    std::unique_lock lock(watch->mutex);
    while (!watch->done) {
        watch->done_cv.wait_for(lock, std::chrono::milliseconds(100));
        if (!watch->done && interrupted()) {
            lock.unlock();
            m_abandoned = std::move(thread);
            return WaitEnd::timed_out;  // the caller looks at why
        }
    }
    lock.unlock();
    thread.join();
    return end_of_wait(name, version, watch->status, watch->event);
}

Result<WaitEnd> KubernetesLeaseStore::end_of_wait(const std::string& name,
                                                  const std::string& version, const Status& watched,
                                                  const std::optional<kube::WatchEvent>& event) {
    std::lock_guard lock(m_mutex);
    if (event) {
        if (event->type != kube::EventType::deleted) {
            m_delivered[name] = event->object;
        }
        return WaitEnd::changed;
    }
    if (watched.code() == Code::gone) {
        return WaitEnd::changed;  // our version was compacted away: re-read
    }
    if (!watched.is_ok()) {
        return watched.with_context("lock " + name);
    }
    // The server ended the watch (timeoutSeconds) with nothing to say: the Lease is
    // still the one we know, so the next read needs no GET.
    auto it = m_seen.find(name);
    if (it != m_seen.end() && resource_version(it->second) == version) {
        m_delivered[name] = it->second;
    }
    return WaitEnd::timed_out;
}

}  // namespace envgate::locks
