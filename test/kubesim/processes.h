// Container processes: each runs in its own process group (so a signal reaches every
// child it forked), with stdout and stderr appended to a log file, stdin from /dev/null.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace kubesim {

struct SpawnSpec {
    std::vector<std::string> argv;
    std::vector<std::string> env;  // "NAME=value"
    std::string cwd;
    std::string log_path;
};

// Starts the process; returns its pid (also its process group id) or -1 with `error`.
pid_t spawn_process(const SpawnSpec& spec, std::string* error);
// Sends `sig` to the whole process group of `pid`.
void signal_group(pid_t pid, int sig);
// The exit code if `pid` has ended (128 + signal when killed), nullopt while it runs.
std::optional<int> poll_exit(pid_t pid);
// Blocks the signals kubesim handles itself; children get them unblocked and default.
void block_termination_signals();

}  // namespace kubesim
