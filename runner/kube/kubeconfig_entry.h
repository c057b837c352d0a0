// The field readers of kubeconfig.cpp: one clusters[]/users[]/contexts[] entry, its
// typed fields with "kubeconfig FILE: FIELD: what" errors, and the parts of a cluster
// or user that need more than a string (proxy-url, impersonation, exec plugins).
#pragma once

#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "runner/base/vocab/status.h"
#include "runner/kube/rest_config.h"

namespace envgate::kube::kubeconfig_detail {

// One clusters[]/users[]/contexts[] entry and where it came from.
struct Entry {
    YAML::Node body;    // the "cluster"/"user"/"context" map
    std::string file;   // the kubeconfig that defined it
    std::string field;  // "users[name=ci]" for messages
};

Status invalid(const std::string& file, const std::string& field, const std::string& what);
Result<std::string> read_whole_file(const std::string& path, const std::string& what);
// `path` against the directory of the kubeconfig `file` (unless absolute).
std::string resolve(const std::string& path, const std::string& file);
// A string field of `node`, or nullopt when absent. Non-scalars are an error.
Result<std::optional<std::string>> string_field(const YAML::Node& node, const char* key,
                                                const Entry& entry, const std::string& parent);
// Either the decoded `<key>-data` field or the contents of the `<key>` file.
Result<std::string> data_or_file(const YAML::Node& node, const std::string& key, const Entry& entry,
                                 const std::string& parent);
// cluster.proxy-url: an http:// URL (its text is never echoed: it may hold a password).
Status check_proxy_url(const std::string& url, const Entry& entry);
// user.as, as-uid, as-groups into `config`.
Status apply_impersonation(const YAML::Node& node, const Entry& entry, RestConfig& config);
// user.exec (client.authentication.k8s.io/v1 or v1beta1).
Result<ExecConfig> parse_exec(const YAML::Node& node, const Entry& entry);

// The name of the cluster extension whose `extension` client-go hands to a credential
// plugin as spec.cluster.config.
inline constexpr const char* k_exec_extension = "client.authentication.k8s.io/exec";
// The `cluster` map's extensions entry named k_exec_extension as JSON text, "" if none.
Result<std::string> exec_extension_json(const YAML::Node& cluster, const Entry& entry);

}  // namespace envgate::kube::kubeconfig_detail
