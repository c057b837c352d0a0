// Given a mistyped command, subcommand or option, then envgate exits 2 and says what
// was probably meant, from the commands and options of the command typed so far; an
// argument close to nothing gets no guess.
#include <boost/test/unit_test.hpp>

#include "runner/cli.h"
#include "runner/exit_status.h"
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

BOOST_AUTO_TEST_SUITE_END()
