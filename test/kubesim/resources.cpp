// Resource table, discovery and OpenAPI documents: see resources.h.
#include "test/kubesim/resources.h"

namespace kubesim {

using nlohmann::json;

namespace {

const std::vector<std::string> k_verbs = {"create", "delete", "deletecollection", "get",
                                          "list",   "patch",  "update",           "watch"};

json resource_entry(const ResourceInfo& r) {
    json e = {{"name", r.resource}, {"singularName", r.singular}, {"namespaced", r.namespaced},
              {"kind", r.kind},     {"verbs", k_verbs},           {"storageVersionHash", ""}};
    if (!r.short_names.empty()) {
        e["shortNames"] = r.short_names;
    }
    if (r.resource == "pods" || r.resource == "jobs") {
        e["categories"] = json::array({"all"});
    }
    return e;
}

json subresource_entry(const ResourceInfo& r, const std::string& sub) {
    json e = {{"name", r.resource + "/" + sub},
              {"singularName", ""},
              {"namespaced", r.namespaced},
              {"kind", r.kind}};
    if (sub == "status") {
        e["verbs"] = {"get", "patch", "update"};
    } else if (sub == "eviction") {
        e["group"] = "policy";
        e["version"] = "v1";
        e["kind"] = "Eviction";
        e["verbs"] = {"create"};
    } else {
        e["verbs"] = {"get"};
    }
    return e;
}

std::string gv_path(const ResourceInfo& r) {
    return r.group.empty() ? "api/" + r.version : "apis/" + r.group + "/" + r.version;
}

json patch_operation(const ResourceInfo& r) {
    json params = json::array();
    for (const char* p : {"dryRun", "fieldManager", "fieldValidation", "force", "pretty"}) {
        params.push_back({{"name", p}, {"in", "query"}, {"schema", {{"type", "string"}}}});
    }
    return {{"operationId", "patch" + r.kind},
            {"parameters", params},
            {"responses", {{"200", {{"description", "OK"}}}}},
            {"x-kubernetes-action", "patch"},
            {"x-kubernetes-group-version-kind",
             {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}}};
}

}  // namespace

const std::vector<ResourceInfo>& all_resources() {
    static const std::vector<ResourceInfo> k_all = {
        {"", "v1", "pods", "Pod", "pod", true, {"po"}, "pods", {"log", "status", "eviction"}},
        {"", "v1", "events", "Event", "event", true, {"ev"}, "events", {}},
        {"", "v1", "namespaces", "Namespace", "namespace", false, {"ns"}, "namespaces", {}},
        {"batch", "v1", "jobs", "Job", "job", true, {}, "jobs", {"status"}},
        {"coordination.k8s.io", "v1", "leases", "Lease", "lease", true, {}, "leases", {}},
        {"events.k8s.io", "v1", "events", "Event", "event", true, {"ev"}, "events", {}},
    };
    return k_all;
}

const ResourceInfo* find_resource(const std::string& group, const std::string& version,
                                  const std::string& resource) {
    for (const auto& r : all_resources()) {
        if (r.group == group && r.version == version && r.resource == resource) {
            return &r;
        }
    }
    return nullptr;
}

json version_document() {
    return {{"major", "1"},
            {"minor", "32"},
            {"gitVersion", "v1.32.0-kubesim"},
            {"gitCommit", "0000000000000000000000000000000000000000"},
            {"gitTreeState", "clean"},
            {"buildDate", "2026-01-01T00:00:00Z"},
            {"goVersion", "go1.23.0"},
            {"compiler", "gc"},
            {"platform", "linux/amd64"}};
}

json api_versions_document(const std::string& server_address) {
    return {{"kind", "APIVersions"},
            {"versions", {"v1"}},
            {"serverAddressByClientCIDRs",
             {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

json api_group_list_document() {
    json groups = json::array();
    for (const auto& r : all_resources()) {
        if (r.group.empty()) {
            continue;
        }
        json gv = {{"groupVersion", r.api_version()}, {"version", r.version}};
        bool seen = false;
        for (const auto& g : groups) {
            seen = seen || g["name"] == r.group;
        }
        if (!seen) {
            groups.push_back({{"name", r.group}, {"versions", {gv}}, {"preferredVersion", gv}});
        }
    }
    return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

std::optional<json> resource_list_document(const std::string& group_version) {
    json resources = json::array();
    for (const auto& r : all_resources()) {
        if (r.api_version() != group_version) {
            continue;
        }
        resources.push_back(resource_entry(r));
        for (const auto& sub : r.subresources) {
            resources.push_back(subresource_entry(r, sub));
        }
    }
    if (resources.empty()) {
        return std::nullopt;
    }
    return json{{"kind", "APIResourceList"},
                {"apiVersion", "v1"},
                {"groupVersion", group_version},
                {"resources", resources}};
}

json openapi_index_document() {
    json paths = json::object();
    for (const auto& r : all_resources()) {
        std::string p = gv_path(r);
        paths[p] = {{"serverRelativeURL", "/openapi/v3/" + p + "?hash=kubesim1"}};
    }
    return {{"paths", paths}};
}

std::optional<json> openapi_group_document(const std::string& path) {
    json paths = json::object();
    for (const auto& r : all_resources()) {
        if (gv_path(r) != path) {
            continue;
        }
        std::string base = "/" + gv_path(r) + "/";
        std::string item = r.namespaced ? base + "namespaces/{namespace}/" + r.resource + "/{name}"
                                        : base + r.resource + "/{name}";
        paths[item] = {{"patch", patch_operation(r)}};
    }
    if (paths.empty()) {
        return std::nullopt;
    }
    return json{{"openapi", "3.0.0"},
                {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                {"paths", paths},
                {"components", {{"schemas", json::object()}}}};
}

json event_to_events_v1(const json& core) {
    json ev = {{"apiVersion", "events.k8s.io/v1"}, {"kind", "Event"}};
    ev["metadata"] = core.value("metadata", json::object());
    const std::vector<std::pair<const char*, const char*>> k_map = {
        {"involvedObject", "regarding"},
        {"message", "note"},
        {"source", "deprecatedSource"},
        {"firstTimestamp", "deprecatedFirstTimestamp"},
        {"lastTimestamp", "deprecatedLastTimestamp"},
        {"count", "deprecatedCount"},
        {"reportingComponent", "reportingController"},
        {"reportingInstance", "reportingInstance"},
        {"eventTime", "eventTime"},
        {"series", "series"},
        {"reason", "reason"},
        {"type", "type"},
        {"action", "action"},
        {"related", "related"}};
    for (const auto& [from, to] : k_map) {
        if (core.contains(from)) {
            ev[to] = core[from];
        }
    }
    return ev;
}

json event_from_events_v1(const json& ev) {
    json core = {{"apiVersion", "v1"}, {"kind", "Event"}};
    core["metadata"] = ev.value("metadata", json::object());
    const std::vector<std::pair<const char*, const char*>> k_map = {
        {"regarding", "involvedObject"},
        {"note", "message"},
        {"deprecatedSource", "source"},
        {"deprecatedFirstTimestamp", "firstTimestamp"},
        {"deprecatedLastTimestamp", "lastTimestamp"},
        {"deprecatedCount", "count"},
        {"reportingController", "reportingComponent"},
        {"reportingInstance", "reportingInstance"},
        {"eventTime", "eventTime"},
        {"series", "series"},
        {"reason", "reason"},
        {"type", "type"},
        {"action", "action"},
        {"related", "related"}};
    for (const auto& [from, to] : k_map) {
        if (ev.contains(from)) {
            core[to] = ev[from];
        }
    }
    return core;
}

std::string events_v1_field_to_core(const std::string& field) {
    if (field.rfind("regarding.", 0) == 0) {
        return "involvedObject." + field.substr(10);
    }
    if (field == "reportingController") {
        return "reportingComponent";
    }
    return field;
}

}  // namespace kubesim
