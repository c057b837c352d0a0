// The one wiring point (leveldb's Env, ninja's RealDiskInterface made in main): how a
// command reaches what lies outside the process. The clock, the signal source, and the
// factories of Kubernetes connections, lock stores, step processes and GitLab clients.
// run_main (runner/app.cpp) builds the real one (real_env.h) and hands it to every
// command through Context; tests hand a recording fake (test/fakes/fake_env.h), so a
// command runs in-process without a cluster, a process or a network.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "locks/lock_store.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/config/config.h"
#include "runner/connect/gitlab_members.h"
#include "runner/connect/step_runner.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/rest_config.h"
#include "runner/report/job_log.h"

namespace envgate {

// Reads an environment variable (CI variables, KUBECONFIG, NO_COLOR, ...).
using GetenvFn = std::function<std::optional<std::string>(const std::string&)>;

// Which cluster a command connects to.
struct KubeTarget {
    std::optional<std::string> kubeconfig;  // --kubeconfig
    std::optional<std::string> context;     // --context or the environment's kube_context
    // Bounds each call's retries and each request: a lock holder's renewals must give
    // up before its renew deadline, not after the default minute of back-off.
    std::optional<Duration> retry_budget;
};

// A connection to one cluster.
struct KubeSession {
    kube::RestConfig config;
    std::unique_ptr<kube::KubeApi> api;
    // Opens another connection to the same cluster (one per watch).
    std::function<Result<std::unique_ptr<kube::KubeApi>>()> connect;
};

// Where a lock's records live: a folder of the file store, or Leases in `namespace_`
// of the cluster `kube` reaches.
struct LockStoreTarget {
    LockStoreKind kind = LockStoreKind::file;
    std::string path;        // file store
    std::string namespace_;  // kubernetes store
    KubeTarget kube;         // kubernetes store
};

class Env {
  public:
    virtual ~Env() = default;

    // Every command's time. Thread-safe in the real process.
    virtual Clock& clock() = 0;
    // The number of the first SIGTERM/SIGINT received (a cancelled CI job), or 0. The
    // only way product code learns of a signal.
    virtual int pending_signal() = 0;
    // Whether clock() is the wall clock. Then a lock wait may block on the store's watch
    // (real time passes while it does); on a fake clock every wait must go through
    // Clock::sleep_until, so it re-reads instead.
    virtual bool real_time() const = 0;

    // Connects to the cluster `target` names (kubeconfig chosen as kubectl would, with
    // `getenv`); secrets of the connection are added to `log`'s masking.
    virtual Result<KubeSession> connect_kube(const KubeTarget& target, const GetenvFn& getenv,
                                             JobLog& log) = 0;
    // Opens the lock store `target` names.
    virtual Result<std::unique_ptr<locks::LockStore>> open_lock_store(const LockStoreTarget& target,
                                                                      const GetenvFn& getenv,
                                                                      JobLog& log) = 0;
    // Runs the configured steps (diff, deploy, qa) as processes.
    virtual ProcessRunner& processes() = 0;
    // A client of the GitLab server `settings` pin; `invalid` for a bad URL or CA file.
    virtual Result<std::unique_ptr<GroupMembers>> gitlab(const GitLabSettings& settings) = 0;
};

}  // namespace envgate
