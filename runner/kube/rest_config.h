// RestConfig: everything HttpKubeApi needs to reach one cluster (server, TLS trust,
// credentials), as resolved from a kubeconfig context or the in-cluster service account.
// Secrets sit in SecretString so that no one prints them by accident.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace envgate::kube {

// A credential. It has no operator<< and no implicit conversion: reading it takes a
// visible reveal() at the one place that sends it.
class SecretString {
  public:
    SecretString() = default;
    explicit SecretString(std::string value) : m_value(std::move(value)) {}
    const std::string& reveal() const { return m_value; }
    bool empty() const { return m_value.empty(); }

  private:
    std::string m_value;
};

// The cluster as a credential plugin sees it when its kubeconfig entry sets
// provideClusterInfo: KUBERNETES_EXEC_INFO's spec.cluster (client.authentication.k8s.io
// Cluster), taken from the context's cluster.
struct ExecCluster {
    std::string server;
    std::string tls_server_name;
    bool insecure_skip_tls_verify = false;
    std::string ca_pem;  // sent base64-encoded, as certificate-authority-data
    std::string proxy_url;
    bool disable_compression = false;
    // The cluster's `extensions` entry named client.authentication.k8s.io/exec, as JSON
    // text; empty when there is none.
    std::string config_json;
};

// A `client.authentication.k8s.io` credential plugin (kubeconfig users[].user.exec).
struct ExecConfig {
    std::string api_version;
    std::string command;  // resolved against the kubeconfig's directory if it has a '/'
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    // A plugin that has not answered by then is killed (client-go has no bound; a hung
    // plugin must not hold the lock forever). Also ended by SIGTERM/SIGINT.
    std::chrono::milliseconds timeout = std::chrono::seconds(60);
    std::string install_hint{};  // user.exec.installHint: shown when `command` is not found
    std::string field{};         // "kubeconfig FILE: users[name=X].user.exec", for messages
    std::optional<ExecCluster> cluster{};  // set when user.exec.provideClusterInfo is true
};

struct RestConfig {
    std::string server;          // "https://host:6443[/prefix]"
    std::string context_name;    // empty for in-cluster
    std::string namespace_name;  // the context's namespace, "" if unset
    std::string ca_pem;          // trusted CAs; empty: the system's default CAs
    bool insecure_skip_tls_verify = false;
    std::string tls_server_name;  // cluster.tls-server-name: the name verified and sent (SNI)
    std::string proxy_url;        // cluster.proxy-url: "http://[user:password@]host:port"
    SecretString bearer_token;
    std::string token_file;  // re-read when set (service-account tokens rotate)
    std::string client_cert_pem;
    SecretString client_key_pem;
    std::optional<ExecConfig> exec;
    // user.as, as-uid, as-groups: sent as Impersonate-User, -Uid and one Impersonate-Group
    // header per group, as kubectl --as/--as-group do.
    std::string impersonate_user;
    std::string impersonate_uid;
    std::vector<std::string> impersonate_groups;
    std::string source;  // which file(s) it came from, for messages
};

}  // namespace envgate::kube
