// `envgate completion bash`: a bash completion script made from the command line
// itself (every command, subcommand and option), so it cannot drift from `--help`.
// Load it with `source <(envgate completion bash)`; the Debian package installs it.
#pragma once

#include <string>

#include "runner/context.h"

namespace CLI {
class App;
}

namespace envgate {

struct CompletionOptions {
    std::string shell;
};

// The script for `root` (the envgate app with every command defined). Pure.
std::string bash_completion(const CLI::App& root);

int run_completion(const CompletionOptions& options, const CLI::App& root, Context& ctx);

}  // namespace envgate
