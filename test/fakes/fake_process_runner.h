// A ProcessRunner for tests (ninja's commands_ran_): records every step it was asked
// to run (command and the variables added) and answers with what the test scripted for
// that command: lines of output, an exit code, or a failure to start; `during` runs in
// place of the process (to change the world while a step "runs").
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/connect/step_runner.h"

namespace envgate::test {

struct ScriptedStep {
    int exit_code = 0;
    std::vector<std::string> lines;     // printed by the step, in order
    std::optional<Status> not_started;  // the process could not be started
    // Stands for the process: runs before the step "exits" (may throw).
    std::function<void()> during;
    // Stop as a cancelled step would when the pending signal is set during `during`.
    bool honours_signal = true;
};

class FakeProcessRunner : public ProcessRunner {
  public:
    Result<StepExit> run(const StepCommand& step,
                         const std::function<void(const std::string&)>& on_line,
                         const std::function<int()>& pending_signal) override {
        commands.push_back(step.command);
        ran.push_back(step);
        ScriptedStep script;
        if (auto it = scripts.find(step.command); it != scripts.end()) {
            script = it->second;
        }
        if (script.not_started) {
            return *script.not_started;
        }
        for (const auto& line : script.lines) {
            on_line(line);
        }
        if (script.during) {
            script.during();
        }
        StepExit exit;
        exit.exit_code = script.exit_code;
        if (int sig = pending_signal(); sig != 0 && script.honours_signal) {
            exit.cancelled_by = sig;
            exit.exit_code = 128 + sig;
        }
        return exit;
    }

    // What to answer for `command` (exit 0, no output, unless scripted).
    std::map<std::string, ScriptedStep> scripts;
    std::vector<std::string> commands;  // every command run, in order
    std::vector<StepCommand> ran;       // the same, with their variables
};

}  // namespace envgate::test
