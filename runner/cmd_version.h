// `envgate version [--output text|json]`: what this binary is: its version, the git
// commit and build type it was built from, the compiler, and the versions of the
// libraries it runs with (read from the loaded library where it says, else the
// headers it was compiled against).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runner/connect/context.h"

namespace envgate {

struct VersionOptions {
    std::string output = "text";
};

struct BuildInfo {
    std::string version;
    std::string git_commit;  // "unknown" outside a git checkout; "-dirty" suffix for changes
    std::string build_type;
    std::string compiler;
    std::vector<std::pair<std::string, std::string>> libraries;  // name, version
};

// This binary's build info.
BuildInfo build_info();

// `envgate X.Y.Z`, then one "key: value" line each; pure.
std::string render_version_text(const BuildInfo& info);
// {"version", "gitCommit", "buildType", "compiler", "libraries": {name: version}}; pure.
nlohmann::json render_version_json(const BuildInfo& info);

int run_version(const VersionOptions& options, Context& ctx);

}  // namespace envgate
