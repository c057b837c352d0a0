// kubesim object store: see store.h.
#include "test/kubesim/store.h"

#include <random>

#include "runner/base/vocab/time.h"

namespace kubesim {

namespace {

std::string not_found_message(const std::string& resource, const std::string& name) {
    return qualified_resource(resource) + " \"" + name + "\" not found";
}

bool is_removable(const std::string& resource, const json& obj) {
    const json& meta = obj["metadata"];
    if (!meta.contains("deletionTimestamp")) {
        return false;
    }
    if (meta.contains("finalizers") && !meta["finalizers"].empty()) {
        return false;
    }
    if (resource == "pods") {
        return meta.value("deletionGracePeriodSeconds", 0) == 0;
    }
    return true;
}

}  // namespace

std::string qualified_resource(const std::string& resource) {
    if (resource == "jobs") {
        return "jobs.batch";
    }
    if (resource == "leases") {
        return "leases.coordination.k8s.io";
    }
    return resource;
}

std::string object_key(const std::string& resource, const std::string& ns,
                       const std::string& name) {
    return resource + "/" + ns + "/" + name;
}

std::string now_rfc3339() {
    return envgate::format_rfc3339(
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()));
}

std::string now_rfc3339_micro() {
    return envgate::format_rfc3339_micro(
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now()));
}

std::string new_uid() {
    static std::mutex mutex;
    static std::mt19937_64 rng{std::random_device{}()};
    std::lock_guard lock(mutex);
    uint64_t a = rng();
    uint64_t b = rng();
    char buf[40];
    snprintf(buf, sizeof buf, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
             static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
             static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
             static_cast<unsigned long long>(b & 0xffffffffffffULL));
    return buf;
}

Store::Store(size_t history_limit) : m_history_limit(history_limit) {}

Result<json> Store::create(const std::string& resource, json obj) {
    json& meta = obj["metadata"];
    std::string ns = meta.value("namespace", "");
    std::string name = meta.value("name", "");
    std::string key = object_key(resource, ns, name);
    std::lock_guard lock(m_mutex);
    if (m_objects.count(key) != 0) {
        return Status(Code::already_exists,
                      qualified_resource(resource) + " \"" + name + "\" already exists");
    }
    if (!meta.contains("uid")) {
        meta["uid"] = new_uid();
    }
    meta["creationTimestamp"] = now_rfc3339();
    if (!meta.contains("generation") && resource != "events" && resource != "pods") {
        meta["generation"] = 1;
    }
    commit_locked(key, resource, std::move(obj), "ADDED", nullptr);
    return m_objects.at(key);
}

Result<json> Store::get(const std::string& resource, const std::string& ns,
                        const std::string& name) const {
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(object_key(resource, ns, name));
    if (it == m_objects.end()) {
        return Status(Code::not_found, not_found_message(resource, name));
    }
    return it->second;
}

std::vector<json> Store::list(const std::string& resource, const std::string& ns,
                              const std::function<bool(const json&)>& keep, uint64_t* rv) const {
    std::vector<json> out;
    std::string prefix = ns.empty() ? resource + "/" : resource + "/" + ns + "/";
    std::lock_guard lock(m_mutex);
    for (auto it = m_objects.lower_bound(prefix);
         it != m_objects.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        if (!keep || keep(it->second)) {
            out.push_back(it->second);
        }
    }
    if (rv != nullptr) {
        *rv = m_rv;
    }
    return out;
}

Result<json> Store::mutate(const std::string& resource, const std::string& ns,
                           const std::string& name, const std::string& expected_rv,
                           const std::function<Status(json&)>& fn) {
    std::string key = object_key(resource, ns, name);
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key);
    if (it == m_objects.end()) {
        return Status(Code::not_found, not_found_message(resource, name));
    }
    const json& old = it->second;
    if (!expected_rv.empty() && old["metadata"]["resourceVersion"] != expected_rv) {
        return Status(Code::conflict,
                      "Operation cannot be fulfilled on " + qualified_resource(resource) + " \"" +
                          name +
                          "\": the object has been modified; please apply your changes to the "
                          "latest version and try again");
    }
    json obj = old;
    TRY(fn(obj));
    // Identity fields never change through an update.
    for (const char* field : {"uid", "creationTimestamp", "name", "namespace"}) {
        if (old["metadata"].contains(field)) {
            obj["metadata"][field] = old["metadata"][field];
        }
    }
    obj["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"];
    if (obj == old) {
        return obj;
    }
    if (old["metadata"].contains("generation") && obj.contains("spec") &&
        obj["spec"] != old["spec"]) {
        obj["metadata"]["generation"] = old["metadata"]["generation"].get<int64_t>() + 1;
    }
    json previous = old;
    commit_locked(key, resource, std::move(obj), "MODIFIED", &previous);
    auto now_it = m_objects.find(key);
    if (now_it != m_objects.end()) {
        return now_it->second;
    }
    return *m_history.back().object;
}

void Store::commit_locked(const std::string& key, const std::string& resource, json obj,
                          const std::string& type, const json* previous) {
    ++m_rv;
    obj["metadata"]["resourceVersion"] = std::to_string(m_rv);
    Change change;
    change.rv = m_rv;
    change.resource = resource;
    change.ns = obj["metadata"].value("namespace", "");
    if (previous != nullptr) {
        change.previous = std::make_shared<const json>(*previous);
    }
    if (is_removable(resource, obj)) {
        m_objects.erase(key);
        change.type = "DELETED";
    } else {
        change.type = type;
        m_objects[key] = obj;
    }
    change.object = std::make_shared<const json>(std::move(obj));
    record_locked(std::move(change));
}

void Store::record_locked(Change change) {
    m_history.push_back(change);
    while (m_history.size() > m_history_limit) {
        m_oldest_rv = m_history.front().rv;
        m_history.pop_front();
    }
    for (auto& fn : m_listeners) {
        fn(change);
    }
    m_cv.notify_all();
}

uint64_t Store::current_rv() const {
    std::lock_guard lock(m_mutex);
    return m_rv;
}

uint64_t Store::oldest_rv() const {
    std::lock_guard lock(m_mutex);
    return m_oldest_rv;
}

bool Store::wait_changes(uint64_t after_rv, std::chrono::steady_clock::time_point deadline,
                         const std::function<bool()>& stop, std::vector<Change>& out) {
    std::unique_lock lock(m_mutex);
    m_cv.wait_until(lock, deadline, [&] { return m_rv > after_rv || stop(); });
    if (after_rv < m_oldest_rv) {
        return false;
    }
    auto it = std::lower_bound(m_history.begin(), m_history.end(), after_rv + 1,
                               [](const Change& c, uint64_t rv) { return c.rv < rv; });
    for (; it != m_history.end(); ++it) {
        out.push_back(*it);
    }
    return true;
}

void Store::compact() {
    std::lock_guard lock(m_mutex);
    m_history.clear();
    m_oldest_rv = m_rv;
    m_cv.notify_all();
}

void Store::wake_all() {
    std::lock_guard lock(m_mutex);
    m_cv.notify_all();
}

void Store::on_change(std::function<void(const Change&)> fn) {
    std::lock_guard lock(m_mutex);
    m_listeners.push_back(std::move(fn));
}

}  // namespace kubesim
