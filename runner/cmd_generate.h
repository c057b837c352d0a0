// `envgate generate`: the dynamic child pipeline for the environments a change
// touches (git diff base..head -> envgate.yml `paths` -> child.yml).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/connect/context.h"

namespace envgate {

struct GenerateOptions {
    std::string config_path = "envgate.yml";
    std::optional<std::string> base;  // default: $CI_COMMIT_BEFORE_SHA; zero/empty: none
    std::optional<std::string> head;  // default: $CI_COMMIT_SHA, else HEAD
    std::string out_path = "child.yml";
    std::string repo_dir = ".";
    std::optional<std::string> default_branch;  // default: $CI_DEFAULT_BRANCH, else main
    std::vector<std::string> environments;      // only these (default: all)
    std::string mode = "auto";                  // auto | deploy | merge-request
    std::string jobs = "split";                 // split | run
};

int run_generate(const GenerateOptions& options, Context& ctx);

}  // namespace envgate
