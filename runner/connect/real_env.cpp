#include "runner/connect/real_env.h"

#include "locks/file_store.h"
#include "locks/kubernetes_lease_store.h"
#include "runner/base/signals.h"
#include "runner/connect/kube_session.h"

namespace envgate {

// The clock's waits end at a signal too (within 50 ms), read through this Env.
RealEnv::RealEnv() : m_clock([this] { return pending_signal(); }) {}

int RealEnv::pending_signal() {
    return envgate::pending_signal();  // what the handler (runner/base/signals.h) stored
}

Result<KubeSession> RealEnv::connect_kube(const KubeTarget& target, const GetenvFn& getenv,
                                          JobLog& log) {
    return open_kube_session(
        target, getenv, m_clock, [this] { return pending_signal(); }, log);
}

// The kubernetes store owns its API client: Leases in the lock's namespace on the
// cluster of the environment's kube_context (KUBECONFIG, ~/.kube/config or in-cluster).
Result<std::unique_ptr<locks::LockStore>> RealEnv::open_lock_store(const LockStoreTarget& target,
                                                                   const GetenvFn& getenv,
                                                                   JobLog& log) {
    if (target.kind == LockStoreKind::file) {
        return std::unique_ptr<locks::LockStore>(std::make_unique<locks::FileStore>(target.path));
    }
    TRY_ASSIGN(KubeSession session, connect_kube(target.kube, getenv, log));
    std::shared_ptr<kube::KubeApi> api = std::move(session.api);
    return std::unique_ptr<locks::LockStore>(
        std::make_unique<locks::KubernetesLeaseStore>(api, target.namespace_));
}

Result<std::unique_ptr<GroupMembers>> RealEnv::gitlab(const GitLabSettings& settings) {
    return make_gitlab_members(settings);
}

}  // namespace envgate
