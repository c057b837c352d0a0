// KubernetesLeaseStore: lock records as coordination.k8s.io/v1 Leases named
// `envgate-<lock>` (label envgate.dev/lock=true). spec.holderIdentity, acquireTime,
// renewTime, leaseDurationSeconds and leaseTransitions mirror the record; the whole
// record (same JSON as the file store) sits in the annotation envgate.dev/record.
// version = metadata.resourceVersion; every write is a create (409 AlreadyExists)
// or a PUT carrying the version read (409 Conflict), both Code::conflict. Each new
// history entry is also posted as a core v1 Event on the Lease, best effort. The
// queue: a Lease per waiter, `envgate-<lock>-w-<hash of its id>`, labelled
// envgate.dev/lock-name=<lock> like the lock's own Lease, renewed by its waiter alone.
// A waiter blocks in wait_for_change on one long-lived list+watch of that label per
// process (a thread per lock, started by the first wait), and reads the lock and its
// queue from what the watch delivered.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "locks/lock_store.h"
#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/cluster_keys.h"
#include "runner/kube/kube_api.h"

namespace envgate::locks {

// One long-lived list+watch of the Leases of one lock (its own and its waiters'),
// shared with the thread that runs it: a cache of them, as client-go's informer keeps.
// Threads: the follower's thread (KubernetesLeaseStore::follow) writes the cache;
// the store's caller reads it (cached, wait_for_change) and sets `stopping`; `mutex`
// guards every field but `thread`, which only the store's caller starts and joins.
struct LeaseFollower {
    Mutex mutex;
    CondVar cv;  // the cache changed, the thread ended, or stopping was set
    std::string resume GUARDED_BY(mutex);    // where the next watch starts ("": list first)
    std::string position GUARDED_BY(mutex);  // the newest resourceVersion delivered
    std::map<std::string, nlohmann::json> leases GUARDED_BY(mutex);  // by name, at `position`
    bool synced GUARDED_BY(mutex) = false;                           // listed at least once
    bool ended GUARDED_BY(mutex) = false;  // the thread stopped: `status` says why
    Status status GUARDED_BY(mutex);
    bool stopping GUARDED_BY(mutex) = false;
    int watches GUARDED_BY(mutex) = 0;
    int lists GUARDED_BY(mutex) = 0;
    std::thread thread;
};

class KubernetesLeaseStore : public LockStore {
  public:
    KubernetesLeaseStore(std::shared_ptr<kube::KubeApi> api, std::string namespace_name);
    // Ends the Lease watches (cancel_watches on the client) and joins their threads.
    ~KubernetesLeaseStore() override;
    KubernetesLeaseStore(const KubernetesLeaseStore&) = delete;
    KubernetesLeaseStore& operator=(const KubernetesLeaseStore&) = delete;

    Result<Versioned> read(const std::string& name) override;
    Result<Versioned> read_record(const std::string& name) override;
    Result<std::string> write(const std::string& name, const LockRecord& record,
                              const std::string& version) override;
    Result<std::string> write_waiter(const std::string& name, const Waiter& waiter,
                                     const std::string& version) override;
    Status remove_waiter(const std::string& name, const std::string& id,
                         const std::string& version = {}) override;
    Result<WaitEnd> wait_for_change(const std::string& name, const std::string& version,
                                    Duration max_wait, const std::function<bool()>& interrupted,
                                    const WaitScope& scope) override;
    Result<std::vector<std::string>> list() override;
    std::string describe() const override;

    // Watch requests opened so far by the waits (for tests and benchmarks).
    int watches_opened() const;

  private:
    kube::ResourceRef lease_ref(const std::string& name) const;
    LeaseFollower& follower(const std::string& name);
    void follow(LeaseFollower& f, const std::string& name);
    // The lock's Lease and its waiters' as the follower has them, once it has caught up
    // with what this process wrote or read; nullopt when there is no live follower.
    std::optional<std::pair<std::optional<nlohmann::json>, kube::ObjectList>> cached(
        const std::string& name);
    Result<Versioned> decode(const std::string& name, const std::optional<nlohmann::json>& lease,
                             const kube::ObjectList& waiters);
    void known(const std::string& name, const std::string& version);
    // The object a write starts from: the one last seen at `version` (keeping
    // labels and annotations others added), else a bare Lease.
    nlohmann::json base_object(const std::string& name, const std::string& version);
    void remember(const std::string& name, const nlohmann::json& lease);
    void post_events(const std::string& name, const LockRecord& record, std::int64_t previous_seq,
                     const nlohmann::json& lease);

    std::shared_ptr<kube::KubeApi> m_api;
    std::string m_namespace;
    // Threads: in the product each thread that acts on a lock has a store of its own (the
    // heartbeat's is separate); m_mutex guards what a shared one's callers would both
    // touch. Each follower runs a thread of its own (see LeaseFollower).
    Mutex m_mutex;
    // lock -> Lease last read or written
    std::map<std::string, nlohmann::json> m_seen GUARDED_BY(m_mutex);
    // lock -> newest version we wrote or read
    std::map<std::string, std::string> m_known GUARDED_BY(m_mutex);
    // lock -> its watch; only the thread that calls wait_for_change touches the map.
    std::map<std::string, std::unique_ptr<LeaseFollower>> m_followers;
};

// The name of the Lease that stores lock `lock`: "envgate-<lock>".
std::string lease_name(const std::string& lock);
// The name of the Lease of waiter `id` in the queue of `lock`.
std::string waiter_lease_name(const std::string& lock, const std::string& id);
// The Lease that stores `record` (without metadata.resourceVersion).
nlohmann::json lease_from_record(const std::string& namespace_name, const LockRecord& record);
// The record a Lease holds: the annotation, with the mirrored spec times, duration
// and transitions winning. `invalid` (naming the annotation or spec field) when the
// annotation is missing (a Lease envgate did not make), not JSON, not a lock record,
// or when spec.holderIdentity contradicts it: no write replaces such a Lease.
Result<LockRecord> record_from_lease(const std::string& name, const nlohmann::json& lease);
// The core v1 Event for one transition of lock `name` (Normal, or Warning for fail
// and vanished), involving `lease`.
nlohmann::json event_for_transition(const std::string& name, const Transition& t,
                                    const nlohmann::json& lease);

}  // namespace envgate::locks
