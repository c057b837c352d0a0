#include "runner/kube/kubeconfig_entry.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <Poco/Exception.h>
#include <Poco/URI.h>
#include <fmt/format.h>

#include "runner/base/base64.h"
#include "runner/base/yaml_json.h"

namespace envgate::kube::kubeconfig_detail {

namespace fs = std::filesystem;

Status invalid(const std::string& file, const std::string& field, const std::string& what) {
    return {Code::invalid, fmt::format("kubeconfig {}: {}: {}", file, field, what)};
}

Result<std::string> read_whole_file(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Status(Code::io, fmt::format("{}: cannot read {}", what, path));
    }
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string resolve(const std::string& path, const std::string& file) {
    if (path.empty() || fs::path(path).is_absolute()) {
        return path;
    }
    return (fs::absolute(fs::path(file)).parent_path() / path).lexically_normal().string();
}

Result<std::optional<std::string>> string_field(const YAML::Node& node, const char* key,
                                                const Entry& entry, const std::string& parent) {
    YAML::Node value = node[key];
    if (!value || value.IsNull()) {
        return std::optional<std::string>{};
    }
    if (!value.IsScalar()) {
        return invalid(entry.file, entry.field + "." + parent + key, "must be a string");
    }
    return std::optional<std::string>{value.Scalar()};
}

namespace {

Result<std::string> base64_field(const std::string& encoded, const Entry& entry,
                                 const std::string& field) {
    std::optional<std::string> decoded = decode_base64(encoded);
    if (!decoded) {
        return invalid(entry.file, entry.field + "." + field, "is not valid base64");
    }
    return *decoded;
}

}  // namespace

Result<std::string> data_or_file(const YAML::Node& node, const std::string& key, const Entry& entry,
                                 const std::string& parent) {
    TRY_ASSIGN(auto data, string_field(node, (key + "-data").c_str(), entry, parent));
    if (data && !data->empty()) {
        return base64_field(*data, entry, parent + key + "-data");
    }
    TRY_ASSIGN(auto file, string_field(node, key.c_str(), entry, parent));
    if (!file || file->empty()) {
        return std::string();
    }
    auto contents = read_whole_file(
        resolve(*file, entry.file),
        fmt::format("kubeconfig {}: {}.{}{}", entry.file, entry.field, parent, key));
    if (!contents) {
        return Status(Code::invalid, contents.status().message());
    }
    return contents.value();
}

// http://[user:password@]host[:port]: what Poco's HTTP client can tunnel through
// (CONNECT for https servers). client-go also takes https:// and socks5:// proxies.
Status check_proxy_url(const std::string& url, const Entry& entry) {
    const std::string field = entry.field + ".cluster.proxy-url";
    try {
        Poco::URI uri(url);
        if (uri.getScheme() != "http") {
            return invalid(entry.file, field,
                           fmt::format("scheme \"{}\" is not supported; use an http:// proxy",
                                       uri.getScheme()));
        }
        if (uri.getHost().empty()) {
            return invalid(entry.file, field, "has no host");
        }
    } catch (const Poco::Exception&) {
        return invalid(entry.file, field, "is not a URL");  // it may hold a password: not echoed
    }
    return Status::ok();
}

// The impersonation of users[].user: `as`, `as-uid`, `as-groups`, as kubectl sends them.
Status apply_impersonation(const YAML::Node& node, const Entry& entry, RestConfig& config) {
    TRY_ASSIGN(auto as, string_field(node, "as", entry, "user."));
    TRY_ASSIGN(auto uid, string_field(node, "as-uid", entry, "user."));
    config.impersonate_user = as.value_or("");
    config.impersonate_uid = uid.value_or("");
    YAML::Node groups = node["as-groups"];
    if (groups && !groups.IsNull()) {
        if (!groups.IsSequence()) {
            return invalid(entry.file, entry.field + ".user.as-groups",
                           "must be a list of strings");
        }
        for (const auto& g : groups) {
            if (!g.IsScalar() || g.Scalar().empty()) {
                return invalid(entry.file, entry.field + ".user.as-groups",
                               "must be a list of non-empty strings");
            }
            config.impersonate_groups.push_back(g.Scalar());
        }
    }
    if (config.impersonate_user.empty() &&
        (!config.impersonate_groups.empty() || !config.impersonate_uid.empty())) {
        // The API server refuses Impersonate-Group or -Uid without Impersonate-User.
        return invalid(entry.file, entry.field + ".user.as",
                       "missing; as-groups and as-uid impersonate a user named by `as`");
    }
    return Status::ok();
}

Result<ExecConfig> parse_exec(const YAML::Node& node, const Entry& entry) {
    const std::string at = entry.field + ".user.exec";
    ExecConfig exec;
    exec.api_version = node["apiVersion"] ? node["apiVersion"].as<std::string>() : "";
    if (exec.api_version != "client.authentication.k8s.io/v1" &&
        exec.api_version != "client.authentication.k8s.io/v1beta1") {
        return invalid(entry.file, at + ".apiVersion",
                       fmt::format("\"{}\" is not supported (want client.authentication.k8s.io/v1)",
                                   exec.api_version));
    }
    exec.command = node["command"] ? node["command"].as<std::string>() : "";
    if (exec.command.empty()) {
        return invalid(entry.file, at + ".command", "missing");
    }
    if (exec.command.find('/') != std::string::npos) {
        exec.command = resolve(exec.command, entry.file);
    }
    for (const auto& arg : node["args"]) {
        exec.args.push_back(arg.as<std::string>());
    }
    for (const auto& var : node["env"]) {
        if (!var["name"]) {
            return invalid(entry.file, at + ".env[].name", "missing");
        }
        exec.env.emplace_back(var["name"].as<std::string>(),
                              var["value"] ? var["value"].as<std::string>() : "");
    }
    TRY_ASSIGN(auto hint, string_field(node, "installHint", entry, "user.exec."));
    exec.install_hint = hint.value_or("");
    exec.field = fmt::format("kubeconfig {}: {}", entry.file, at);
    if (YAML::Node provide = node["provideClusterInfo"]; provide && !provide.IsNull()) {
        bool wanted = false;
        if (!provide.IsScalar() || !YAML::convert<bool>::decode(provide, wanted)) {
            return invalid(entry.file, at + ".provideClusterInfo", "must be true or false");
        }
        if (wanted) {
            exec.cluster = ExecCluster{};  // filled from the context's cluster
        }
    }
    return exec;
}

Result<std::string> exec_extension_json(const YAML::Node& cluster, const Entry& entry) {
    YAML::Node extensions = cluster["extensions"];
    if (!extensions || extensions.IsNull()) {
        return std::string();
    }
    if (!extensions.IsSequence()) {
        return invalid(entry.file, entry.field + ".cluster.extensions", "must be a list");
    }
    for (const auto& item : extensions) {
        if (item.IsMap() && item["name"] && item["name"].IsScalar() &&
            item["name"].Scalar() == k_exec_extension) {
            TRY_ASSIGN(auto json,
                       yaml_to_json(item["extension"], fmt::format("kubeconfig {}", entry.file)));
            return json.dump();
        }
    }
    return std::string();
}

}  // namespace envgate::kube::kubeconfig_detail
