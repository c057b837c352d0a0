// KubernetesLeaseStore::wait_for_change: a waiter blocks on one long-lived watch of its
// Lease (a LeaseFollower per lock, started by the first wait, resumed from the last
// resourceVersion when the server ends it, each watch asking 5-10 min as client-go's
// reflector does) instead of re-reading it or opening a watch per wait; the Lease the
// watch delivered serves the next read.
#include <condition_variable>

#include "locks/kubernetes_lease_store.h"
#include "runner/kube/retry.h"

namespace envgate::locks {
namespace {

// Whether `delivered` is a later version than `known` (what the waiter read or wrote).
// The API server's resourceVersions are etcd revisions; others are only compared equal.
bool newer(const std::string& delivered, const std::string& known) {
    auto d = kube::resource_version_number(delivered);
    auto k = kube::resource_version_number(known);
    if (d && k) {
        return *d > *k;
    }
    return delivered != known;
}

}  // namespace

KubernetesLeaseStore::~KubernetesLeaseStore() {
    for (auto& [name, follower] : m_followers) {
        std::lock_guard lock(follower->mutex);
        follower->stopping = true;
        follower->cv.notify_all();
    }
    if (!m_followers.empty()) {
        m_api->cancel_watches();
    }
    for (auto& [name, follower] : m_followers) {
        if (follower->thread.joinable()) {
            follower->thread.join();
        }
    }
}

int KubernetesLeaseStore::watches_opened() const {
    int total = 0;
    for (const auto& [name, follower] : m_followers) {
        std::lock_guard lock(follower->mutex);
        total += follower->watches;
    }
    return total;
}

// Watches the Lease from `version` until stopped, a 410 Gone (the waiter re-reads and
// the next wait starts afresh) or an error; a normal end of a watch resumes it.
void KubernetesLeaseStore::follow(LeaseFollower& f, const std::string& name) {
    kube::Random random;
    Status end;
    for (;;) {
        kube::WatchOptions options;
        options.field_selector = "metadata.name=" + lease_name(name);
        options.allow_bookmarks = true;
        options.timeout_seconds = static_cast<int>(300 + 300 * random.uniform());
        {
            std::lock_guard lock(f.mutex);
            if (f.stopping) {
                break;
            }
            options.resource_version = f.resume;  // empty: the Lease, if any, comes as ADDED
            ++f.watches;
        }
        int delivered = 0;
        end = m_api->watch(kube::leases(m_namespace), options, [&](const kube::WatchEvent& e) {
            std::lock_guard lock(f.mutex);
            ++delivered;
            std::string rv = kube::resource_version_of(e.object);
            if (!rv.empty()) {
                f.resume = rv;
            }
            if (e.type != kube::EventType::bookmark) {
                f.version = rv;
                f.lease =
                    e.type == kube::EventType::deleted ? std::nullopt : std::optional(e.object);
                f.cv.notify_all();
            }
            return f.stopping ? kube::WatchNext::stop : kube::WatchNext::proceed;
        });
        if (!end.is_ok()) {
            break;
        }
        if (delivered == 0) {  // a server that ends watches at once is not asked in a loop
            std::unique_lock lock(f.mutex);
            f.cv.wait_for(lock, std::chrono::seconds(1), [&] { return f.stopping; });
        }
    }
    std::lock_guard lock(f.mutex);
    f.ended = true;
    f.status = end;
    f.cv.notify_all();
}

LeaseFollower& KubernetesLeaseStore::follower(const std::string& name, const std::string& version) {
    auto& slot = m_followers[name];
    if (slot) {
        std::unique_lock lock(slot->mutex);
        if (!slot->ended) {
            return *slot;
        }
        lock.unlock();
        slot->thread.join();
    }
    slot = std::make_unique<LeaseFollower>();
    slot->resume = version;
    LeaseFollower* f = slot.get();
    slot->thread = std::thread([this, f, name] { follow(*f, name); });
    return *slot;
}

// Waits until the follower delivers a Lease newer than `version`, `max_wait` passes,
// or `interrupted` says so (looked at every 100 ms: a signal does not wake a wait).
Result<WaitEnd> KubernetesLeaseStore::wait_for_change(const std::string& name,
                                                      const std::string& version, Duration max_wait,
                                                      const std::function<bool()>& interrupted) {
    TRY(check_lock_name(name));
    LeaseFollower& f = follower(name, version);
    const auto until = std::chrono::steady_clock::now() + max_wait;
    std::unique_lock lock(f.mutex);
    while (!f.ended && !(!f.version.empty() && newer(f.version, version))) {
        if (std::chrono::steady_clock::now() >= until || (interrupted && interrupted())) {
            lock.unlock();
            return end_of_wait(name, version, Status::ok(), std::nullopt);
        }
        f.cv.wait_for(lock, std::chrono::milliseconds(100));
    }
    if (!f.version.empty() && newer(f.version, version)) {
        std::optional<kube::WatchEvent> event =
            kube::WatchEvent{f.lease ? kube::EventType::modified : kube::EventType::deleted,
                             f.lease.value_or(nlohmann::json::object())};
        lock.unlock();
        return end_of_wait(name, version, Status::ok(), event);
    }
    Status status = f.status;
    lock.unlock();
    return end_of_wait(name, version, status, std::nullopt);
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
    // Nothing newer than what we know arrived: the Lease is still the one we know,
    // so the next read needs no GET.
    auto it = m_seen.find(name);
    if (it != m_seen.end() && kube::resource_version_of(it->second) == version) {
        m_delivered[name] = it->second;
    }
    return WaitEnd::timed_out;
}

}  // namespace envgate::locks
