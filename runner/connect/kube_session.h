// Connects a command to its cluster: the kubeconfig chosen as kubectl would choose
// it (--kubeconfig, KUBECONFIG, ~/.kube/config, in-cluster), the context from
// --context or the environment's kube_context, one API client for requests and a
// factory of further clients for watches. The bearer token is masked in the log.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gates/status.h"
#include "runner/base/context.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/rest_config.h"
#include "runner/report/job_log.h"

namespace envgate {

struct KubeTarget {
    std::optional<std::string> kubeconfig;  // --kubeconfig
    std::optional<std::string> context;     // --context or the environment's kube_context
    // Bounds each call's retries and each request: a lock holder's renewals must give
    // up before its renew deadline, not after the default minute of back-off.
    std::optional<Duration> retry_budget;
};

struct KubeSession {
    kube::RestConfig config;
    std::unique_ptr<kube::KubeApi> api;
    // Opens another connection to the same cluster (one per watch).
    std::function<Result<std::unique_ptr<kube::KubeApi>>()> connect;
};

Result<KubeSession> open_kube_session(const KubeTarget& target, Context& ctx, JobLog& log);

// How errors name the cluster `config` reaches: "kubeconfig context \"C\", server S"
// (or the in-cluster configuration), so a refused call says which cluster refused it.
std::string describe_cluster(const kube::RestConfig& config);

}  // namespace envgate
