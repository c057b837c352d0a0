// Runs a kubeconfig `exec` credential plugin (client.authentication.k8s.io/v1) and
// caches the ExecCredential it prints until its expirationTimestamp, as kubectl does.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/kube/rest_config.h"

namespace envgate::kube {

struct ExecCredentials {
    SecretString token;
    std::string client_cert_pem;
    SecretString client_key_pem;
    std::optional<TimePoint> expires;  // nullopt: valid until the server says 401
    std::uint64_t generation = 0;      // which run of the provider's plugin made them
};

// Runs the plugin once and parses its ExecCredential. Code::unauthorized when it fails;
// the message never quotes the plugin's output (it holds the credential). A signal that
// `pending_signal` (when set) reports kills the plugin: Code::cancelled.
Result<ExecCredentials> run_exec_plugin(const ExecConfig& exec,
                                        const std::function<int()>& pending_signal = {});

// KUBERNETES_EXEC_INFO for a non-interactive run: an ExecCredential of
// `exec.api_version` whose spec has interactive false and, when the kubeconfig asked
// for it (provideClusterInfo), the cluster (client.authentication.k8s.io Cluster).
std::string exec_info_json(const ExecConfig& exec);

// The error when `exec.command` is not found: names it and its kubeconfig field, then
// a blank line and the kubeconfig's installHint (how to install it), as kubectl does.
std::string exec_not_found_message(const ExecConfig& exec);

// Parses what a plugin printed; errors start with `who` and never quote `output`.
Result<ExecCredentials> parse_exec_credential(const std::string& output, const std::string& who);

// One per cluster and process, shared by all its connections (client-go keeps one
// authenticator per exec config): the plugin runs once per credential, not once per
// connection. Thread-safe; a get() that runs the plugin makes the others wait for it.
class ExecCredentialProvider {
  public:
    // `pending_signal` (optional): a signal it reports stops a plugin run.
    ExecCredentialProvider(ExecConfig exec, Clock& clock, std::function<int()> pending_signal = {})
        : m_exec(std::move(exec)), m_clock(clock), m_pending_signal(std::move(pending_signal)) {}

    // The cached credentials, or fresh ones once they expired or were invalidated.
    Result<ExecCredentials> get();
    // The server refused (401) the credentials of run `generation`: forget them, so the
    // next get() runs the plugin again; unless a later run already replaced them (a 401
    // on another connection came first), so that one expiry runs the plugin once.
    void invalidate(std::uint64_t generation);
    int runs() const;

  private:
    ExecConfig m_exec;
    Clock& m_clock;
    const std::function<int()> m_pending_signal;
    mutable Mutex m_mutex;
    std::optional<ExecCredentials> m_cached GUARDED_BY(m_mutex);
    int m_runs GUARDED_BY(m_mutex) = 0;
};

}  // namespace envgate::kube
