// Test helper: see sim_process.h.
#include "test/kubesim/sim_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace kubesim::testing {

SimProcess::SimProcess(const std::vector<std::string>& args) {
    char tmpl[] = "/tmp/kubesim-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    m_dir = tmpl;
    m_kubeconfig = m_dir + "/kubeconfig";
    std::vector<std::string> argv = {KUBESIM_BIN, "--port", "0", "--write-kubeconfig",
                                     m_kubeconfig};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    std::string out = m_dir + "/port";
    std::string err = m_dir + "/kubesim.log";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rc = posix_spawn(&m_pid, cargv[0], &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        throw std::runtime_error("cannot start " + std::string(KUBESIM_BIN));
    }
    bool ok = wait_until([&] {
        std::ifstream in(out);
        int port = 0;
        if (in >> port && port > 0) {
            m_port = port;
            return true;
        }
        return false;
    });
    if (!ok) {
        stop();
        throw std::runtime_error("kubesim did not print its port");
    }
}

SimProcess::~SimProcess() {
    stop();
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
}

SimClient SimProcess::client() const {
    auto c = SimClient::from_kubeconfig(m_kubeconfig);
    if (!c) {
        throw std::runtime_error(c.status().message());
    }
    return std::move(c).value();
}

int SimProcess::stop() {
    if (m_pid <= 0) {
        return 0;
    }
    ::kill(m_pid, SIGTERM);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
    return status;
}

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds deadline) {
    auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return pred();
}

nlohmann::json get_json(SimClient& c, const std::string& path, int* code) {
    return send_json(c, "GET", path, nullptr, code);
}

nlohmann::json send_json(SimClient& c, const std::string& method, const std::string& path,
                         const nlohmann::json& body, int* code, const std::string& content_type) {
    auto r = c.request(method, path, body.is_null() ? "" : body.dump(), content_type);
    if (!r) {
        throw std::runtime_error(r.status().message());
    }
    if (code != nullptr) {
        *code = r->code;
    }
    try {
        return r->body.empty() ? nlohmann::json() : nlohmann::json::parse(r->body);
    } catch (const nlohmann::json::exception&) {
        return nlohmann::json(r->body);
    }
}

}  // namespace kubesim::testing
