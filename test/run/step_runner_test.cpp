// Given steps as envgate.yml writes them, then they run under sh -c with the
// ENVGATE_* variables, their output arrives line by line (stderr too), their exit
// code is kept, and a cancelled job stops the whole process group.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>

#include "runner/connect/step_runner.h"

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

// The job's own variables (CI_PIPELINE_ID, ...) reach the step beside envgate's: what
// run_e2e.sh split_jobs saw as "deploying e1 for 8".
BOOST_AUTO_TEST_CASE(the_step_inherits_the_job_environment) {
    BOOST_REQUIRE(::setenv("ENVGATE_TEST_PIPELINE_ID", "8", 1) == 0);
    Run r = run("echo \"deploying $ENVGATE_ENV for $ENVGATE_TEST_PIPELINE_ID\"", [] { return 0; },
                {{"ENVGATE_ENV", "e1"}});
    ::unsetenv("ENVGATE_TEST_PIPELINE_ID");
    BOOST_REQUIRE(r.exit.is_ok());
    BOOST_TEST(r.lines.at(0) == "deploying e1 for 8");
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

// The guardian: while envgate shows that it holds its lock the step runs to its end;
// once it stops showing it, the step's whole group is killed within the watchdog, by the
// guardian and not by envgate's own loop (which would say cancelled_by).
BOOST_AUTO_TEST_CASE(the_guardian_kills_the_step_when_the_lock_is_no_longer_shown) {
    PosixProcessRunner runner;
    StepCommand held;
    held.command = "sleep 0.6; echo done";
    held.watchdog = std::chrono::milliseconds(200);
    held.holding = [] { return true; };
    std::vector<std::string> lines;
    auto ok = runner.run(
        held, [&](const std::string& l) { lines.push_back(l); }, [] { return 0; });
    BOOST_REQUIRE(ok.is_ok());
    BOOST_TEST(ok->exit_code == 0);
    BOOST_TEST(lines == std::vector<std::string>{"done"}, boost::test_tools::per_element());

    StepCommand lost = held;
    lost.command = "sh -c 'sleep 60' & echo $! > /dev/null; sleep 60";
    auto since = std::chrono::steady_clock::now();
    int polls = 0;
    lost.holding = [&] { return ++polls < 3; };  // proven twice, then not any more
    auto killed = runner.run(
        lost, [](const std::string&) {}, [] { return 0; });
    auto took = std::chrono::steady_clock::now() - since;
    BOOST_REQUIRE(killed.is_ok());
    BOOST_TEST(killed->exit_code == 128 + SIGKILL);
    BOOST_TEST(killed->cancelled_by == 0);
    BOOST_TEST((took < std::chrono::seconds(2)),
               std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
}

BOOST_AUTO_TEST_SUITE_END()
