// KubeApi: the handful of Kubernetes API verbs envgate uses, over raw JSON objects.
// One real implementation (HttpKubeApi) and an in-memory fake (test/fakes/). Every
// failure is a typed Status (NotFound, Conflict, AlreadyExists, Gone, ...), see errors.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/base/vocab/status.h"

namespace envgate::kube {

// Where an object or a collection lives. `group_version` is "v1" for the core group,
// else "group/version"; `resource` is the plural ("leases"); an empty `name` addresses
// the collection, an empty `namespace_name` a cluster-scoped or all-namespaces one.
struct ResourceRef {
    std::string group_version;
    std::string resource;
    std::string namespace_name;
    std::string name;

    ResourceRef with_name(std::string object_name) const;
    // The URL path below the server prefix, e.g.
    // "/apis/coordination.k8s.io/v1/namespaces/locks/leases/envgate-gprd".
    std::string path() const;
    // How messages name it: "leases/envgate-gprd", or "leases" for a collection.
    std::string describe() const;
    bool operator==(const ResourceRef&) const = default;
};

ResourceRef leases(std::string namespace_name, std::string name = {});
ResourceRef jobs(std::string namespace_name, std::string name = {});
ResourceRef pods(std::string namespace_name, std::string name = {});
ResourceRef core_events(std::string namespace_name);

struct ListOptions {
    std::string label_selector;  // "app=x,tier!=db"
    std::string field_selector;  // "metadata.name=my-job"
};

struct ObjectList {
    std::vector<nlohmann::json> items;
    std::string resource_version;  // of the list: where a watch starts
};

enum class EventType { added, modified, deleted, bookmark };
const char* event_type_name(EventType type);  // "ADDED", ...
// The type a watch event's "type" names; nullopt for any other word (ERROR included).
std::optional<EventType> parse_event_type(std::string_view name);

// "namespace/name" of an object, and its metadata.resourceVersion ("" when absent).
std::string object_key(const nlohmann::json& object);
std::string resource_version_of(const nlohmann::json& object);
// A resourceVersion as a number; nullopt when it is not one. The Kubernetes API
// server's are etcd revisions, one counter for every resource, so they order writes;
// Kubernetes does not promise that of other servers: callers fall back to equality.
std::optional<std::uint64_t> resource_version_number(const std::string& version);

struct WatchEvent {
    EventType type = EventType::added;
    nlohmann::json object;
};

struct WatchOptions {
    std::string label_selector;
    std::string field_selector;
    std::string resource_version;  // empty: "most recent", with synthetic ADDED events
    bool allow_bookmarks = true;
    std::optional<int> timeout_seconds;
};

enum class WatchNext { proceed, stop };
using WatchCallback = std::function<WatchNext(const WatchEvent&)>;

enum class Propagation { background, foreground, orphan };

// What a DELETE requires of the object it removes (DeleteOptions.preconditions): each
// field set must match the stored object, else the server removes nothing and answers
// 409 Conflict (Code::conflict). Empty fields are not checked.
struct Preconditions {
    std::string uid;
    std::string resource_version;
    bool empty() const { return uid.empty() && resource_version.empty(); }
};

struct LogOptions {
    std::string container;  // empty: the pod's only container
    bool previous = false;  // the last terminated instance
    std::optional<int> tail_lines;
};

class KubeApi {
  public:
    virtual ~KubeApi() = default;

    virtual Result<nlohmann::json> get(const ResourceRef& ref) = 0;
    virtual Result<ObjectList> list(const ResourceRef& collection, const ListOptions& options) = 0;
    // POSTs `object` to the collection of `ref` (its name comes from the object).
    virtual Result<nlohmann::json> create(const ResourceRef& ref, const nlohmann::json& object) = 0;
    // PUT. `object` carries the metadata.resourceVersion it was read at; a stale one
    // fails with Code::conflict.
    virtual Result<nlohmann::json> update(const ResourceRef& ref, const nlohmann::json& object) = 0;
    // JSON merge patch (RFC 7386).
    virtual Result<nlohmann::json> patch(const ResourceRef& ref,
                                         const nlohmann::json& merge_patch) = 0;
    // DELETE. With `preconditions`, only the object they describe: one written since
    // (another resourceVersion) or made anew (another uid) stays, and Code::conflict says so.
    virtual Status remove(const ResourceRef& ref, Propagation propagation,
                          const Preconditions& preconditions = {}) = 0;
    // Streams events of `collection` to `on_event` until the server ends the stream (ok),
    // the callback returns WatchNext::stop (ok), or an error. An ERROR event ends the watch
    // and comes back as its typed Status: 410 Expired/Gone as Code::gone.
    virtual Status watch(const ResourceRef& collection, const WatchOptions& options,
                         const WatchCallback& on_event) = 0;
    virtual Result<std::string> logs(const ResourceRef& pod, const LogOptions& options) = 0;
    // Ends the watches of this client, from another thread, and makes every later call
    // fail with Code::cancelled: how a caller stops the thread that watches for it.
    virtual void cancel_watches() {}
    // Asks the server to validate and admit `object` as create would, storing nothing
    // (dryRun=All, fieldValidation=Strict): the preflight before the lock is taken. A
    // client without a server (a fake) has nothing to ask and accepts.
    virtual Status create_dry_run(const ResourceRef& ref, const nlohmann::json& object) {
        (void)ref;
        (void)object;
        return Status::ok();
    }
};

}  // namespace envgate::kube
