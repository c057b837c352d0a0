// Runs a command in-process with a Context of string streams, a FakeEnv and a fixed
// environment, and captures its exit code, stdout and stderr.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "runner/connect/context.h"
#include "test/fakes/fake_env.h"

namespace envgate::test {

struct CapturedRun {
    int code;
    std::string out;
    std::string err;
};

// `command(ctx)` returns the exit code; `vars` is the whole environment it sees.
template <typename Command>
CapturedRun capture_run(Command command, std::map<std::string, std::string> vars = {}) {
    std::istringstream in;
    std::ostringstream out;
    std::ostringstream err;
    FakeEnv env{TimePoint{}};
    Context ctx{in, out, err, env,
                [vars = std::move(vars)](const std::string& k) -> std::optional<std::string> {
                    auto it = vars.find(k);
                    return it == vars.end() ? std::nullopt : std::optional(it->second);
                }};
    int code = command(ctx);
    return {code, out.str(), err.str()};
}

}  // namespace envgate::test
