// Given steps as envgate.yml writes them, then they run under sh -c with the
// ENVGATE_* variables, their output arrives line by line (stderr too), their exit
// code is kept, and a cancelled job stops the whole process group.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>

#include "runner/step_runner.h"

using namespace envgate;

namespace {

struct Run {
    std::vector<std::string> lines;
    Result<StepExit> exit = Status(Code::failed, "not run");
};

Run run(
    const std::string& command, std::function<int()> signal = [] { return 0; },
    std::map<std::string, std::string> env = {}) {
    PosixProcessRunner runner;
    Run r;
    r.exit = runner.run(
        {command, std::move(env), std::chrono::seconds(2)},
        [&](const std::string& line) { r.lines.push_back(line); }, signal);
    return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(step_runner_suite)

BOOST_AUTO_TEST_CASE(streams_stdout_and_stderr_lines_and_keeps_the_exit_code) {
    Run r = run("echo one; echo two >&2; printf 'no newline'; exit 7");
    BOOST_REQUIRE(r.exit.is_ok());
    BOOST_TEST(r.exit->exit_code == 7);
    BOOST_TEST(r.exit->cancelled_by == 0);
    BOOST_TEST(r.lines == (std::vector<std::string>{"one", "two", "no newline"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(passes_envgate_variables) {
    Run r = run("echo \"$ENVGATE_ENV in $ENVGATE_NAMESPACE\"", [] { return 0; },
                {{"ENVGATE_ENV", "gprd"}, {"ENVGATE_NAMESPACE", "gitlab"}});
    BOOST_REQUIRE(r.exit.is_ok());
    BOOST_TEST(r.lines.at(0) == "gprd in gitlab");
}

BOOST_AUTO_TEST_CASE(a_background_child_holding_the_pipe_does_not_block_the_step) {
    auto started = std::chrono::steady_clock::now();
    Run r = run("sleep 30 & echo started");
    BOOST_REQUIRE(r.exit.is_ok());
    BOOST_TEST(r.exit->exit_code == 0);
    BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(20)));
}

BOOST_AUTO_TEST_CASE(cancel_terminates_the_whole_process_group) {
    bool saw_line = false;
    Run r;
    PosixProcessRunner runner;
    auto started = std::chrono::steady_clock::now();
    r.exit = runner.run(
        {"sh -c 'sleep 60' & echo waiting; wait", {}, std::chrono::seconds(2)},
        [&](const std::string&) { saw_line = true; }, [&] { return saw_line ? SIGTERM : 0; });
    BOOST_REQUIRE(r.exit.is_ok());
    BOOST_TEST(r.exit->cancelled_by == SIGTERM);
    BOOST_TEST(r.exit->exit_code != 0);
    BOOST_TEST((std::chrono::steady_clock::now() - started < std::chrono::seconds(20)));
}

BOOST_AUTO_TEST_SUITE_END()
