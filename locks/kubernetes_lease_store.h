// KubernetesLeaseStore: lock records as coordination.k8s.io/v1 Leases named
// `envgate-<lock>` (label envgate.dev/lock=true). spec.holderIdentity, acquireTime,
// renewTime, leaseDurationSeconds and leaseTransitions mirror the record; the whole
// record (same JSON as the file store) sits in the annotation envgate.dev/record.
// version = metadata.resourceVersion; every write is a create (409 AlreadyExists)
// or a PUT carrying the version read (409 Conflict), both Code::conflict. Each new
// history entry is also posted as a core v1 Event on the Lease, best effort. A
// waiter blocks in wait_for_change on one long-lived watch of its Lease per process
// (a thread per lock, started by the first wait from the version it read).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "locks/lock_store.h"
#include "runner/kube/kube_api.h"

namespace envgate::locks {

inline constexpr const char* k_lease_prefix = "envgate-";
inline constexpr const char* k_lock_label = "envgate.dev/lock";
inline constexpr const char* k_record_annotation = "envgate.dev/record";

// One long-lived watch of one Lease, shared with the thread that runs it.
struct LeaseFollower {
    std::mutex mutex;
    std::condition_variable cv;
    std::string resume;                   // where the next watch starts (events and bookmarks)
    std::string version;                  // of the newest Lease event delivered ("" before any)
    std::optional<nlohmann::json> lease;  // that Lease; nullopt after DELETED
    bool ended = false;                   // the thread stopped: `status` says why
    Status status;
    bool stopping = false;
    int watches = 0;
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
    Result<std::string> write(const std::string& name, const LockRecord& record,
                              const std::string& version) override;
    Result<WaitEnd> wait_for_change(const std::string& name, const std::string& version,
                                    Duration max_wait,
                                    const std::function<bool()>& interrupted) override;
    Result<std::vector<std::string>> list() override;
    std::string describe() const override;

    // Watch requests opened so far by the waits (for tests and benchmarks).
    int watches_opened() const;

  private:
    kube::ResourceRef lease_ref(const std::string& name) const;
    Result<nlohmann::json> fetch(const std::string& name);
    LeaseFollower& follower(const std::string& name, const std::string& version);
    void follow(LeaseFollower& f, const std::string& name);
    Result<WaitEnd> end_of_wait(const std::string& name, const std::string& version,
                                const Status& watched,
                                const std::optional<kube::WatchEvent>& event);
    // The object a write starts from: the one last seen at `version` (keeping
    // labels and annotations others added), else a bare Lease.
    nlohmann::json base_object(const std::string& name, const std::string& version);
    void remember(const std::string& name, const nlohmann::json& lease);
    void post_events(const std::string& name, const LockRecord& record, std::int64_t previous_seq,
                     const nlohmann::json& lease);

    std::shared_ptr<kube::KubeApi> m_api;
    std::string m_namespace;
    std::mutex m_mutex;
    std::map<std::string, nlohmann::json> m_seen;       // lock -> Lease last read or written
    std::map<std::string, nlohmann::json> m_delivered;  // lock -> Lease a watch delivered
    // lock -> its watch; only the thread that calls wait_for_change touches the map.
    std::map<std::string, std::unique_ptr<LeaseFollower>> m_followers;
};

// The name of the Lease that stores lock `lock`: "envgate-<lock>".
std::string lease_name(const std::string& lock);
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
