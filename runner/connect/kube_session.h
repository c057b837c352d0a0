// Connects a command to its cluster: the kubeconfig chosen as kubectl would choose
// it (--kubeconfig, KUBECONFIG, ~/.kube/config, in-cluster), the context from
// --context or the environment's kube_context, one API client for requests and a
// factory of further clients for watches. The bearer token is masked in the log.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/connect/env.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/rest_config.h"
#include "runner/report/job_log.h"

namespace envgate {

// The real connection, made by the real Env (real_env.h) alone: commands ask
// ctx.env.connect_kube(). Waits and retries run on `clock` and stop at a signal
// `pending_signal` reports.
Result<KubeSession> open_kube_session(const KubeTarget& target, const GetenvFn& getenv,
                                      Clock& clock, std::function<int()> pending_signal,
                                      JobLog& log);

// How errors name the cluster `config` reaches: "kubeconfig context \"C\", server S"
// (or the in-cluster configuration), so a refused call says which cluster refused it.
std::string describe_cluster(const kube::RestConfig& config);

}  // namespace envgate
