// One container of a pod as the kubesim kubelet runs it: its process instances, the
// restart back-off (immediate first restart, then 10 s doubling to 300 s, scaled), and
// its ContainerStatus (state, lastState, restartCount) exactly as the kubelet reports it.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kubesim {

using SteadyTime = std::chrono::steady_clock::time_point;

struct PodIdentity {
    std::string ns;
    std::string name;
    std::string uid;
    std::string restart_policy;
    double time_scale = 1.0;
    std::string dir;  // scratch directory of the pod
};

class ContainerRun {
  public:
    ContainerRun(const PodIdentity& pod, nlohmann::json spec, bool init);

    const std::string& name() const { return m_name; }
    bool running() const { return m_pid > 0; }
    // Terminated and never restarting.
    bool done() const { return m_done; }
    bool started_ever() const { return m_instances > 0; }
    bool succeeded() const { return m_done && m_exit_code == 0; }
    int restart_count() const { return m_restart_count; }
    // Starts the first instance, or the next one once its back-off has passed.
    // Returns true when the status changed.
    bool maybe_start(SteadyTime now);
    // Reaps the process if it ended and decides about a restart. True when changed.
    bool poll(SteadyTime now);
    // SIGTERM now; no more restarts.
    void terminate();
    void kill_now();
    // Marks the container as lost by a node eviction (137, ContainerStatusUnknown).
    void mark_evicted();
    // The ContainerStatus object.
    nlohmann::json status() const;
    // Log file for the current (`previous` = false) or previous instance, or an error
    // text in the kubelet's words.
    bool log_path(bool previous, std::string* path, std::string* error) const;
    // When it wants to be woken up next (back-off end), or max() if never.
    SteadyTime wake_time() const;
    // The kubelet Events (type, reason, message) raised since the last call.
    std::vector<std::array<std::string, 3>> take_events();

  private:
    std::string container_id(int instance) const;
    std::string instance_log(int instance) const;
    void on_exit(int code, SteadyTime now);
    std::string termination_message(int code, int instance) const;

    PodIdentity m_pod;
    nlohmann::json m_spec;
    std::string m_name;
    bool m_init;
    pid_t m_pid = -1;
    int m_instances = 0;      // instances started so far
    int m_restart_count = 0;  // instances started - 1
    int m_crashes = 0;        // failures since the back-off was last reset
    int m_exit_code = 0;
    bool m_done = false;
    bool m_stopping = false;
    bool m_restart_pending = false;
    SteadyTime m_restart_at{};
    SteadyTime m_started_steady{};
    nlohmann::json m_state;
    nlohmann::json m_last_state = nlohmann::json::object();
    std::string m_start_error;
    std::vector<std::array<std::string, 3>> m_events;
};

// The kubelet's duration text: "10s", "1m20s", "5m0s".
std::string go_duration(int seconds);

}  // namespace kubesim
