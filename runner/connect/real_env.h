// The real Env: the system clock, the process's SIGTERM/SIGINT, HTTPS connections to
// Kubernetes, the file and Lease lock stores, POSIX step processes and the GitLab API.
// Built once, by run_main (runner/app.cpp); nothing else constructs it.
#pragma once

#include "runner/base/real_clock.h"
#include "runner/connect/env.h"
#include "runner/connect/step_runner.h"

namespace envgate {

class RealEnv : public Env {
  public:
    RealEnv();

    Clock& clock() override { return m_clock; }
    int pending_signal() override;
    bool real_time() const override { return true; }
    Result<KubeSession> connect_kube(const KubeTarget& target, const GetenvFn& getenv,
                                     JobLog& log) override;
    Result<std::unique_ptr<locks::LockStore>> open_lock_store(const LockStoreTarget& target,
                                                              const GetenvFn& getenv,
                                                              JobLog& log) override;
    ProcessRunner& processes() override { return m_processes; }
    Result<std::unique_ptr<GroupMembers>> gitlab(const GitLabSettings& settings) override;

  private:
    RealClock m_clock;
    PosixProcessRunner m_processes;
};

}  // namespace envgate
