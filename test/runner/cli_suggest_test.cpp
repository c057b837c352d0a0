// Given a mistyped command, subcommand, option or environment name, then envgate
// exits 2 and says what was probably meant, from the commands and options of the
// command typed so far or the config's environments; a word close to nothing gets
// no guess.
#include <boost/test/unit_test.hpp>

#include "runner/base/exit_status.h"
#include "runner/cli.h"
#include "test/fakes/captured_run.h"

using namespace envgate;

namespace {

test::CapturedRun cli(const std::vector<std::string>& args) {
    return test::capture_run([&args](Context& ctx) { return run_cli(args, ctx); });
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_suggest_suite)

BOOST_AUTO_TEST_CASE(suggests_the_command_or_option_meant) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"stauts"}, "envgate: unknown command \"stauts\"; did you mean \"status\"?\n"},
        {{"config", "chek"}, "envgate config: unknown command \"chek\"; did you mean \"check\"?\n"},
        {{"run", "--evn", "staging"},
         "envgate run: unknown option \"--evn\"; did you mean \"--env\"?\n"},
        {{"lock", "acquire", "staging", "--hold-fr=1h"},
         "envgate lock: unknown option \"--hold-fr\"; did you mean \"--hold-for\"?\n"},
    };
    for (const auto& [args, want] : cases) {
        test::CapturedRun r = cli(args);
        BOOST_TEST(r.code == k_exit_usage);
        BOOST_TEST(r.err.rfind(want, 0) == 0u, r.err);
    }
}

BOOST_AUTO_TEST_CASE(no_guess_for_a_word_close_to_nothing) {
    test::CapturedRun r = cli({"zzzzzz"});
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.err.find("did you mean") == std::string::npos, r.err);
}

// Given an environment name the config does not have, then run, gate and lock name
// the closest one, or list them all when none is close.
BOOST_AUTO_TEST_CASE(an_unknown_environment_gets_the_closest_or_the_list) {
    const std::string config = std::string(ENVGATE_FIXTURES) + "/config/envgate.yml";
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"run", "--env", "gprdd", "--config", config},
         "no environment \"gprdd\"; did you mean \"gprd\"?"},
        {{"gate", "--env", "gsgt", "--gate", "pre-migrations", "--config", config},
         "no environment \"gsgt\"; did you mean \"gstg\"?"},
        {{"lock", "verify", "production", "--config", config},
         "no environment \"production\" in " + config + "; the environments are: gstg, gprd"},
    };
    for (const auto& [args, want] : cases) {
        test::CapturedRun r = cli(args);
        BOOST_TEST(r.code == k_exit_usage);
        BOOST_TEST(r.err.find(want) != std::string::npos, r.err);
    }
}

// Given the short flags kubectl users type, then `status -o json` prints JSON and
// `lint -o json` too, as their --output does.
BOOST_AUTO_TEST_CASE(takes_kubectls_short_output_flag) {
    const std::string config = std::string(ENVGATE_FIXTURES) + "/config/good-file-store.yml";
    test::CapturedRun status = cli({"status", "-o", "json", "--config", config});
    BOOST_TEST(status.code == k_exit_success, status.err);
    BOOST_TEST(status.out.find("\"schema\": \"envgate.dev/status/v1\"") != std::string::npos,
               status.out);
    const std::string manifest = std::string(ENVGATE_FIXTURES) + "/config/jobs/pre-migrations.yaml";
    test::CapturedRun lint = cli({"lint", "-o", "json", manifest});
    BOOST_TEST(lint.out.rfind("{", 0) == 0u, lint.out);
}

BOOST_AUTO_TEST_SUITE_END()
