// What a command receives from the outside world. Only run_main (runner/app.cpp)
// builds the real implementations; tests build a Context from fakes.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "gates/time.h"

namespace envgate {

struct Context {
    std::istream& in;
    std::ostream& out;
    std::ostream& err;
    Clock& clock;
    // Reads an environment variable (CI variables, KUBECONFIG, NO_COLOR, ...).
    std::function<std::optional<std::string>(const std::string&)> getenv;
    // The SIGTERM/SIGINT received so far, or 0 (runner/base/signals.h in the real process).
    std::function<int()> pending_signal = [] { return 0; };
};

}  // namespace envgate
