#include "runner/app.h"

#include <cstdlib>
#include <iostream>

#include "runner/cli.h"
#include "runner/real_clock.h"
#include "runner/signals.h"

namespace envgate {

int run_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    RealClock clock;
    Context ctx{std::cin,
                std::cout,
                std::cerr,
                clock,
                [](const std::string& name) -> std::optional<std::string> {
                    const char* v = std::getenv(name.c_str());
                    if (v == nullptr) {
                        return std::nullopt;
                    }
                    return std::string(v);
                },
                pending_signal};
    install_signal_handlers();
    return run_cli(args, ctx);
}

}  // namespace envgate
