// kubesim's kubelet: runs the pods bound to its node as local processes (init
// containers in order, then the app containers), reports their status, finishes
// graceful deletions (SIGTERM, SIGKILL after the scaled grace period) and performs
// node-pressure evictions on request.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "test/kubesim/container_run.h"
#include "test/kubesim/store.h"

namespace kubesim {

class Kubelet {
  public:
    Kubelet(Store& store, double time_scale, std::string workdir);
    ~Kubelet();
    void start();
    // Kills every container process group and waits for them.
    void stop();
    // Node-pressure eviction: phase Failed, reason Evicted, DisruptionTarget
    // TerminationByKubelet; the pod is not deleted.
    Status evict(const std::string& ns, const std::string& name, const std::string& message);
    // The log file of a container (see ContainerRun::log_path), and whether it still runs.
    Result<std::string> log_path(const std::string& uid, const std::string& container,
                                 bool previous, bool* running);

  private:
    struct PodRun {
        PodIdentity id;
        std::vector<std::unique_ptr<ContainerRun>> init;
        std::vector<std::unique_ptr<ContainerRun>> app;
        bool terminating = false;
        bool finished = false;  // terminal, nothing left to do
        bool deleted_reported = false;
        bool dirty = true;
        SteadyTime kill_at = SteadyTime::max();
        std::string start_time;
    };

    void run();
    void sync_from_store();
    void step(PodRun& pod, SteadyTime now);
    void write_status(PodRun& pod);
    void record_events(PodRun& pod);
    void finish_deletion(PodRun& pod);
    nlohmann::json build_status(const PodRun& pod, const nlohmann::json& old) const;
    static std::string phase_of(const PodRun& pod);
    void wake();

    Store& m_store;
    double m_time_scale;
    std::string m_workdir;
    std::mutex m_mutex;                                     // guards m_pods
    std::map<std::string, std::unique_ptr<PodRun>> m_pods;  // by uid
    std::mutex m_wake_mutex;
    std::condition_variable m_wake_cv;
    std::atomic<bool> m_pods_changed{true};
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

}  // namespace kubesim
