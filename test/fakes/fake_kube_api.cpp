#include "test/fakes/fake_kube_api.h"

#include <fmt/format.h>

namespace envgate::test {
namespace {

using kube::EventType;
using kube::ResourceRef;

std::string key_of_collection(const ResourceRef& ref) {
    return ref.group_version + "|" + ref.resource + "|" + ref.namespace_name;
}

std::string key_of(const ResourceRef& ref) {
    return key_of_collection(ref) + "|" + ref.name;
}

bool in_collection(const std::string& event_collection, const ResourceRef& collection) {
    if (!collection.namespace_name.empty()) {
        return event_collection == key_of_collection(collection);
    }
    const std::string prefix = collection.group_version + "|" + collection.resource + "|";
    return event_collection.rfind(prefix, 0) == 0;
}

std::string trim(std::string text) {
    const auto first = text.find_first_not_of(' ');
    const auto last = text.find_last_not_of(' ');
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> split_terms(const std::string& selector) {
    std::vector<std::string> out;
    std::string term;
    int depth = 0;
    for (char c : selector) {
        depth += (c == '(') - (c == ')');
        if (c == ',' && depth == 0) {
            out.push_back(trim(term));
            term.clear();
        } else {
            term += c;
        }
    }
    if (!trim(term).empty()) {
        out.push_back(trim(term));
    }
    return out;
}

std::optional<std::string> label(const nlohmann::json& object, const std::string& key) {
    const auto labels = object.contains("metadata")
                            ? object["metadata"].value("labels", nlohmann::json::object())
                            : nlohmann::json::object();
    if (!labels.contains(key)) {
        return std::nullopt;
    }
    return labels[key].get<std::string>();
}

bool matches_set_term(const nlohmann::json& object, const std::string& term, std::size_t op_at,
                      bool negate) {
    const std::string key = trim(term.substr(0, op_at));
    const auto open = term.find('(');
    const auto close = term.find(')');
    bool found = false;
    auto value = label(object, key);
    for (const auto& item : split_terms(term.substr(open + 1, close - open - 1))) {
        found = found || (value && *value == item);
    }
    return negate ? !found : found;
}

bool matches_label_term(const nlohmann::json& object, const std::string& term) {
    if (auto at = term.find(" notin "); at != std::string::npos) {
        return matches_set_term(object, term, at, true);
    }
    if (auto at = term.find(" in "); at != std::string::npos) {
        return matches_set_term(object, term, at, false);
    }
    if (auto at = term.find("!="); at != std::string::npos) {
        auto value = label(object, trim(term.substr(0, at)));
        return !value || *value != trim(term.substr(at + 2));
    }
    if (auto at = term.find('='); at != std::string::npos) {
        const std::size_t skip = term.compare(at, 2, "==") == 0 ? 2 : 1;
        auto value = label(object, trim(term.substr(0, at)));
        return value && *value == trim(term.substr(at + skip));
    }
    if (term[0] == '!') {
        return !label(object, trim(term.substr(1)));
    }
    return label(object, term).has_value();
}

std::string field(const nlohmann::json& object, const std::string& path) {
    const nlohmann::json* at = &object;
    std::size_t start = 0;
    while (true) {
        const auto dot = path.find('.', start);
        const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
        if (!at->is_object() || !at->contains(part)) {
            return "";
        }
        at = &(*at)[part];
        if (dot == std::string::npos) {
            break;
        }
        start = dot + 1;
    }
    return at->is_string() ? at->get<std::string>() : at->dump();
}

// metadata.<key> of `object` as a string, "" when absent.
std::string meta_string(const nlohmann::json& object, const std::string& key) {
    return object.value(nlohmann::json::json_pointer("/metadata/" + key), "");
}

Status injected(const std::string& verb, const ResourceRef& ref, Code code) {
    return {code, fmt::format("{} {}: injected {}", verb, ref.describe(), code_name(code))};
}

}  // namespace

bool matches_label_selector(const nlohmann::json& object, const std::string& selector) {
    for (const auto& term : split_terms(selector)) {
        if (!matches_label_term(object, term)) {
            return false;
        }
    }
    return true;
}

bool matches_field_selector(const nlohmann::json& object, const std::string& selector) {
    for (const auto& term : split_terms(selector)) {
        const auto neq = term.find("!=");
        const auto eq = term.find('=');
        if (neq != std::string::npos) {
            if (field(object, trim(term.substr(0, neq))) == trim(term.substr(neq + 2))) {
                return false;
            }
        } else if (eq != std::string::npos) {
            const std::size_t skip = term.compare(eq, 2, "==") == 0 ? 2 : 1;
            if (field(object, trim(term.substr(0, eq))) != trim(term.substr(eq + skip))) {
                return false;
            }
        }
    }
    return true;
}

Status FakeKubeApi::record(FakeCall call) {
    std::lock_guard lock(m_mutex);
    calls_made.push_back(call.verb + " " + call.ref.describe());
    calls.push_back(call);
    for (auto it = m_failures.begin(); it != m_failures.end(); ++it) {
        if (it->verb.empty() || it->verb == call.verb) {
            const Code code = it->code;
            m_failures.erase(it);
            return injected(call.verb, call.ref, code);
        }
    }
    return Status::ok();
}

void FakeKubeApi::fail_next(Code code, std::string verb) {
    std::lock_guard lock(m_mutex);
    m_failures.push_back({code, std::move(verb)});
}

std::string FakeKubeApi::now_text() const {
    return m_clock ? format_rfc3339(m_clock->now()) : "2025-01-01T00:00:00Z";
}

// REQUIRES: m_mutex held.
void FakeKubeApi::append_event(const ResourceRef& ref, EventType type,
                               const nlohmann::json& object) {
    m_history.push_back({m_rv, type, key_of_collection(ref), object});
}

// REQUIRES: m_mutex held.
nlohmann::json FakeKubeApi::store(const ResourceRef& ref, nlohmann::json object, EventType type) {
    auto& meta = object["metadata"];
    meta["name"] = ref.name;
    if (!ref.namespace_name.empty()) {
        meta["namespace"] = ref.namespace_name;
    }
    if (!meta.contains("uid")) {
        meta["uid"] = fmt::format("fake-uid-{}", ++m_uids);
        meta["creationTimestamp"] = now_text();
    }
    meta["resourceVersion"] = std::to_string(++m_rv);
    m_objects[key_of(ref)] = object;
    append_event(ref, type, object);
    return object;
}

nlohmann::json FakeKubeApi::seed(const ResourceRef& ref, nlohmann::json object) {
    std::lock_guard lock(m_mutex);
    const bool exists = m_objects.count(key_of(ref)) > 0;
    return store(ref, std::move(object), exists ? EventType::modified : EventType::added);
}

bool FakeKubeApi::mutate(const ResourceRef& ref, const std::function<void(nlohmann::json&)>& edit) {
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    if (it == m_objects.end()) {
        return false;
    }
    nlohmann::json object = it->second;
    edit(object);
    store(ref, std::move(object), EventType::modified);
    return true;
}

bool FakeKubeApi::erase(const ResourceRef& ref) {
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    if (it == m_objects.end()) {
        return false;
    }
    erase_locked(it, ref);
    return true;
}

// REQUIRES: m_mutex held; `it` is the stored object of `ref`.
void FakeKubeApi::erase_locked(std::map<std::string, nlohmann::json>::iterator it,
                               const ResourceRef& ref) {
    nlohmann::json object = it->second;
    m_objects.erase(it);
    object["metadata"]["resourceVersion"] = std::to_string(++m_rv);
    append_event(ref, EventType::deleted, object);
}

std::optional<nlohmann::json> FakeKubeApi::object(const ResourceRef& ref) const {
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    return it == m_objects.end() ? std::nullopt : std::optional(it->second);
}

void FakeKubeApi::set_logs(const ResourceRef& pod, const std::string& container, bool previous,
                           std::string text) {
    std::lock_guard lock(m_mutex);
    m_logs[key_of(pod) + "|" + container + (previous ? "|previous" : "")] = std::move(text);
}

void FakeKubeApi::compact() {
    std::lock_guard lock(m_mutex);
    m_history.clear();
    m_compacted = m_rv;
}

std::string FakeKubeApi::resource_version() const {
    std::lock_guard lock(m_mutex);
    return std::to_string(m_rv);
}

Result<nlohmann::json> FakeKubeApi::get(const ResourceRef& ref) {
    TRY(record({"get", ref, {}, {}, {}, {}, {}}));
    auto found = object(ref);
    if (!found) {
        return Status(Code::not_found, fmt::format("GET {}: 404 NotFound: {} \"{}\" not found",
                                                   ref.describe(), ref.resource, ref.name));
    }
    return *found;
}

Result<kube::ObjectList> FakeKubeApi::list(const ResourceRef& collection,
                                           const kube::ListOptions& options) {
    TRY(record({"list", collection, {}, options.label_selector, options.field_selector, {}, {}}));
    return snapshot(collection, options.label_selector, options.field_selector);
}

kube::ObjectList FakeKubeApi::snapshot(const ResourceRef& collection, const std::string& labels,
                                       const std::string& fields) const {
    std::lock_guard lock(m_mutex);
    kube::ObjectList out;
    out.resource_version = std::to_string(m_rv);
    for (const auto& [key, object] : m_objects) {
        if (in_collection(key.substr(0, key.rfind('|')), collection) &&
            matches_label_selector(object, labels) && matches_field_selector(object, fields)) {
            out.items.push_back(object);
        }
    }
    return out;
}

Result<nlohmann::json> FakeKubeApi::create(const ResourceRef& ref, const nlohmann::json& object) {
    const ResourceRef named = ref.with_name(meta_string(object, "name"));
    TRY(record({"create", named, object, {}, {}, {}, {}}));
    std::lock_guard lock(m_mutex);
    if (named.name.empty()) {
        return Status(
            Code::invalid,
            fmt::format("POST {}: 422 Invalid: metadata.name: Required value", ref.resource));
    }
    if (m_objects.count(key_of(named))) {
        return Status(Code::already_exists,
                      fmt::format("POST {}: 409 AlreadyExists: {} \"{}\" already exists",
                                  named.describe(), ref.resource, named.name));
    }
    nlohmann::json fresh = object;
    fresh["metadata"].erase("resourceVersion");
    fresh["metadata"].erase("uid");
    return store(named, std::move(fresh), EventType::added);
}

Result<nlohmann::json> FakeKubeApi::update(const ResourceRef& ref, const nlohmann::json& object) {
    TRY(record({"update", ref, object, {}, {}, {}, {}}));
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    if (it == m_objects.end()) {
        return Status(Code::not_found, fmt::format("PUT {}: 404 NotFound: {} \"{}\" not found",
                                                   ref.describe(), ref.resource, ref.name));
    }
    const std::string sent = meta_string(object, "resourceVersion");
    if (!sent.empty() && sent != meta_string(it->second, "resourceVersion")) {
        return Status(
            Code::conflict,
            fmt::format("PUT {}: 409 Conflict: Operation cannot be fulfilled on {} \"{}\": "
                        "the object has been modified; please apply your changes to the "
                        "latest version and try again",
                        ref.describe(), ref.resource, ref.name));
    }
    nlohmann::json next = object;
    next["metadata"]["uid"] = it->second["metadata"]["uid"];
    next["metadata"]["creationTimestamp"] = it->second["metadata"]["creationTimestamp"];
    return store(ref, std::move(next), EventType::modified);
}

Result<nlohmann::json> FakeKubeApi::patch(const ResourceRef& ref,
                                          const nlohmann::json& merge_patch) {
    TRY(record({"patch", ref, merge_patch, {}, {}, {}, {}}));
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    if (it == m_objects.end()) {
        return Status(Code::not_found, fmt::format("PATCH {}: 404 NotFound: {} \"{}\" not found",
                                                   ref.describe(), ref.resource, ref.name));
    }
    nlohmann::json next = it->second;
    next.merge_patch(merge_patch);
    const std::string sent = meta_string(merge_patch, "resourceVersion");
    if (!sent.empty() && sent != meta_string(it->second, "resourceVersion")) {
        return Status(
            Code::conflict,
            fmt::format("PATCH {}: 409 Conflict: the object has been modified", ref.describe()));
    }
    return store(ref, std::move(next), EventType::modified);
}

Status FakeKubeApi::remove(const ResourceRef& ref, kube::Propagation /*propagation*/,
                           const kube::Preconditions& preconditions) {
    TRY(record({"remove", ref, {}, {}, {}, {}, preconditions}));
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(key_of(ref));
    if (it == m_objects.end()) {
        return {Code::not_found, fmt::format("DELETE {}: 404 NotFound: {} \"{}\" not found",
                                             ref.describe(), ref.resource, ref.name)};
    }
    // The API server's order and words (apiserver rest.BeforeDelete).
    struct Check {
        const char* field;
        const char* key;
        const std::string& want;
        const char* why;
    };
    for (const Check& c : {Check{"UID", "uid", preconditions.uid, "deleted and then recreated"},
                           Check{"ResourceVersion", "resourceVersion",
                                 preconditions.resource_version, "modified"}}) {
        const std::string have = meta_string(it->second, c.key);
        if (!c.want.empty() && c.want != have) {
            return {Code::conflict,
                    fmt::format("DELETE {}: 409 Conflict: Operation cannot be fulfilled on {} "
                                "\"{}\": the {} in the precondition ({}) does not match the {} "
                                "in record ({}). The object might have been {}",
                                ref.describe(), ref.resource, ref.name, c.field, c.want, c.field,
                                have, c.why)};
        }
    }
    erase_locked(it, ref);
    return Status::ok();
}

Result<std::string> FakeKubeApi::logs(const ResourceRef& pod, const kube::LogOptions& options) {
    TRY(record({"logs", pod, {}, {}, {}, {}, {}}));
    std::lock_guard lock(m_mutex);
    auto it =
        m_logs.find(key_of(pod) + "|" + options.container + (options.previous ? "|previous" : ""));
    if (it == m_logs.end()) {
        return Status(Code::not_found, fmt::format("GET {}/log: 404 NotFound", pod.describe()));
    }
    return it->second;
}

std::vector<FakeKubeApi::Event> FakeKubeApi::events_after(std::int64_t rv,
                                                          const ResourceRef& collection,
                                                          const kube::WatchOptions& options) const {
    std::lock_guard lock(m_mutex);
    std::vector<Event> out;
    for (const auto& event : m_history) {
        if (event.rv > rv && in_collection(event.collection, collection) &&
            matches_label_selector(event.object, options.label_selector) &&
            matches_field_selector(event.object, options.field_selector)) {
            out.push_back(event);
        }
    }
    return out;
}

Status FakeKubeApi::watch(const ResourceRef& collection, const kube::WatchOptions& options,
                          const kube::WatchCallback& on_event) {
    TRY(record({"watch",
                collection,
                {},
                options.label_selector,
                options.field_selector,
                options.resource_version,
                {}}));
    std::int64_t position = 0;
    if (options.resource_version.empty() || options.resource_version == "0") {
        const kube::ObjectList current =
            snapshot(collection, options.label_selector, options.field_selector);
        for (const auto& item : current.items) {
            if (on_event({EventType::added, item}) == kube::WatchNext::stop) {
                return Status::ok();
            }
        }
        position = std::stoll(current.resource_version);
    } else {
        position = std::stoll(options.resource_version);
        std::lock_guard lock(m_mutex);
        if (position < m_compacted) {
            return {Code::gone, fmt::format("WATCH {}: ERROR event 410 Expired: too old resource "
                                            "version: {} ({})",
                                            collection.describe(), position, m_compacted)};
        }
    }
    while (true) {
        auto events = events_after(position, collection, options);
        for (const auto& event : events) {
            position = event.rv;
            if (on_event({event.type, event.object}) == kube::WatchNext::stop) {
                return Status::ok();
            }
        }
        if (events.empty() && !(m_idle_hook && m_idle_hook())) {
            return Status::ok();
        }
    }
}

}  // namespace envgate::test
