// The upgrade of one environment, in the order of spec/gates.md: lock -> diff ->
// pre-migrations -> deploy -> post-migrations -> batched-migrations-check -> qa
// (under the global qa lock) -> release, with the gates and steps envgate.yml adds
// where their `after` puts them (runner/config/run_order.h). A step starts only after
// the one before it succeeded; a failure or a cancellation applies the environment's
// failure policy.
// Everything it did lands in a RunReport, whatever the outcome.
#pragma once

#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "locks/heartbeat.h"
#include "locks/lock_manager.h"
#include "runner/config/config.h"
#include "runner/connect/context.h"
#include "runner/connect/kube_session.h"
#include "runner/connect/lock_target.h"
#include "runner/connect/step_runner.h"
#include "runner/gating/manifest.h"
#include "runner/report/job_log.h"
#include "runner/report/run_report.h"
#include "runner/run/fence.h"
#include "runner/run/upgrade_choices.h"

namespace envgate {

// What stop_signal() returns when the lock is lost: the step runner then ends the
// step's process group as it would on a cancellation.
inline constexpr int k_lock_lost_signal = SIGTERM;

struct UpgradeSettings : UpgradeChoices {
    std::optional<Duration> wait_timeout;
    bool delete_jobs_on_cancel = false;
    std::optional<std::string> kubeconfig;
    Duration poll_interval = std::chrono::seconds(5);
    Duration progress_interval = std::chrono::seconds(30);  // a quiet gate's heartbeat
    std::optional<Duration> gate_timeout;  // `envgate gate`: instead of the config's
};

// The job-log section of `step` of the upgrade of `env`.
std::string upgrade_section(const std::string& env, const std::string& step);

class Upgrade {
  public:
    Upgrade(const Config& config, const Environment& env, Context& ctx, JobLog& log,
            ProcessRunner& processes, UpgradeSettings settings);

    // Runs the whole upgrade and returns the exit status. Bad manifests, Jobs the API
    // would reject (a server-side dry run) and an unreachable cluster end it (2, 4)
    // before any lock is touched.
    int run();
    const RunReport& report() const { return m_report; }

  private:
    struct Planned {
        std::string name;
        bool gate = false;
        std::string command;             // steps
        std::optional<RenderedJob> job;  // gates
        std::string file;
        Duration timeout{};
    };
    int plan();
    int preflight();
    int preflight_access(const std::string& gate_namespace);
    std::string cluster_of(const Status& status) const;
    int lock();
    // --only of an entry after the first: why this job may not take the lock, or nullopt.
    std::optional<std::string> reentry_refusal(const locks::LockRecord& record) const;
    bool first_of_pipeline() const;
    int keep_for_next_job(int exit_code);
    int run_steps();
    int run_planned(const Planned& p, StepReport& step);
    int run_shell_step(const Planned& p, StepReport& step);
    int run_gate(const Planned& p, StepReport& step);
    int run_qa(const Planned& p, StepReport& step);
    // The fencing choke point (runner/run/fence.h): renews the lock, records `step` in
    // it, and fails unless this run can prove it still holds the lock. Every step and
    // gate (which creates a Job) passes it first.
    Status still_holding(const std::string& step);
    bool judge_renewal(const Result<locks::Decision>& d, TimePoint sent);
    // What the step and gate loops poll: a SIGTERM/SIGINT, or k_lock_lost_signal once
    // the lock can no longer be proven (they then stop the step's process group).
    std::function<int()> stop_signal();
    // After a step or gate: if the lock was lost meanwhile, marks `step` LockLost and
    // sets `code`.
    bool stopped_for_lock(StepReport& step, int& code);
    // Releases the lock (success) or applies the failure policy; returns the exit
    // status, non-zero when a release could not be written.
    int settle(int exit_code);
    // Runs one stage; an exception escaping it fails the step in progress (reason
    // InternalError) so that the failure policy and the reports still apply.
    int guarded(int (Upgrade::*stage)());
    void record_internal_error(const std::string& what);
    void fill_lock_report(const locks::LockRecord& record);
    StepReport& add_step(const std::string& name, const std::string& kind, const std::string& file);

    const Config& m_config;
    const Environment& m_env;
    Context& m_ctx;
    JobLog& m_log;
    ProcessRunner& m_processes;
    UpgradeSettings m_settings;
    RunReport m_report;
    std::vector<Planned> m_plan;
    std::optional<KubeSession> m_kube;
    std::optional<LockTarget> m_lock;
    locks::Holder m_me;
    std::unique_ptr<locks::LockManager> m_manager;
    bool m_holding = false;
    // Renews the environment lock every lease_duration / 3 through its own store.
    std::optional<LockTarget> m_beat_lock;
    std::unique_ptr<locks::LockManager> m_beat_manager;
    std::unique_ptr<locks::Heartbeat> m_heartbeat;
    std::mutex m_beat_mutex;  // m_beat_lock->spec.step, written here, read by the heartbeat
    std::unique_ptr<LockFence> m_fence;
    std::optional<std::string> m_lock_lost;  // why this run stopped holding the lock
    // A gate's Job was created (or found) or a step other than diff ran: from then on a
    // failure holds the lock; before, an infrastructure error releases it (settle).
    bool m_changed = false;
    // The latest unlock of the lock when this run took it: it names the gates' Jobs
    // (runner/run/reruns.h).
    std::optional<locks::Transition> m_unlock;
    void start_heartbeat();
    StoreOptions store_options() const;
};

}  // namespace envgate
