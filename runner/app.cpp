#include "runner/app.h"

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "runner/base/secrets.h"
#include "runner/base/signals.h"
#include "runner/cli.h"
#include "runner/connect/real_env.h"

namespace envgate {

int run_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    RealEnv env;  // the one place real objects are made
    auto getenv = [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr) {
            return std::nullopt;
        }
        return std::string(v);
    };
    add_secrets_from_environment(getenv);
    // Everything printed passes the masking point, whichever command prints it.
    MaskingStreambuf out_buffer(std::cout.rdbuf());
    MaskingStreambuf err_buffer(std::cerr.rdbuf());
    std::ostream out(&out_buffer);
    std::ostream err(&err_buffer);
    Context ctx{std::cin, out, err, env, getenv};
    install_signal_handlers();
    int code = run_cli(args, ctx);
    out.flush();
    err.flush();
    return code;
}

}  // namespace envgate
