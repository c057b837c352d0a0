// Runs a configured step (diff, deploy, qa) as a child process: `sh -c COMMAND` in
// its own process group, stdout and stderr merged and handed over line by line
// (the caller streams them into the job log, masked), SIGTERM to the whole group
// when the job is cancelled, then SIGKILL after a grace period. A guardian process
// kills the group when envgate dies or stops proving that it holds its lock.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate {

struct StepCommand {
    std::string command;                        // run with /bin/sh -c
    std::map<std::string, std::string> env;     // added to (and overriding) the inherited one
    Duration grace = std::chrono::seconds(10);  // SIGTERM -> SIGKILL
    // The step never outlives envgate: a guardian process of its own (not in envgate's
    // process group, nor in the step's) kills the step's group with SIGKILL as soon as
    // envgate dies, and also when envgate has not shown for `watchdog` that it still
    // holds its lock (envgate stopped, e.g. SIGSTOP, or `holding` said no). Zero: only
    // envgate's death is watched.
    Duration watchdog{};
    std::function<bool()> holding{};  // asked every poll; unset: always holding
};

struct StepExit {
    int exit_code = 0;     // the shell's exit status (128+N if a signal killed it)
    int cancelled_by = 0;  // the signal that made us stop it, or 0
};

// The seam `envgate run` uses; a fake in tests records the commands.
class ProcessRunner {
  public:
    virtual ~ProcessRunner() = default;
    virtual Result<StepExit> run(const StepCommand& step,
                                 const std::function<void(const std::string&)>& on_line,
                                 const std::function<int()>& pending_signal) = 0;
};

class PosixProcessRunner : public ProcessRunner {
  public:
    Result<StepExit> run(const StepCommand& step,
                         const std::function<void(const std::string&)>& on_line,
                         const std::function<int()>& pending_signal) override;
};

}  // namespace envgate
