// `envgate completion bash|zsh|fish`: a shell completion script. The scripts are thin:
// at each TAB they ask `envgate __complete WORDS...` what may come next, which reads
// the command line itself (every command, subcommand, option and `-o` value, so it
// cannot drift from `--help`), envgate.yml's environment names and the kubeconfig's
// context names. Load with `source <(envgate completion bash)`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/connect/context.h"

namespace CLI {
class App;
}

namespace envgate {

struct CompletionOptions {
    std::string shell;
};

// The shells `envgate completion` writes a script for.
const std::vector<std::string>& completion_shells();

// The script for `shell` (one of completion_shells()) completing `program`. Pure.
std::string completion_script(const std::string& shell, const std::string& program);

int run_completion(const CompletionOptions& options, Context& ctx);

// What completion reads besides the command line: the environment names of the
// envgate.yml at `config_path`, and the context names of the kubeconfig files
// `kubeconfigs` (each may be missing or broken: then none).
struct CompletionSources {
    std::function<std::vector<std::string>(const std::string& config_path)> environments;
    std::function<std::vector<std::string>(const std::vector<std::string>& kubeconfigs)> contexts;
};

// The sources read from the file system.
CompletionSources file_completion_sources();

// The candidates for the last of `words` (the arguments after the program name, the
// last one the word being typed, maybe empty), each starting with it, in order;
// the line ":files" last when file names fit there too. `root` is the envgate app
// with every command defined; `getenv` gives KUBECONFIG and HOME.
std::vector<std::string> complete_words(
    const CLI::App& root, const std::vector<std::string>& words, const CompletionSources& sources,
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

}  // namespace envgate
