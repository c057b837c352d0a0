#include "runner/kube/kube_api.h"

#include <charconv>

#include "runner/base/vocab/enum_names.h"

namespace envgate::kube {

ResourceRef ResourceRef::with_name(std::string object_name) const {
    ResourceRef copy = *this;
    copy.name = std::move(object_name);
    return copy;
}

std::string ResourceRef::path() const {
    std::string out = group_version.find('/') == std::string::npos ? "/api/" : "/apis/";
    out += group_version;
    if (!namespace_name.empty()) {
        out += "/namespaces/" + namespace_name;
    }
    out += "/" + resource;
    if (!name.empty()) {
        out += "/" + name;
    }
    return out;
}

std::string ResourceRef::describe() const {
    return name.empty() ? resource : resource + "/" + name;
}

ResourceRef leases(std::string namespace_name, std::string name) {
    return {"coordination.k8s.io/v1", "leases", std::move(namespace_name), std::move(name)};
}

ResourceRef jobs(std::string namespace_name, std::string name) {
    return {"batch/v1", "jobs", std::move(namespace_name), std::move(name)};
}

ResourceRef pods(std::string namespace_name, std::string name) {
    return {"v1", "pods", std::move(namespace_name), std::move(name)};
}

ResourceRef core_events(std::string namespace_name) {
    return {"v1", "events", std::move(namespace_name), {}};
}

std::string object_key(const nlohmann::json& object) {
    const auto& meta = object.contains("metadata") ? object["metadata"] : nlohmann::json::object();
    return meta.value("namespace", "") + "/" + meta.value("name", "");
}

std::string resource_version_of(const nlohmann::json& object) {
    if (!object.contains("metadata") || !object["metadata"].is_object()) {
        return "";
    }
    const auto& rv = object["metadata"].find("resourceVersion");
    return rv != object["metadata"].end() && rv->is_string() ? rv->get<std::string>() : "";
}

std::optional<std::uint64_t> resource_version_number(const std::string& version) {
    std::uint64_t n = 0;
    const char* end = version.data() + version.size();
    auto [at, error] = std::from_chars(version.data(), end, n);
    if (error != std::errc() || at != end || version.empty()) {
        return std::nullopt;
    }
    return n;
}

// A watch event's "type" for each EventType.
constexpr EnumName<EventType> k_event_type_names[] = {{EventType::added, "ADDED"},
                                                      {EventType::modified, "MODIFIED"},
                                                      {EventType::deleted, "DELETED"},
                                                      {EventType::bookmark, "BOOKMARK"}};

const char* event_type_name(EventType type) {
    return name_of(k_event_type_names, type, "UNKNOWN");
}

std::optional<EventType> parse_event_type(std::string_view name) {
    return value_of(k_event_type_names, name);
}

}  // namespace envgate::kube
