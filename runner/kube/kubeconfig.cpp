#include "runner/kube/kubeconfig.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "runner/base/yaml_bounded.h"
#include "runner/kube/kubeconfig_entry.h"

namespace envgate::kube {
namespace {

namespace fs = std::filesystem;
using namespace kubeconfig_detail;

struct Merged {
    std::map<std::string, Entry> clusters;
    std::map<std::string, Entry> users;
    std::map<std::string, Entry> contexts;
    std::optional<std::string> current_context;
    std::string files;  // "a:b", for messages that no single file explains
};

Status add_entries(const YAML::Node& root, const char* list, const char* body_key,
                   const std::string& file, std::map<std::string, Entry>& into) {
    YAML::Node items = root[list];
    if (!items || items.IsNull()) {
        return Status::ok();
    }
    if (!items.IsSequence()) {
        return invalid(file, list, "must be a list");
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (!items[i].IsMap()) {
            return invalid(file, fmt::format("{}[{}]", list, i), "must be a mapping");
        }
        YAML::Node name = items[i]["name"];
        if (!name || !name.IsScalar()) {
            return invalid(file, fmt::format("{}[{}].name", list, i), "missing");
        }
        Entry entry{items[i][body_key], file, fmt::format("{}[name={}]", list, name.Scalar())};
        into.emplace(name.Scalar(), std::move(entry));  // the first file to set a key wins
    }
    return Status::ok();
}

Status merge_file(const std::string& file, Merged& merged) {
    std::error_code ec;
    if (fs::is_directory(file, ec)) {
        return Status(Code::io, fmt::format("kubeconfig {}: is a directory", file));
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        return Status(Code::io, fmt::format("kubeconfig {}: cannot read the file", file));
    }
    std::ostringstream text;
    text << in.rdbuf();
    auto docs = load_yaml_bounded(text.str(), "kubeconfig " + file);
    if (!docs) {
        return docs.status();
    }
    if (docs->empty() || docs->front().IsNull()) {
        return Status::ok();
    }
    const YAML::Node& root = docs->front();
    if (!root.IsMap()) {
        return invalid(file, "(top level)", "must be a mapping");
    }
    TRY(add_entries(root, "clusters", "cluster", file, merged.clusters));
    TRY(add_entries(root, "users", "user", file, merged.users));
    TRY(add_entries(root, "contexts", "context", file, merged.contexts));
    YAML::Node current = root["current-context"];
    if (!merged.current_context && current && current.IsScalar() && !current.Scalar().empty()) {
        merged.current_context = current.Scalar();
    }
    return Status::ok();
}

Status apply_cluster(const Entry& entry, RestConfig& config) {
    const YAML::Node& node = entry.body;
    if (!node || !node.IsMap()) {
        return invalid(entry.file, entry.field + ".cluster", "missing");
    }
    TRY_ASSIGN(auto server, string_field(node, "server", entry, "cluster."));
    if (!server || server->empty()) {
        return invalid(entry.file, entry.field + ".cluster.server", "missing");
    }
    config.server = *server;
    TRY_ASSIGN(config.ca_pem, data_or_file(node, "certificate-authority", entry, "cluster."));
    if (YAML::Node insecure = node["insecure-skip-tls-verify"]; insecure && !insecure.IsNull()) {
        try {
            config.insecure_skip_tls_verify = insecure.as<bool>();
        } catch (const YAML::Exception&) {
            return invalid(entry.file, entry.field + ".cluster.insecure-skip-tls-verify",
                           "must be true or false");
        }
    }
    if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {  // as kubectl refuses it
        return invalid(entry.file, entry.field + ".cluster.insecure-skip-tls-verify",
                       "cannot be combined with a certificate-authority");
    }
    TRY_ASSIGN(auto server_name, string_field(node, "tls-server-name", entry, "cluster."));
    config.tls_server_name = server_name.value_or("");
    TRY_ASSIGN(auto proxy, string_field(node, "proxy-url", entry, "cluster."));
    if (proxy && !proxy->empty()) {
        TRY(check_proxy_url(*proxy, entry));
        config.proxy_url = *proxy;
    }
    return Status::ok();
}

Status apply_user(const Entry& entry, RestConfig& config) {
    const YAML::Node& node = entry.body;
    if (!node || node.IsNull()) {
        return Status::ok();  // a user with no credentials: anonymous
    }
    if (!node.IsMap()) {
        return invalid(entry.file, entry.field + ".user", "must be a mapping");
    }
    if (YAML::Node provider = node["auth-provider"]; provider && !provider.IsNull()) {
        // kubectl dropped the built-in providers (gcp, azure, oidc) in 1.26; ignoring one
        // would run anonymous and fail later with a puzzling 401/403.
        return invalid(entry.file, entry.field + ".user.auth-provider",
                       "auth-provider plugins are not supported; use an exec credential plugin "
                       "(gke-gcloud-auth-plugin, kubelogin) or a token");
    }
    TRY_ASSIGN(auto token, string_field(node, "token", entry, "user."));
    TRY_ASSIGN(auto token_file, string_field(node, "tokenFile", entry, "user."));
    if (token && !token->empty()) {
        config.bearer_token = SecretString(*token);
    } else if (token_file && !token_file->empty()) {
        config.token_file = resolve(*token_file, entry.file);
        auto contents = read_whole_file(
            config.token_file,
            fmt::format("kubeconfig {}: {}.user.tokenFile", entry.file, entry.field));
        if (!contents) {
            return Status(Code::invalid, contents.status().message());
        }
        std::string value = contents.value();
        value = value.substr(0, value.find_first_of("\r\n"));
        config.bearer_token = SecretString(std::move(value));
    }
    TRY_ASSIGN(config.client_cert_pem, data_or_file(node, "client-certificate", entry, "user."));
    TRY_ASSIGN(auto key, data_or_file(node, "client-key", entry, "user."));
    config.client_key_pem = SecretString(std::move(key));
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
        return invalid(entry.file, entry.field + ".user",
                       "client-certificate and client-key must be given together");
    }
    if (YAML::Node exec = node["exec"]; exec && !exec.IsNull()) {
        try {
            TRY_ASSIGN(config.exec, parse_exec(exec, entry));
        } catch (const YAML::Exception& e) {
            return invalid(entry.file, entry.field + ".user.exec", e.msg);
        }
    }
    return apply_impersonation(node, entry, config);
}

// provideClusterInfo: the plugin is told the cluster as resolved (client-go's
// ExecClusterInfo), with the cluster's exec extension as spec.cluster.config.
Status fill_exec_cluster(const Entry& cluster, RestConfig& config) {
    ExecCluster& out = *config.exec->cluster;
    out.server = config.server;
    out.tls_server_name = config.tls_server_name;
    out.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
    out.ca_pem = config.ca_pem;
    out.proxy_url = config.proxy_url;
    if (YAML::Node off = cluster.body["disable-compression"]; off && !off.IsNull()) {
        if (!off.IsScalar() || !YAML::convert<bool>::decode(off, out.disable_compression)) {
            return invalid(cluster.file, cluster.field + ".cluster.disable-compression",
                           "must be true or false");
        }
    }
    TRY_ASSIGN(out.config_json, exec_extension_json(cluster.body, cluster));
    return Status::ok();
}

Result<RestConfig> resolve_context(const Merged& merged, const std::optional<std::string>& wanted) {
    std::optional<std::string> name = wanted ? wanted : merged.current_context;
    if (!name) {
        return invalid(merged.files, "current-context", "not set, and no context was chosen");
    }
    auto context = merged.contexts.find(*name);
    if (context == merged.contexts.end()) {
        std::string known;
        for (const auto& [known_name, entry] : merged.contexts) {
            known += (known.empty() ? "" : ", ") + known_name;
        }
        return invalid(
            merged.files, "contexts",
            fmt::format("context \"{}\" not found; {}", *name,
                        known.empty() ? "the file has no contexts" : "the contexts are: " + known));
    }
    const Entry& ctx = context->second;
    if (!ctx.body || !ctx.body.IsMap()) {
        return invalid(ctx.file, ctx.field + ".context", "must be a mapping");
    }
    RestConfig config;
    config.context_name = *name;
    config.source = ctx.file;
    TRY_ASSIGN(auto cluster_name, string_field(ctx.body, "cluster", ctx, "context."));
    if (!cluster_name || cluster_name->empty()) {
        return invalid(ctx.file, ctx.field + ".context.cluster", "missing");
    }
    auto cluster = merged.clusters.find(*cluster_name);
    if (cluster == merged.clusters.end()) {
        return invalid(ctx.file, ctx.field + ".context.cluster",
                       fmt::format("cluster \"{}\" not found", *cluster_name));
    }
    TRY(apply_cluster(cluster->second, config));
    TRY_ASSIGN(auto user_name, string_field(ctx.body, "user", ctx, "context."));
    if (user_name && !user_name->empty()) {
        auto user = merged.users.find(*user_name);
        if (user == merged.users.end()) {
            return invalid(ctx.file, ctx.field + ".context.user",
                           fmt::format("user \"{}\" not found", *user_name));
        }
        TRY(apply_user(user->second, config));
    }
    if (config.exec && config.exec->cluster) {
        TRY(fill_exec_cluster(cluster->second, config));
    }
    TRY_ASSIGN(auto ns, string_field(ctx.body, "namespace", ctx, "context."));
    config.namespace_name = ns.value_or("");
    return config;
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ':');) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    return out;
}

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

}  // namespace

KubeconfigSources KubeconfigSources::from_environment() {
    KubeconfigSources sources;
    if (const char* value = std::getenv("KUBECONFIG")) {
        sources.kubeconfig_env = value;
    }
    sources.home = env_or_empty("HOME");
    sources.service_host = env_or_empty("KUBERNETES_SERVICE_HOST");
    sources.service_port = env_or_empty("KUBERNETES_SERVICE_PORT");
    return sources;
}

Result<RestConfig> load_kubeconfig_files(const std::vector<std::string>& files,
                                         const std::optional<std::string>& context) {
    Merged merged;
    try {
        for (const auto& file : files) {
            merged.files += (merged.files.empty() ? "" : ":") + file;
            TRY(merge_file(file, merged));
        }
        return resolve_context(merged, context);
    } catch (const YAML::Exception& e) {  // a field of an unexpected shape
        return Status(Code::invalid, fmt::format("kubeconfig {}:{}:{}: {}", merged.files,
                                                 e.mark.line + 1, e.mark.column + 1, e.msg));
    }
}

Result<RestConfig> load_rest_config(const KubeconfigSources& sources) {
    if (sources.explicit_path) {
        if (!fs::exists(*sources.explicit_path)) {
            return Status(Code::invalid,
                          fmt::format("kubeconfig {}: no such file", *sources.explicit_path));
        }
        return load_kubeconfig_files({*sources.explicit_path}, sources.context);
    }
    std::vector<std::string> candidates;
    if (sources.kubeconfig_env && !sources.kubeconfig_env->empty()) {
        candidates = split_list(*sources.kubeconfig_env);
    } else if (!sources.home.empty()) {
        candidates.push_back((fs::path(sources.home) / ".kube" / "config").string());
    }
    std::vector<std::string> existing;
    for (const auto& file : candidates) {
        if (fs::exists(file)) {  // kubectl skips missing files of the list
            existing.push_back(file);
        }
    }
    if (!existing.empty()) {
        return load_kubeconfig_files(existing, sources.context);
    }
    if (!sources.service_host.empty()) {
        return load_in_cluster(sources.in_cluster_root, sources.service_host, sources.service_port);
    }
    return Status(
        Code::invalid,
        "no kubeconfig found (set KUBECONFIG or --kubeconfig) and not running in a cluster");
}

Result<RestConfig> load_in_cluster(const std::string& root, const std::string& service_host,
                                   const std::string& service_port) {
    if (service_host.empty() || service_port.empty()) {
        return Status(
            Code::invalid,
            "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    }
    RestConfig config;
    config.source = root;
    const bool ipv6 = service_host.find(':') != std::string::npos;
    config.server =
        fmt::format("https://{}:{}", ipv6 ? "[" + service_host + "]" : service_host, service_port);
    config.token_file = (fs::path(root) / "token").string();
    TRY_ASSIGN(auto token, read_whole_file(config.token_file, "in-cluster token"));
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) {
        token.pop_back();
    }
    config.bearer_token = SecretString(std::move(token));
    TRY_ASSIGN(config.ca_pem,
               read_whole_file((fs::path(root) / "ca.crt").string(), "in-cluster CA"));
    auto ns = read_whole_file((fs::path(root) / "namespace").string(), "in-cluster namespace");
    if (ns) {
        config.namespace_name = ns.value().substr(0, ns.value().find_first_of("\r\n"));
    }
    return config;
}

}  // namespace envgate::kube
