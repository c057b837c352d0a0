// Test helper: starts the kubesim binary on a free port with a temporary kubeconfig,
// and stops it with SIGTERM. Each test gets its own instance.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/kubesim/sim_client.h"

namespace kubesim::testing {

class SimProcess {
  public:
    // Starts `KUBESIM_BIN` with `args` added to --port 0 --write-kubeconfig.
    explicit SimProcess(const std::vector<std::string>& args);
    ~SimProcess();
    SimProcess(const SimProcess&) = delete;
    SimProcess& operator=(const SimProcess&) = delete;

    int port() const { return m_port; }
    pid_t pid() const { return m_pid; }
    const std::string& kubeconfig() const { return m_kubeconfig; }
    const std::string& dir() const { return m_dir; }
    // A new client for this instance.
    SimClient client() const;
    // SIGTERM and wait; returns the exit status (as from waitpid).
    int stop();

  private:
    pid_t m_pid = -1;
    int m_port = 0;
    std::string m_dir;
    std::string m_kubeconfig;
};

// Polls `pred` until it is true or `deadline` passes (generous deadlines, no fixed sleeps).
bool wait_until(const std::function<bool()>& pred,
                std::chrono::milliseconds deadline = std::chrono::seconds(30));
// Request helpers that fail the test on transport errors.
nlohmann::json get_json(SimClient& c, const std::string& path, int* code = nullptr);
nlohmann::json send_json(SimClient& c, const std::string& method, const std::string& path,
                         const nlohmann::json& body, int* code = nullptr,
                         const std::string& content_type = "application/json");

}  // namespace kubesim::testing
