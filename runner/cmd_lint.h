// `envgate lint [PATH|-]...`: finds database migrations hidden in application
// start-up in Kubernetes manifests (files, folders, `helm template | envgate lint -`).
// Exit 0 clean, 1 findings at or above --fail-on, 2 usage or unreadable input.
#pragma once

#include <string>
#include <vector>

#include "runner/connect/context.h"

namespace envgate {

struct LintOptions {
    std::vector<std::string> paths;  // files, folders (recursively), "-" for stdin
    std::string output = "text";     // text | json
    std::string codequality;         // write GitLab's Code Quality report here
    std::string fail_on = "error";   // info | warning | error | critical | never
    std::string config;              // envgate.yml; empty: ./envgate.yml when it exists
    std::string stdin_name = "-";    // the path findings on stdin are reported at
    bool list_checks = false;        // print the checks' reference (docs/lint.md) instead
};

int run_lint(const LintOptions& options, Context& ctx);

}  // namespace envgate
