#include "runner/cmd_version.h"

#include <Poco/Environment.h>
#include <fmt/core.h>
#include <git2.h>
#include <openssl/crypto.h>
#include <CLI/Version.hpp>

#include <ostream>

#include "runner/base/exit_status.h"
#include "runner/build_info_values.h"

namespace envgate {
namespace {

std::string poco_version() {
    unsigned v = Poco::Environment::libraryVersion();  // 0xAABBCCDD: major, minor, patch
    return fmt::format("{}.{}.{}", (v >> 24) & 0xFF, (v >> 16) & 0xFF, (v >> 8) & 0xFF);
}

std::string libgit2_version() {
    int major = 0;
    int minor = 0;
    int rev = 0;
    git_libgit2_version(&major, &minor, &rev);
    return fmt::format("{}.{}.{}", major, minor, rev);
}

std::string compiler() {
#if defined(__clang__)
    return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
    return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
    return "unknown";
#endif
}

}  // namespace

BuildInfo build_info() {
    BuildInfo info{ENVGATE_VERSION, ENVGATE_GIT_COMMIT, ENVGATE_BUILD_TYPE, compiler(), {}};
    info.libraries = {
        {"poco", poco_version()},
        {"libgit2", libgit2_version()},
        {"openssl", OpenSSL_version(OPENSSL_VERSION)},
        {"yaml-cpp", ENVGATE_YAML_CPP_VERSION},
        {"nlohmann-json", fmt::format("{}.{}.{}", NLOHMANN_JSON_VERSION_MAJOR,
                                      NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
        {"fmt",
         fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100)},
        {"cli11", CLI11_VERSION},
    };
    return info;
}

std::string render_version_text(const BuildInfo& info) {
    std::string out = fmt::format("envgate {}\n", info.version);
    out += fmt::format("git commit: {}\nbuild type: {}\ncompiler:   {}\n", info.git_commit,
                       info.build_type, info.compiler);
    out += "libraries:\n";
    for (const auto& [name, version] : info.libraries) {
        out += fmt::format("  {:<14} {}\n", name, version);
    }
    return out;
}

nlohmann::json render_version_json(const BuildInfo& info) {
    nlohmann::json libraries = nlohmann::json::object();
    for (const auto& [name, version] : info.libraries) {
        libraries[name] = version;
    }
    return {{"version", info.version},
            {"gitCommit", info.git_commit},
            {"buildType", info.build_type},
            {"compiler", info.compiler},
            {"libraries", libraries}};
}

int run_version(const VersionOptions& options, Context& ctx) {
    BuildInfo info = build_info();
    if (options.output == "json") {
        ctx.out << render_version_json(info).dump(2) << "\n";
    } else {
        ctx.out << render_version_text(info);
    }
    return k_exit_success;
}

}  // namespace envgate
