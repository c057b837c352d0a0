// KubernetesLeaseStore::wait_for_change: a waiter blocks on one long-lived list+watch of
// its lock's Leases (the lock's own and its waiters', a LeaseFollower per lock, started
// by the first wait, resumed from the last resourceVersion when the server ends it,
// each watch asking 5-10 min as client-go's reflector does) instead of re-reading them
// or opening a watch per wait; what the watch delivered serves the next read.
#include <condition_variable>

#include "locks/kubernetes_lease_store.h"
#include "runner/kube/retry.h"

namespace envgate::locks {
namespace {

using nlohmann::json;

std::string meta_string(const json& object, const char* key) {
    const json* meta =
        object.is_object() && object.contains("metadata") ? &object["metadata"] : nullptr;
    if (meta == nullptr || !meta->is_object() || !meta->contains(key) ||
        !(*meta)[key].is_string()) {
        return {};
    }
    return (*meta)[key].get<std::string>();
}

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
        MutexLock lock(follower->mutex);
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
        MutexLock lock(follower->mutex);
        total += follower->watches;
    }
    return total;
}

// Lists the Leases of lock `name` (its own and its waiters', by the label
// envgate.dev/lock-name), then watches them from the list's resourceVersion until
// stopped or an error; a normal end of a watch resumes it, a 410 Gone lists again.
void KubernetesLeaseStore::follow(LeaseFollower& f, const std::string& name) {
    kube::Random random;
    Status end;
    const std::string selector = std::string(k_lock_name_label) + "=" + name;
    for (;;) {
        std::string resume;
        {
            MutexLock lock(f.mutex);
            if (f.stopping) {
                break;
            }
            resume = f.resume;
        }
        if (resume.empty()) {
            kube::ListOptions list_options;
            list_options.label_selector = selector;
            auto listed = m_api->list(kube::leases(m_namespace), list_options);
            if (!listed.is_ok()) {
                end = listed.status();
                break;
            }
            MutexLock lock(f.mutex);
            ++f.lists;
            f.leases.clear();
            for (const auto& item : listed->items) {
                f.leases[meta_string(item, "name")] = item;
            }
            f.resume = f.position = listed->resource_version;
            f.synced = true;
            f.cv.notify_all();
            resume = f.resume;
        }
        kube::WatchOptions options;
        options.label_selector = selector;
        options.allow_bookmarks = true;
        options.timeout_seconds = static_cast<int>(300 + 300 * random.uniform());
        options.resource_version = resume;
        {
            MutexLock lock(f.mutex);
            ++f.watches;
        }
        int delivered = 0;
        end = m_api->watch(kube::leases(m_namespace), options, [&](const kube::WatchEvent& e) {
            MutexLock lock(f.mutex);
            ++delivered;
            std::string rv = kube::resource_version_of(e.object);
            if (!rv.empty()) {
                f.resume = f.position = rv;
            }
            if (e.type == kube::EventType::deleted) {
                f.leases.erase(meta_string(e.object, "name"));
            } else if (e.type != kube::EventType::bookmark) {
                f.leases[meta_string(e.object, "name")] = e.object;
            }
            f.cv.notify_all();
            return f.stopping ? kube::WatchNext::stop : kube::WatchNext::proceed;
        });
        if (end.code() == Code::gone) {
            MutexLock lock(f.mutex);
            f.resume.clear();  // compacted: list again
            continue;
        }
        if (!end.is_ok()) {
            break;
        }
        if (delivered == 0) {  // a server that ends watches at once is not asked in a loop
            MutexLock lock(f.mutex);
            f.cv.wait_for(lock, std::chrono::seconds(1),
                          [&]() REQUIRES(f.mutex) { return f.stopping; });
        }
    }
    MutexLock lock(f.mutex);
    f.ended = true;
    f.status = end;
    f.cv.notify_all();
}

LeaseFollower& KubernetesLeaseStore::follower(const std::string& name) {
    auto& slot = m_followers[name];
    if (slot) {
        bool ended = false;
        {
            MutexLock lock(slot->mutex);
            ended = slot->ended;
        }
        if (!ended) {
            return *slot;
        }
        slot->thread.join();
    }
    slot = std::make_unique<LeaseFollower>();
    LeaseFollower* f = slot.get();
    slot->thread = std::thread([this, f, name] { follow(*f, name); });
    return *slot;
}

// What the follower of `name` holds, once it has listed and caught up with the newest
// version this process wrote or read (at most 2 s, else nullopt: the caller asks).
std::optional<std::pair<std::optional<json>, kube::ObjectList>> KubernetesLeaseStore::cached(
    const std::string& name) {
    auto it = m_followers.find(name);
    if (it == m_followers.end()) {
        return std::nullopt;
    }
    std::string floor;
    {
        MutexLock lock(m_mutex);
        floor = m_known[name];
    }
    LeaseFollower& f = *it->second;
    MutexLock lock(f.mutex);
    auto caught_up = [&]() REQUIRES(f.mutex) {
        return f.ended || (f.synced && (floor.empty() || !newer(floor, f.position)));
    };
    if (!f.cv.wait_for(lock, std::chrono::seconds(2), caught_up) || f.ended) {
        return std::nullopt;
    }
    std::optional<json> lease;
    kube::ObjectList waiters;
    for (const auto& [lease_name_, object] : f.leases) {
        if (lease_name_ == lease_name(name)) {
            lease = object;
        } else {
            waiters.items.push_back(object);
        }
    }
    waiters.resource_version = f.position;
    return std::pair{lease, waiters};
}

// Waits until the follower delivers something newer than `version`, `max_wait`
// passes, or `interrupted` says so (looked at every 100 ms: a signal does not wake a
// wait). Every change wakes it (the scope is not used): a wake costs no API request,
// only a look at what the one watch already delivered.
Result<WaitEnd> KubernetesLeaseStore::wait_for_change(const std::string& name,
                                                      const std::string& version, Duration max_wait,
                                                      const std::function<bool()>& interrupted,
                                                      const WaitScope& /*scope*/) {
    TRY(check_lock_name(name));
    LeaseFollower& f = follower(name);
    const auto until = std::chrono::steady_clock::now() + max_wait;
    MutexLock lock(f.mutex);
    auto changed = [&]() REQUIRES(f.mutex) {
        return f.synced && !f.position.empty() && (version.empty() || newer(f.position, version));
    };
    while (!f.ended && !changed()) {
        if (std::chrono::steady_clock::now() >= until || (interrupted && interrupted())) {
            return WaitEnd::timed_out;
        }
        f.cv.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
    }
    if (changed()) {
        return WaitEnd::changed;
    }
    Status status = f.status;
    lock.unlock();
    if (status.code() == Code::gone || status.is_ok()) {
        return WaitEnd::changed;
    }
    return status.with_context("lock " + name);
}

}  // namespace envgate::locks
