// Loads a RestConfig the way kubectl does: an explicit --kubeconfig file, else the
// KUBECONFIG list (merged, first file to set a key wins), else ~/.kube/config, else the
// in-cluster service account. Errors name the file and the field.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/kube/rest_config.h"

namespace envgate::kube {

inline constexpr const char* k_in_cluster_root = "/var/run/secrets/kubernetes.io/serviceaccount";

// Where to look. from_environment() fills it from the process; tests build it by hand.
struct KubeconfigSources {
    std::optional<std::string> explicit_path;   // --kubeconfig
    std::optional<std::string> kubeconfig_env;  // $KUBECONFIG, ':'-separated
    std::string home;                           // $HOME, for ~/.kube/config
    std::optional<std::string> context;         // --context; else current-context
    std::string in_cluster_root = k_in_cluster_root;
    std::string service_host;  // $KUBERNETES_SERVICE_HOST
    std::string service_port;  // $KUBERNETES_SERVICE_PORT

    static KubeconfigSources from_environment();
};

// The RestConfig of the chosen context, or of the in-cluster service account when no
// kubeconfig file exists. Code::invalid (with file and field) on a bad file.
Result<RestConfig> load_rest_config(const KubeconfigSources& sources);

// The RestConfig of a context in the given kubeconfig files (merged in order).
Result<RestConfig> load_kubeconfig_files(const std::vector<std::string>& files,
                                         const std::optional<std::string>& context);

// The in-cluster RestConfig: token, ca.crt and namespace under `root`, server from
// `service_host` and `service_port`.
Result<RestConfig> load_in_cluster(const std::string& root, const std::string& service_host,
                                   const std::string& service_port);

}  // namespace envgate::kube
