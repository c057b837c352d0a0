#include "locks/kubernetes_lease_store.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>

#include "locks/record_json.h"
#include "runner/base/utf8.h"

namespace envgate::locks {
namespace {

using nlohmann::json;

constexpr std::size_t k_event_message_limit = 1024;

std::string string_field(const json& object, const char* key) {
    if (!object.is_object()) {
        return {};
    }
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& object_field(const json& object, const char* key) {
    static const json k_empty = json::object();
    if (!object.is_object()) {
        return k_empty;
    }
    auto it = object.find(key);
    return it != object.end() && it->is_object() ? *it : k_empty;
}

std::string meta_string(const json& object, const char* key) {
    return string_field(object_field(object, "metadata"), key);
}

// Whole seconds, rounded up (leaseDurationSeconds is an int32 of seconds).
std::int64_t whole_seconds(Duration d) {
    return (d.count() + 999'999) / 1'000'000;
}

json lease_spec(const LockRecord& r) {
    json spec = {{"leaseTransitions", r.lease_transitions}};
    // The API server refuses a leaseDurationSeconds <= 0 (422): a lock nobody holds (a
    // release or an unlock) has none, so the field is left out.
    if (whole_seconds(r.lease_duration) > 0) {
        spec["leaseDurationSeconds"] = whole_seconds(r.lease_duration);
    }
    if (r.holder) {
        spec["holderIdentity"] = r.holder->id;
    }
    if (r.acquired_at != TimePoint{}) {
        spec["acquireTime"] = format_rfc3339_micro(r.acquired_at);
    }
    if (r.renewed_at != TimePoint{}) {
        spec["renewTime"] = format_rfc3339_micro(r.renewed_at);
    }
    return spec;
}

Status spec_type_error(const char* key, const char* what) {
    return Status(Code::invalid, std::string("spec.") + key + ": expected " + what);
}

// The mirrored spec fields win over the annotation for times, duration and
// transitions; a field of the wrong type, or a holder that contradicts the
// annotation's, is an error (never guess who holds a lock).
Status overlay_spec(const json& spec, LockRecord& r) {
    auto present = [&](const char* key) { return spec.contains(key) && !spec[key].is_null(); };
    auto time_field = [&](const char* key, TimePoint& out) -> Status {
        if (!present(key)) {
            return Status::ok();
        }
        auto t = spec[key].is_string() ? parse_rfc3339(spec[key].get<std::string>()) : std::nullopt;
        if (!t) {
            return spec_type_error(key, "an RFC 3339 time");
        }
        out = *t;
        return Status::ok();
    };
    TRY(time_field("acquireTime", r.acquired_at));
    TRY(time_field("renewTime", r.renewed_at));
    for (const char* key : {"leaseDurationSeconds", "leaseTransitions"}) {
        if (present(key) && !spec[key].is_number_integer()) {
            return spec_type_error(key, "an integer");
        }
    }
    if (present("leaseDurationSeconds")) {
        // The API allows any positive int32; a lock lease outside 1 s .. a year is a
        // Lease someone else wrote, and would overflow `renewTime + lease`.
        std::int64_t seconds = spec["leaseDurationSeconds"].get<std::int64_t>();
        bool held = present("holderIdentity");
        if (seconds < 0 || (seconds == 0 && held) || seconds > 366LL * 24 * 3600) {
            return Status(Code::invalid, "spec.leaseDurationSeconds " + std::to_string(seconds) +
                                             " is not between 1 and 31622400 (a year)");
        }
        r.lease_duration = std::chrono::seconds(seconds);
    }
    if (present("leaseTransitions")) {
        r.lease_transitions = spec["leaseTransitions"].get<std::int64_t>();
    }
    if (present("holderIdentity") && !spec["holderIdentity"].is_string()) {
        return spec_type_error("holderIdentity", "a string");
    }
    std::string holder = string_field(spec, "holderIdentity");
    std::string recorded = r.holder ? r.holder->id : std::string();
    if (holder != recorded) {
        return Status(Code::invalid,
                      "spec.holderIdentity " + (holder.empty() ? "unset" : "\"" + holder + "\"") +
                          " contradicts annotation " + k_record_annotation + " (" +
                          state_name(r.state) +
                          (recorded.empty() ? "" : ", held by \"" + recorded + "\"") + ")");
    }
    return Status::ok();
}

std::int64_t last_seq(const LockRecord& r) {
    return r.history.empty() ? 0 : r.history.back().seq;
}

struct EventKind {
    const char* type;
    std::string reason;
};

// The Event of each transition the lock makes, by the word the policy gives it.
struct NamedEventKind {
    std::string_view what;
    EventKind kind;
};
const NamedEventKind k_event_kinds[] = {
    {"acquire", {"Normal", "Acquired"}}, {"takeover", {"Normal", "TakenOver"}},
    {"release", {"Normal", "Released"}}, {"unlock", {"Normal", "Unlocked"}},
    {"fail", {"Warning", "Failed"}},     {"vanished", {"Warning", "HolderVanished"}}};

EventKind event_kind(const std::string& what) {
    for (const NamedEventKind& named : k_event_kinds) {
        if (named.what == what) {
            return named.kind;
        }
    }
    std::string reason = what;
    if (!reason.empty()) {
        reason[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(reason[0])));
    }
    return {"Normal", reason};
}

// Like client-go's `<object>.<unix nanoseconds in hex>`; the low digits carry the
// sequence number so transitions at the same microsecond get distinct names.
std::string event_name(const std::string& lease, const Transition& t) {
    auto nanos = static_cast<unsigned long long>(t.at.time_since_epoch().count()) * 1000ULL +
                 static_cast<unsigned long long>(t.seq % 1000);
    char hex[32];
    std::snprintf(hex, sizeof(hex), "%llx", nanos);
    return lease + "." + hex;
}

// `lease` laid over the object last read (`base`, may be empty): keeps the labels,
// annotations and spec fields others added (client-go also PUTs the object it read).
json merge_onto(const json& base, json lease) {
    if (base.empty()) {
        return lease;
    }
    json merged = base;
    for (const char* key : {"labels", "annotations"}) {
        json& mine = merged["metadata"][key];
        mine = mine.is_object() ? mine : json::object();
        mine.update(lease["metadata"][key]);
    }
    json spec = object_field(base, "spec");
    for (const char* key : {"holderIdentity", "acquireTime", "renewTime", "leaseDurationSeconds"}) {
        spec.erase(key);
    }
    spec.update(lease["spec"]);
    merged["spec"] = std::move(spec);
    return merged;
}

}  // namespace

std::string lease_name(const std::string& lock) {
    return k_lease_prefix + lock;
}

json lease_from_record(const std::string& namespace_name, const LockRecord& record) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata",
             {{"name", lease_name(record.name)},
              {"namespace", namespace_name},
              {"labels",
               {{k_lock_label, "true"},
                {k_lock_name_label, record.name},
                {"app.kubernetes.io/managed-by", "envgate"}}},
              {"annotations", {{k_record_annotation, dump_json(to_json(stored_form(record)))}}}}},
            {"spec", lease_spec(record)}};
}

std::string waiter_lease_name(const std::string& lock, const std::string& id) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a of the id: names are DNS subdomains
    for (unsigned char c : id) {
        h = (h ^ c) * 1099511628211ULL;
    }
    char hex[24];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
    return lease_name(lock) + "-w-" + hex;
}

Result<LockRecord> record_from_lease(const std::string& name, const json& lease) {
    const json& annotations = object_field(object_field(lease, "metadata"), "annotations");
    const json& spec = object_field(lease, "spec");
    const std::string annotation = std::string("annotation ") + k_record_annotation;
    auto it = annotations.find(k_record_annotation);
    if (it == annotations.end()) {
        std::string holder = string_field(spec, "holderIdentity");
        return Status(Code::invalid,
                      "not made by envgate: it has no " + annotation +
                          (holder.empty() ? "" : " but spec.holderIdentity \"" + holder + "\"") +
                          " (another program may own this Lease)");
    }
    if (!it->is_string()) {
        return Status(Code::invalid, annotation + ": expected a string");
    }
    auto parsed = parse_record_text(it->get<std::string>());
    if (!parsed.is_ok()) {
        return parsed.status().with_context(annotation);
    }
    auto record = record_from_json(*parsed, name);
    if (!record.is_ok()) {
        return record.status().with_context(annotation);
    }
    TRY(overlay_spec(spec, *record));
    return record;
}

json event_for_transition(const std::string& name, const Transition& t, const json& lease) {
    const std::string lease_object = lease_name(name);
    const std::string ns = meta_string(lease, "namespace");
    EventKind kind = event_kind(t.what);
    std::string message = "lock " + name + ": " + t.what + " by " + t.who;
    if (!t.why.empty()) {
        message += ": " + t.why;
    }
    if (message.size() > k_event_message_limit) {
        message.resize(k_event_message_limit);
    }
    std::string at = format_rfc3339(t.at);
    return {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", event_name(lease_object, t)}, {"namespace", ns}}},
            {"involvedObject",
             {{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"name", lease_object},
              {"namespace", ns},
              {"uid", meta_string(lease, "uid")},
              {"resourceVersion", meta_string(lease, "resourceVersion")}}},
            {"reason", kind.reason},
            {"message", message},
            {"type", kind.type},
            {"action", t.what},
            {"source", {{"component", "envgate"}}},
            {"reportingComponent", "envgate"},
            {"firstTimestamp", at},
            {"lastTimestamp", at},
            {"count", 1}};
}

KubernetesLeaseStore::KubernetesLeaseStore(std::shared_ptr<kube::KubeApi> api,
                                           std::string namespace_name)
    : m_api(std::move(api)), m_namespace(std::move(namespace_name)) {}

kube::ResourceRef KubernetesLeaseStore::lease_ref(const std::string& name) const {
    return kube::leases(m_namespace, lease_name(name));
}

std::string KubernetesLeaseStore::describe() const {
    return "kubernetes store (Leases in namespace " + m_namespace + ")";
}

void KubernetesLeaseStore::remember(const std::string& name, const json& lease) {
    MutexLock lock(m_mutex);
    if (lease.is_null()) {
        m_seen.erase(name);
    } else {
        m_seen[name] = lease;
    }
}

json KubernetesLeaseStore::base_object(const std::string& name, const std::string& version) {
    MutexLock lock(m_mutex);
    auto it = m_seen.find(name);
    if (it != m_seen.end() && !version.empty() &&
        meta_string(it->second, "resourceVersion") == version) {
        return it->second;
    }
    return json::object();
}

void KubernetesLeaseStore::known(const std::string& name, const std::string& version) {
    MutexLock lock(m_mutex);
    std::string& known = m_known[name];
    auto v = kube::resource_version_number(version);
    auto k = kube::resource_version_number(known);
    if (v && (!k || *v > *k)) {
        known = version;
    }
}

namespace {

// A waiter's own Lease: spec mirrors it (holderIdentity, acquireTime = since,
// renewTime = last seen, leaseDurationSeconds = its TTL); the entry is the annotation.
json waiter_lease(const std::string& namespace_name, const std::string& lock, const Waiter& w) {
    json spec = {{"holderIdentity", w.who.id},
                 {"leaseDurationSeconds", std::max<std::int64_t>(1, whole_seconds(w.ttl))}};
    if (w.since != TimePoint{}) {
        spec["acquireTime"] = format_rfc3339_micro(w.since);
    }
    spec["renewTime"] = format_rfc3339_micro(w.last_seen);
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata",
             {{"name", waiter_lease_name(lock, w.who.id)},
              {"namespace", namespace_name},
              {"labels",
               {{k_lock_name_label, lock},
                {k_waiter_label, "true"},
                {"app.kubernetes.io/managed-by", "envgate"}}},
              {"annotations", {{k_waiter_annotation, dump_json(waiter_to_json(lock, w))}}}}},
            {"spec", spec}};
}

bool is_waiter_lease(const json& lease) {
    return string_field(object_field(object_field(lease, "metadata"), "labels"), k_waiter_label) ==
           "true";
}

}  // namespace

// The lock record from its Lease (absent: free), and the queue from the waiter Leases
// (sorted by name, so readers agree on the order of equal keys).
Result<Versioned> KubernetesLeaseStore::decode(const std::string& name,
                                               const std::optional<json>& lease,
                                               const kube::ObjectList& waiters) {
    Versioned v;
    if (!lease) {
        remember(name, nullptr);
        v.record.name = name;
    } else {
        auto record = record_from_lease(name, *lease);
        if (!record.is_ok()) {
            return record.status().with_context("Lease " + m_namespace + "/" + lease_name(name));
        }
        remember(name, *lease);
        v.record = std::move(record.value());
        v.version = meta_string(*lease, "resourceVersion");
    }
    std::vector<const json*> sorted;
    for (const json& item : waiters.items) {
        if (is_waiter_lease(item)) {
            sorted.push_back(&item);
        }
    }
    std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
        return meta_string(*a, "name") < meta_string(*b, "name");
    });
    for (const json* item : sorted) {
        const std::string where = "Lease " + m_namespace + "/" + meta_string(*item, "name");
        const json& annotations = object_field(object_field(*item, "metadata"), "annotations");
        std::string text = string_field(annotations, k_waiter_annotation);
        auto parsed = parse_record_text(text);
        if (!parsed.is_ok()) {
            return parsed.status().with_context(where + ": annotation " + k_waiter_annotation);
        }
        auto w = waiter_from_json(*parsed, name);
        if (!w.is_ok()) {
            return w.status().with_context(where + ": annotation " + k_waiter_annotation);
        }
        w->version = meta_string(*item, "resourceVersion");
        v.record.waiters.push_back(std::move(w.value()));
    }
    sort_queue(v.record.waiters);
    v.token = waiters.resource_version;
    return v;
}

Result<Versioned> KubernetesLeaseStore::read_record(const std::string& name) {
    TRY(check_lock_name(name));
    auto got = m_api->get(lease_ref(name));
    if (!got.is_ok() && got.status().code() != Code::not_found) {
        return got.status().with_context("lock " + name);
    }
    std::optional<json> lease;
    if (got.is_ok()) {
        lease = *got;
        known(name, meta_string(*got, "resourceVersion"));
    }
    kube::ObjectList none;
    TRY_ASSIGN(Versioned v, decode(name, lease, none));
    v.token = v.version;
    return v;
}

// From the follower's cache when one runs (no request: a woken waiter reads what woke
// it), else a GET of the lock's Lease and then a list of its waiters (a list is as new
// as the GET or newer, so it shows every waiter numbered before that version).
Result<Versioned> KubernetesLeaseStore::read(const std::string& name) {
    TRY(check_lock_name(name));
    if (auto cache = cached(name)) {
        std::optional<json> lease = cache->first;
        if (!lease) {  // absent, or a Lease of the previous format (not labelled yet)
            auto got = m_api->get(lease_ref(name));
            if (!got.is_ok() && got.status().code() != Code::not_found) {
                return got.status().with_context("lock " + name);
            }
            if (got.is_ok()) {
                lease = *got;
            }
        }
        return decode(name, lease, cache->second);
    }
    auto got = m_api->get(lease_ref(name));
    if (!got.is_ok() && got.status().code() != Code::not_found) {
        return got.status().with_context("lock " + name);
    }
    kube::ListOptions options;
    options.label_selector =
        std::string(k_lock_name_label) + "=" + name + "," + k_waiter_label + "=true";
    auto listed = m_api->list(kube::leases(m_namespace), options);
    if (!listed.is_ok()) {
        return listed.status().with_context("queue of lock " + name);
    }
    std::optional<json> lease;
    if (got.is_ok()) {
        lease = *got;
    }
    known(name, listed->resource_version);
    return decode(name, lease, *listed);
}

Result<std::string> KubernetesLeaseStore::write_waiter(const std::string& name, const Waiter& w,
                                                       const std::string& version) {
    TRY(check_lock_name(name));
    json lease = waiter_lease(m_namespace, name, w);
    Result<json> written = json();
    if (version.empty()) {
        written = m_api->create(kube::leases(m_namespace), lease);
    } else {
        lease["metadata"]["resourceVersion"] = version;
        written =
            m_api->update(kube::leases(m_namespace, waiter_lease_name(name, w.who.id)), lease);
    }
    if (!written.is_ok()) {
        Code code = written.status().code();
        if (code == Code::already_exists) {
            return Status(Code::conflict,
                          "queue of lock " + name + ": " + written.status().message());
        }
        if (code == Code::not_found && version.empty()) {
            return Status(Code::invalid,
                          "lock " + name + ": the namespace " + m_namespace +
                              " of the Lease store does not exist: " + written.status().message());
        }
        return written.status().with_context("queue of lock " + name);
    }
    std::string rv = meta_string(*written, "resourceVersion");
    known(name, rv);
    return rv;
}

Status KubernetesLeaseStore::remove_waiter(const std::string& name, const std::string& id,
                                           const std::string& version) {
    TRY(check_lock_name(name));
    // The resourceVersion precondition: a waiter that renewed since `version` was read
    // keeps its Lease (409 Conflict, Code::conflict).
    kube::Preconditions only;
    only.resource_version = version;
    Status removed = m_api->remove(kube::leases(m_namespace, waiter_lease_name(name, id)),
                                   kube::Propagation::background, only);
    if (removed.code() == Code::conflict) {
        return removed.with_context("queue of lock " + name + ": waiter " + id +
                                    " renewed its entry since it was read");
    }
    if (!removed.is_ok() && removed.code() != Code::not_found) {
        return removed.with_context("queue of lock " + name);
    }
    return Status::ok();
}

Result<std::string> KubernetesLeaseStore::write(const std::string& name, const LockRecord& record,
                                                const std::string& version) {
    TRY(check_lock_name(name));
    LockRecord stored = stored_form(record);
    stored.name = name;
    json base = base_object(name, version);
    std::int64_t previous_seq = -1;  // unknown: no events (we never saw what was there)
    if (version.empty()) {
        previous_seq = 0;
    } else if (!base.empty()) {
        auto before = record_from_lease(name, base);
        previous_seq = before.is_ok() ? last_seq(*before) : -1;
    }
    json lease = merge_onto(base, lease_from_record(m_namespace, stored));
    Result<json> written = json();
    if (version.empty()) {
        lease["metadata"].erase("resourceVersion");
        written = m_api->create(kube::leases(m_namespace), lease);
    } else {
        lease["metadata"]["resourceVersion"] = version;
        written = m_api->update(lease_ref(name), lease);
    }
    if (!written.is_ok()) {
        Code code = written.status().code();
        if (code == Code::not_found && version.empty()) {
            return Status(Code::invalid,
                          "lock " + name + ": the namespace " + m_namespace +
                              " of the Lease store does not exist (create it, or set "
                              "lock.namespace in envgate.yml): " +
                              written.status().message());
        }
        if (code == Code::already_exists || code == Code::conflict || code == Code::not_found) {
            // Someone created, changed or deleted the Lease since we read it.
            return Status(Code::conflict, "lock " + name + ": " + written.status().message());
        }
        return written.status().with_context("lock " + name);
    }
    remember(name, *written);
    known(name, meta_string(*written, "resourceVersion"));
    if (previous_seq >= 0) {
        post_events(name, stored, previous_seq, *written);
    }
    return meta_string(*written, "resourceVersion");
}

// Best effort: an Event that cannot be posted never fails the lock write.
void KubernetesLeaseStore::post_events(const std::string& name, const LockRecord& record,
                                       std::int64_t previous_seq, const json& lease) {
    for (const Transition& t : record.history) {
        if (t.seq > previous_seq) {
            (void)m_api->create(kube::core_events(m_namespace),
                                event_for_transition(name, t, lease));
        }
    }
}

Result<std::vector<std::string>> KubernetesLeaseStore::list() {
    kube::ListOptions options;
    options.label_selector = std::string(k_lock_label) + "=true";
    auto listed = m_api->list(kube::leases(m_namespace), options);
    if (!listed.is_ok()) {
        return listed.status().with_context("locks in namespace " + m_namespace);
    }
    std::vector<std::string> names;
    const std::string prefix = k_lease_prefix;
    for (const json& item : listed->items) {
        std::string lease = meta_string(item, "name");
        if (lease.size() > prefix.size() && lease.rfind(prefix, 0) == 0) {
            names.push_back(lease.substr(prefix.size()));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace envgate::locks
