// The resources kubesim serves (group, version, kind, verbs), the discovery and
// OpenAPI v3 documents kubectl reads before it acts, and the per-resource defaulting
// and validation the API server applies on create and update.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"

namespace kubesim {

struct ResourceInfo {
    std::string group;  // "" for the core group
    std::string version;
    std::string resource;  // plural, as in URLs
    std::string kind;
    std::string singular;
    bool namespaced = true;
    std::vector<std::string> short_names;
    std::string storage;  // the store's resource name (both Event APIs share "events")
    std::vector<std::string> subresources;

    std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

const std::vector<ResourceInfo>& all_resources();
// The resource at `group`/`version`/`resource`, if served.
const ResourceInfo* find_resource(const std::string& group, const std::string& version,
                                  const std::string& resource);

// Discovery documents: /version, /api, /apis, /api/v1 and /apis/<g>/<v>.
nlohmann::json version_document();
nlohmann::json api_versions_document(const std::string& server_address);
nlohmann::json api_group_list_document();
std::optional<nlohmann::json> resource_list_document(const std::string& group_version);
// OpenAPI v3: the index (/openapi/v3) and one group-version document.
nlohmann::json openapi_index_document();
std::optional<nlohmann::json> openapi_group_document(const std::string& path);

// Applies defaults and validates `obj` for creation (422 Invalid, 400 BadRequest on
// unknown fields when `strict`). Sets apiVersion/kind and the namespace.
envgate::Status prepare_create(const ResourceInfo& info, const std::string& ns, bool strict,
                               nlohmann::json& obj);
// Validates an update of `old` to `obj` (spec immutability for Pods and Jobs).
envgate::Status prepare_update(const ResourceInfo& info, const nlohmann::json& old,
                               nlohmann::json& obj);

// events.k8s.io/v1 <-> core v1 Event conversion (the store keeps core v1 Events).
nlohmann::json event_to_events_v1(const nlohmann::json& core);
nlohmann::json event_from_events_v1(const nlohmann::json& ev);
// The stored field name for an events.k8s.io field selector path.
std::string events_v1_field_to_core(const std::string& field);

}  // namespace kubesim
