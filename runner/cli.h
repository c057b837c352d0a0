// The command line: a table of commands (name, one-line help, how its options are
// defined), parsed with CLI11 into each command's plain Options struct.
#pragma once

#include <string>
#include <vector>

#include "runner/connect/context.h"

namespace envgate {

// Parses `args` (without the program name) and runs the chosen command. Returns
// the process exit status (runner/base/exit_status.h).
int run_cli(const std::vector<std::string>& args, Context& ctx);

}  // namespace envgate
