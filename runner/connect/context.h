// What a command receives from the outside world: its streams, the process
// environment's variables and the Env (clock, signals, connections, stores, processes,
// GitLab). Only run_main (runner/app.cpp) builds the real Env; tests build a Context
// on a fake one (test/fakes/fake_env.h).
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "runner/base/vocab/time.h"
#include "runner/connect/env.h"

namespace envgate {

struct Context {
    std::istream& in;
    std::ostream& out;
    std::ostream& err;
    Env& env;
    // Reads an environment variable (CI variables, KUBECONFIG, NO_COLOR, ...).
    GetenvFn getenv;
    // Short for env.clock().
    Clock& clock = env.clock();
    // The SIGTERM/SIGINT received so far, or 0: env.pending_signal() as a function to
    // hand to the waiting loops.
    std::function<int()> pending_signal = [&e = env] { return e.pending_signal(); };
};

}  // namespace envgate
