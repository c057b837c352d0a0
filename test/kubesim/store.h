// kubesim's object store: every object of every resource under one global, increasing
// resourceVersion, with a bounded history of changes that watches replay from. Old
// resourceVersions really expire (history limit or an explicit compaction), so 410 is real.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"

namespace kubesim {

using json = nlohmann::json;
using envgate::Code;
using envgate::Result;
using envgate::Status;

// One change, as a watch delivers it.
struct Change {
    uint64_t rv = 0;
    std::string resource;  // storage resource, e.g. "pods", "events"
    std::string ns;
    std::string type;  // ADDED, MODIFIED, DELETED
    std::shared_ptr<const json> object;
    std::shared_ptr<const json> previous;  // before a MODIFIED or DELETED, else null
};

class Store {
  public:
    explicit Store(size_t history_limit);

    // Creates `obj` (namespace and name from its metadata); sets uid, resourceVersion,
    // creationTimestamp and generation. 409 AlreadyExists if the name is taken.
    Result<json> create(const std::string& resource, json obj);
    Result<json> get(const std::string& resource, const std::string& ns,
                     const std::string& name) const;
    // All objects of `resource` in `ns` (all namespaces when empty) that `keep` accepts,
    // sorted by namespace and name, with the store's resourceVersion at the time.
    std::vector<json> list(const std::string& resource, const std::string& ns,
                           const std::function<bool(const json&)>& keep, uint64_t* rv) const;
    // Read-modify-write under the store lock. `fn` may refuse with a Status. When
    // `expected_rv` is non-empty it must equal the stored resourceVersion (409 Conflict).
    // An object with a deletionTimestamp and no finalizers is removed (pods only once
    // their deletionGracePeriodSeconds is 0, i.e. the kubelet has finished them).
    Result<json> mutate(const std::string& resource, const std::string& ns, const std::string& name,
                        const std::string& expected_rv, const std::function<Status(json&)>& fn);

    uint64_t current_rv() const;
    // Waits until there are changes after `after_rv`, `deadline` passes or `stop()` is true.
    // Returns false (410) when `after_rv` is older than the history still held.
    bool wait_changes(uint64_t after_rv, std::chrono::steady_clock::time_point deadline,
                      const std::function<bool()>& stop, std::vector<Change>& out);
    // The oldest resourceVersion a watch may still start from.
    uint64_t oldest_rv() const;
    // Drops all history: every resourceVersion before now becomes too old.
    void compact();
    // Wakes waiting watches (e.g. after a fault closed them).
    void wake_all();
    // `fn` runs (under the store lock: keep it short) after every change.
    void on_change(std::function<void(const Change&)> fn);

  private:
    void commit_locked(const std::string& key, const std::string& resource, json obj,
                       const std::string& type, const json* previous);
    void record_locked(Change change);

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<std::string, json> m_objects;
    std::deque<Change> m_history;
    size_t m_history_limit;
    uint64_t m_rv = 1;
    uint64_t m_oldest_rv = 1;
    std::vector<std::function<void(const Change&)>> m_listeners;
};

// "jobs.batch", "leases.coordination.k8s.io", "pods": the name errors use.
std::string qualified_resource(const std::string& resource);
// Store key "resource/namespace/name".
std::string object_key(const std::string& resource, const std::string& ns, const std::string& name);
// "2026-11-29T17:00:00Z" now, and a random RFC 4122 v4 uid.
std::string now_rfc3339();
std::string now_rfc3339_micro();
std::string new_uid();

}  // namespace kubesim
