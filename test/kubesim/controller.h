// kubesim's Job controller (batch/v1, Kubernetes 1.31+ behaviour): creates pods from
// the template, tracks them with the job-tracking finalizer and uncountedTerminatedPods,
// applies backoffLimit, activeDeadlineSeconds and podFailurePolicy, and writes
// FailureTarget then Failed (or SuccessCriteriaMet then Complete) and its Events.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "test/kubesim/container_run.h"
#include "test/kubesim/store.h"

namespace kubesim {

class JobController {
  public:
    JobController(Store& store, double time_scale);
    ~JobController();
    void start();
    void stop();

  private:
    // What the controller keeps in memory per Job (k8s backoffStore): failures since
    // the last success and when the last one was counted.
    struct Memory {
        int failures = 0;
        SteadyTime last_failure{};
        SteadyTime started_at{};
        SteadyTime finished_at{};
        bool finished_seen = false;
    };

    void run();
    void sync_all();
    void sync_job(const json& job, std::vector<json> pods);
    void collect_garbage(const std::vector<json>& jobs, const std::vector<json>& pods);
    void finished_job(const json& job, const std::vector<json>& pods);
    std::optional<json> decide_finish(const json& job, const std::vector<json>& pods);
    void delete_active(const json& job, const std::vector<json>& pods);
    // spec.suspend: deletes the active pods (their tracking finalizer removed first, so
    // they count as neither failed nor succeeded) and keeps the Suspended condition in
    // step with the spec. True when it wrote anything.
    bool sync_suspension(const json& job, const std::vector<json>& pods);
    // Counts terminated pods; true when it wrote anything.
    bool track_terminated(const json& job, const std::vector<json>& pods);
    // Creates the missing pods; returns how many. Pods still terminating take a slot
    // when only failed pods are replaced (podFailurePolicy or podReplacementPolicy Failed).
    // Indexed Jobs: one pod per index that is neither completed, failed nor running,
    // with the controller's index annotations.
    int create_pods(const json& job, const std::vector<json>& pods, int active, int succeeded,
                    int terminating);
    // backoffLimitPerIndex: FailureTarget once failed indexes pass maxFailedIndexes, or
    // once every index completed or failed with at least one failed.
    std::optional<json> decide_per_index(const json& job);
    std::vector<json> pods_of(const json& job);
    // The Job as stored now and its pods; false when it is gone or was replaced.
    bool reread(json& job, std::vector<json>& pods);
    Result<json> write_status(const json& job, const std::function<void(json&)>& fn);
    void remove_finalizer(const json& pod);
    void wake_at(SteadyTime t);

    Store& m_store;
    double m_time_scale;
    std::map<std::string, Memory> m_memory;  // by Job uid
    SteadyTime m_next_wake{};
    std::mutex m_wake_mutex;
    std::condition_variable m_wake_cv;
    std::atomic<bool> m_dirty{true};
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
};

}  // namespace kubesim
