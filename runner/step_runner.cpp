#include "runner/step_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

extern char** environ;

namespace envgate {
namespace {

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& extra) {
    std::vector<std::string> out;
    for (char** e = environ; *e != nullptr; ++e) {
        std::string entry(*e);
        std::string name = entry.substr(0, entry.find('='));
        if (extra.count(name) == 0) {
            out.push_back(entry);
        }
    }
    for (const auto& [k, v] : extra) {
        out.push_back(k + "=" + v);
    }
    return out;
}

// Splits what arrives on the pipe into lines; a last line without \n is flushed at EOF.
class LineSplitter {
  public:
    explicit LineSplitter(const std::function<void(const std::string&)>& on_line)
        : m_on_line(on_line) {}
    void feed(const char* data, size_t n) {
        m_pending.append(data, n);
        size_t nl;
        while ((nl = m_pending.find('\n')) != std::string::npos) {
            m_on_line(m_pending.substr(0, nl));
            m_pending.erase(0, nl + 1);
        }
    }
    void flush() {
        if (!m_pending.empty()) {
            m_on_line(m_pending);
            m_pending.clear();
        }
    }

  private:
    const std::function<void(const std::string&)>& m_on_line;
    std::string m_pending;
};

Result<pid_t> spawn(const StepCommand& step, int out_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    std::vector<std::string> env = merged_environment(step.env);
    std::vector<char*> envp;
    for (auto& e : env) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    std::string sh = "/bin/sh", dash_c = "-c", command = step.command;
    char* argv[] = {sh.data(), dash_c.data(), command.data(), nullptr};
    pid_t pid = 0;
    int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        return Status(Code::failed, "cannot start /bin/sh: " + std::string(std::strerror(rc)));
    }
    return pid;
}

int decode_wait_status(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return 128 + WTERMSIG(status);
    }
    return 1;
}

}  // namespace

Result<StepExit> PosixProcessRunner::run(const StepCommand& step,
                                         const std::function<void(const std::string&)>& on_line,
                                         const std::function<int()>& pending_signal) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return Status(Code::io, std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    auto pid = spawn(step, fds[1]);
    close(fds[1]);
    if (!pid) {
        close(fds[0]);
        return pid.status();
    }
    StepExit result;
    LineSplitter lines(on_line);
    using Steady = std::chrono::steady_clock;
    std::optional<Steady::time_point> kill_at;
    std::optional<Steady::time_point> drain_until;  // the shell exited: read what is left
    char buf[4096];
    int status = 0;
    bool exited = false;
    while (true) {
        if (int sig = pending_signal(); sig != 0 && result.cancelled_by == 0) {
            result.cancelled_by = sig;
            kill(-*pid, SIGTERM);
            kill_at = Steady::now() + step.grace;
        }
        if (kill_at && Steady::now() >= *kill_at) {
            kill(-*pid, SIGKILL);
            kill_at.reset();
        }
        if (!exited && waitpid(*pid, &status, WNOHANG) == *pid) {
            exited = true;
            drain_until = Steady::now() + std::chrono::milliseconds(200);
        }
        if (drain_until && Steady::now() >= *drain_until) {
            break;  // a background process of the step still holds the pipe open
        }
        pollfd p{fds[0], POLLIN, 0};
        if (poll(&p, 1, exited ? 20 : 100) > 0) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n > 0) {
                lines.feed(buf, static_cast<size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                break;
            }
        }
    }
    close(fds[0]);
    lines.flush();
    while (!exited && waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    kill(-*pid, SIGKILL);  // whatever the step left running in its group
    result.exit_code = decode_wait_status(status);
    return result;
}

}  // namespace envgate
