// Given `envgate version` and `envgate completion SHELL` run in-process, then: the
// version names the project's version, a git commit (or "unknown"), the build type
// and the versions of the libraries loaded (those that say so at run time agree
// with the headers compiled against); JSON carries the same; the completion script
// of bash, zsh and fish registers itself and asks envgate, and any other shell is a
// usage error.
#include <Poco/Version.h>
#include <git2/version.h>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

#include "runner/base/exit_status.h"
#include "runner/cli.h"
#include "runner/cmd_version.h"
#include "test/fakes/captured_run.h"

using namespace envgate;

namespace {

test::CapturedRun cli(const std::vector<std::string>& args) {
    return test::capture_run([&args](Context& ctx) { return run_cli(args, ctx); });
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(version_suite)

BOOST_AUTO_TEST_CASE(version_json_names_commit_build_type_and_loaded_libraries) {
    test::CapturedRun r = cli({"version", "-o", "json"});
    BOOST_REQUIRE_EQUAL(r.code, k_exit_success);
    nlohmann::json j = nlohmann::json::parse(r.out);
    BOOST_TEST(j["version"] == "0.1.0");
    std::string commit = j["gitCommit"];
    BOOST_TEST(std::regex_match(commit, std::regex("[0-9a-f]{40}(-dirty)?|unknown")), commit);
    BOOST_TEST(!j["buildType"].get<std::string>().empty());
    BOOST_TEST(j["libraries"]["libgit2"] == LIBGIT2_VERSION);
    unsigned poco = POCO_VERSION;
    std::string want_poco = std::to_string(poco >> 24) + "." + std::to_string((poco >> 16) & 0xFF) +
                            "." + std::to_string((poco >> 8) & 0xFF);
    BOOST_TEST(j["libraries"]["poco"] == want_poco);
    for (const char* lib : {"openssl", "yaml-cpp", "nlohmann-json", "fmt", "cli11"}) {
        BOOST_TEST(!j["libraries"][lib].get<std::string>().empty(), lib);
    }
}

BOOST_AUTO_TEST_CASE(version_text_matches_json_and_the_version_flag) {
    test::CapturedRun text = cli({"version"});
    BOOST_REQUIRE_EQUAL(text.code, k_exit_success);
    BuildInfo info = build_info();
    BOOST_TEST(text.out == render_version_text(info));
    BOOST_TEST(text.out.rfind("envgate 0.1.0\n", 0) == 0);
    BOOST_TEST(has(text.out, "git commit: " + info.git_commit + "\n"));
    BOOST_TEST(has(text.out, "  libgit2        " LIBGIT2_VERSION "\n"));
    test::CapturedRun flag = cli({"--version"});
    BOOST_TEST(flag.out == "envgate 0.1.0\n");
    BOOST_TEST(cli({"version", "-o", "yaml"}).code == k_exit_usage);
}

// The scripts are thin: each registers itself with its shell and asks
// `envgate __complete` at every TAB (what that answers: cli_help_test.cpp; each
// shell running its script: completion_cli.sh, completion_zsh.zsh, completion_fish.fish).
BOOST_AUTO_TEST_CASE(each_shells_script_registers_and_asks_envgate) {
    const std::pair<const char*, const char*> cases[] = {
        {"bash", "complete -o default -F _envgate envgate\n"},
        {"zsh", "compdef _envgate envgate\n"},
        {"fish", "complete -c envgate -f -a '(__envgate_complete)'\n"},
    };
    for (const auto& [shell, registers] : cases) {
        test::CapturedRun r = cli({"completion", shell});
        BOOST_TEST_CONTEXT(shell) {
            BOOST_REQUIRE_EQUAL(r.code, k_exit_success);
            BOOST_TEST(has(r.out, registers), r.out);
            BOOST_TEST(has(r.out, "__complete"), r.out);
        }
    }
}

BOOST_AUTO_TEST_CASE(completion_for_another_shell_is_a_usage_error) {
    test::CapturedRun r = cli({"completion", "ksh"});
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(has(r.err, "envgate completion: shell: ksh not in {bash,zsh,fish}"), r.err);
    BOOST_TEST(has(r.err, "Run 'envgate completion --help'"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
