#include "runner/connect/step_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>
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

long monotonic_ms() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

// What envgate writes to its guardian: `k_alive` while it holds its lock, `k_quit` when
// the step ended on its own (the guardian leaves without killing anything).
constexpr char k_alive = 'a';
constexpr char k_quit = 'q';

// The guardian, in a child forked while envgate may have threads: only async-signal-safe
// calls. It sits in a process group of its own (a runner that kills envgate's group, or
// a cancel's SIGTERM to the step's group, leaves it) and keeps no descriptor but `ctrl`,
// so it holds no flock, socket or job-log pipe of envgate's. End of file on `ctrl`
// (envgate died: the kernel closed its end), or no `k_alive` within `watchdog_ms` when
// that is positive, kills the step's group at once.
[[noreturn]] void guard(int ctrl, pid_t group, long watchdog_ms) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT}) {
        sigaction(sig, &ignore, nullptr);
    }
    setpgid(0, 0);
    constexpr int k_fd = 3;
    if (ctrl != k_fd) {
        dup2(ctrl, k_fd);
    }
    for (int fd = 0; fd < k_fd; ++fd) {
        close(fd);
    }
    close_range(k_fd + 1, ~0U, 0);
    long deadline = watchdog_ms > 0 ? monotonic_ms() + watchdog_ms : -1;
    char buf[64];
    while (true) {
        long wait = deadline < 0 ? -1 : std::max(0L, deadline - monotonic_ms());
        pollfd p{k_fd, POLLIN, 0};
        int ready = poll(&p, 1, static_cast<int>(std::min(wait, 1L << 30)));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        ssize_t n = ready > 0 ? read(k_fd, buf, sizeof buf) : 0;
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n > 0 && std::memchr(buf, k_quit, static_cast<size_t>(n)) != nullptr) {
            _exit(0);
        }
        if (n <= 0) {  // envgate died, or stopped proving that it holds the lock
            kill(-group, SIGKILL);
            _exit(0);
        }
        if (watchdog_ms > 0) {
            deadline = monotonic_ms() + watchdog_ms;
        }
    }
}

// Starts the guardian of the step whose group is `group`; returns the write end of its
// control pipe (close-on-exec and non-blocking: no other child keeps it open, and a
// stopped guardian never blocks envgate) and its pid.
Result<std::pair<int, pid_t>> start_guardian(pid_t group, Duration watchdog) {
    int ctrl[2];
    if (pipe2(ctrl, O_CLOEXEC) != 0) {
        return Status(Code::io, std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    long watchdog_ms = std::chrono::duration_cast<std::chrono::milliseconds>(watchdog).count();
    pid_t pid = fork();
    if (pid == 0) {
        guard(ctrl[0], group, watchdog > Duration::zero() ? std::max(1L, watchdog_ms) : 0);
    }
    int err = errno;
    close(ctrl[0]);
    if (pid < 0) {
        close(ctrl[1]);
        return Status(Code::io,
                      std::string("cannot start the step's guardian: ") + std::strerror(err));
    }
    fcntl(ctrl[1], F_SETFL, O_NONBLOCK);
    return std::pair{ctrl[1], pid};
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
    auto guardian = start_guardian(*pid, step.watchdog);
    if (!guardian) {
        kill(-*pid, SIGKILL);
        close(fds[0]);
        waitpid(*pid, nullptr, 0);
        return guardian.status();
    }
    const int guard_fd = guardian->first;
    auto tell_guardian = [guard_fd](char what) { (void)!write(guard_fd, &what, 1); };
    StepExit result;
    LineSplitter lines(on_line);
    using Steady = std::chrono::steady_clock;
    std::optional<Steady::time_point> kill_at;
    std::optional<Steady::time_point> drain_until;  // the shell exited: read what is left
    char buf[4096];
    int status = 0;
    bool exited = false;
    while (true) {
        if (!step.holding || step.holding()) {
            tell_guardian(k_alive);
        }
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
    tell_guardian(k_quit);
    close(guard_fd);
    while (waitpid(guardian->second, nullptr, 0) < 0 && errno == EINTR) {
    }
    result.exit_code = decode_wait_status(status);
    return result;
}

}  // namespace envgate
