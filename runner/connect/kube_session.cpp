#include "runner/connect/kube_session.h"

#include <algorithm>

#include "runner/kube/exec_credential.h"
#include "runner/kube/http_kube_api.h"
#include "runner/kube/kubeconfig.h"
#include "runner/kube/proxy_env.h"

namespace envgate {

Result<KubeSession> open_kube_session(const KubeTarget& target, const GetenvFn& getenv,
                                      Clock& clock, std::function<int()> pending_signal,
                                      JobLog& log) {
    kube::KubeconfigSources sources;
    sources.explicit_path = target.kubeconfig;
    sources.kubeconfig_env = getenv("KUBECONFIG");
    sources.home = getenv("HOME").value_or("");
    sources.context = target.context;
    sources.service_host = getenv("KUBERNETES_SERVICE_HOST").value_or("");
    sources.service_port = getenv("KUBERNETES_SERVICE_PORT").value_or("");
    TRY_ASSIGN(kube::RestConfig config, kube::load_rest_config(sources));
    if (config.proxy_url.empty()) {  // kubeconfig proxy-url wins over the environment
        TRY_ASSIGN(config.proxy_url, kube::proxy_from_environment(config.server, getenv));
    }
    log.add_secret(config.bearer_token.reveal());
    log.add_secret(config.client_key_pem.reveal());
    log.add_secret(kube::proxy_password(config.proxy_url));
    kube::HttpOptions options;
    options.pending_signal = pending_signal;
    if (target.retry_budget) {
        options.retry.max_elapsed = *target.retry_budget;
        options.request_timeout = std::max<Duration>(*target.retry_budget, std::chrono::seconds(1));
    }
    if (config.exec) {  // one plugin run per credential for all the session's connections
        options.exec_credentials =
            std::make_shared<kube::ExecCredentialProvider>(*config.exec, clock, pending_signal);
    }
    auto connect = [config, &clock, options]() -> Result<std::unique_ptr<kube::KubeApi>> {
        TRY_ASSIGN(auto api, kube::HttpKubeApi::create(config, clock, options));
        return std::unique_ptr<kube::KubeApi>(std::move(api));
    };
    TRY_ASSIGN(auto api, connect());
    return KubeSession{std::move(config), std::move(api), connect};
}

std::string describe_cluster(const kube::RestConfig& config) {
    std::string where = config.context_name.empty()
                            ? std::string("the in-cluster configuration")
                            : "kubeconfig context \"" + config.context_name + "\"";
    return where + ", server " + config.server;
}

}  // namespace envgate
