// An in-memory KubeApi for unit tests (ninja's fakes, leveldb's SpecialEnv): it keeps
// objects with a global resourceVersion (create/update/patch/remove, Conflict on a stale
// RV or DELETE precondition, AlreadyExists, watch history with 410 after compact()),
// records every call in calls_made ("update leases/envgate-gprd"), and fails on demand:
// fail_next(Code::conflict).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/time.h"
#include "runner/kube/kube_api.h"

namespace envgate::test {

struct FakeCall {
    std::string verb;  // get, list, create, update, patch, remove, watch, logs
    kube::ResourceRef ref;
    nlohmann::json body;                // create/update/patch
    std::string label_selector;         // list/watch
    std::string field_selector;         // list/watch
    std::string resource_version;       // watch
    kube::Preconditions preconditions;  // remove
};

class FakeKubeApi : public kube::KubeApi {
  public:
    // `clock` (optional) stamps creationTimestamp; without it a fixed time is used.
    explicit FakeKubeApi(Clock* clock = nullptr) : m_clock(clock) {}

    Result<nlohmann::json> get(const kube::ResourceRef& ref) override;
    Result<kube::ObjectList> list(const kube::ResourceRef& collection,
                                  const kube::ListOptions& options) override;
    Result<nlohmann::json> create(const kube::ResourceRef& ref,
                                  const nlohmann::json& object) override;
    Result<nlohmann::json> update(const kube::ResourceRef& ref,
                                  const nlohmann::json& object) override;
    Result<nlohmann::json> patch(const kube::ResourceRef& ref,
                                 const nlohmann::json& merge_patch) override;
    // As the API server: a precondition (uid, resourceVersion) that does not match the
    // stored object is 409 Conflict, and the object stays.
    Status remove(const kube::ResourceRef& ref, kube::Propagation propagation,
                  const kube::Preconditions& preconditions = {}) override;
    // Delivers the history after options.resource_version (or a synthetic ADDED snapshot
    // when it is empty or "0"), then asks the idle hook; ends normally when it returns false.
    Status watch(const kube::ResourceRef& collection, const kube::WatchOptions& options,
                 const kube::WatchCallback& on_event) override;
    Result<std::string> logs(const kube::ResourceRef& pod,
                             const kube::LogOptions& options) override;

    // The next call of `verb` (any verb when empty) fails with `code`. Queued in order.
    void fail_next(Code code, std::string verb = {});
    // Stores `object` at `ref` as a controller would: no call recorded, RV bumped, an
    // event (ADDED or MODIFIED) added to the watch history. Returns the stored object.
    nlohmann::json seed(const kube::ResourceRef& ref, nlohmann::json object);
    // Edits a stored object in place as a controller would; false if it does not exist.
    bool mutate(const kube::ResourceRef& ref, const std::function<void(nlohmann::json&)>& edit);
    // Deletes a stored object as a controller would (DELETED event, no call recorded).
    bool erase(const kube::ResourceRef& ref);
    std::optional<nlohmann::json> object(const kube::ResourceRef& ref) const;
    void set_logs(const kube::ResourceRef& pod, const std::string& container, bool previous,
                  std::string text);
    // Forgets the watch history: a watch from any older resourceVersion gets 410 Gone.
    void compact();
    // Called when a watch has delivered everything; return true after changing something
    // to keep the watch going, false to end the stream.
    void set_watch_idle_hook(std::function<bool()> hook) { m_idle_hook = std::move(hook); }
    std::string resource_version() const;

    std::vector<std::string> calls_made;  // "<verb> <resource>[/<name>]"
    std::vector<FakeCall> calls;

  private:
    struct Event {
        std::int64_t rv;
        kube::EventType type;
        std::string collection;  // key_of_collection(ref)
        nlohmann::json object;
    };
    struct Failure {
        Code code;
        std::string verb;
    };

    Status record(FakeCall call);
    nlohmann::json store(const kube::ResourceRef& ref, nlohmann::json object, kube::EventType type);
    void erase_locked(std::map<std::string, nlohmann::json>::iterator it,
                      const kube::ResourceRef& ref);
    void append_event(const kube::ResourceRef& ref, kube::EventType type,
                      const nlohmann::json& object);
    std::vector<Event> events_after(std::int64_t rv, const kube::ResourceRef& collection,
                                    const kube::WatchOptions& options) const;
    std::string now_text() const;
    kube::ObjectList snapshot(const kube::ResourceRef& collection, const std::string& labels,
                              const std::string& fields) const;

    Clock* m_clock;
    mutable std::mutex m_mutex;
    std::map<std::string, nlohmann::json> m_objects;  // key_of(ref) -> object
    std::vector<Event> m_history;
    std::vector<Failure> m_failures;
    std::map<std::string, std::string> m_logs;
    std::function<bool()> m_idle_hook;
    std::int64_t m_rv = 100;
    std::int64_t m_compacted = 0;
    std::int64_t m_uids = 0;
};

// Whether `object` matches a label selector ("a=b,c!=d,e,!f,g in (x,y)") and a field
// selector ("metadata.name=x", dotted paths, = == !=). Shared with kubesim-style tests.
bool matches_label_selector(const nlohmann::json& object, const std::string& selector);
bool matches_field_selector(const nlohmann::json& object, const std::string& selector);

}  // namespace envgate::test
