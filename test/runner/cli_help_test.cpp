// Given `envgate help CMD`, a mistyped command line or a TAB, then envgate answers as
// a person expects: the command's own help (as CMD --help), one error that names
// the fix and points to that command's --help, and completion candidates drawn from
// the command line, envgate.yml and the kubeconfig.
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "runner/base/exit_status.h"
#include "runner/cli.h"
#include "test/fakes/captured_run.h"

using namespace envgate;

namespace {

test::CapturedRun cli(const std::vector<std::string>& args,
                      std::map<std::string, std::string> vars = {}) {
    return test::capture_run([&args](Context& ctx) { return run_cli(args, ctx); }, std::move(vars));
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli_help_suite)

// Given each command (and a subcommand), then `help CMD` prints what `CMD --help`
// prints, and exits 0 like it.
BOOST_AUTO_TEST_CASE(help_cmd_is_cmd_dash_dash_help) {
    const std::vector<std::vector<std::string>> commands = {
        {"config"}, {"config", "check"}, {"explain"}, {"run"},  {"gate"},       {"generate"},
        {"lock"},   {"status"},          {"unlock"},  {"lint"}, {"completion"}, {"version"}};
    for (const auto& command : commands) {
        std::vector<std::string> help = {"help"};
        help.insert(help.end(), command.begin(), command.end());
        std::vector<std::string> dash = command;
        dash.emplace_back("--help");
        test::CapturedRun a = cli(help);
        test::CapturedRun b = cli(dash);
        BOOST_TEST_CONTEXT(help.back()) {
            BOOST_TEST(a.code == k_exit_success);
            BOOST_TEST(a.out == b.out);
            BOOST_TEST(has(a.out, "Usage: envgate " + command.front()), a.out);
            BOOST_TEST(a.err.empty(), a.err);
        }
    }
    test::CapturedRun root = cli({"help"});
    BOOST_TEST(root.code == k_exit_success);
    BOOST_TEST(root.out == cli({"--help"}).out);
}

// Given `help` with a command that does not exist, then exit 2, the closest name
// and where the list of commands is.
BOOST_AUTO_TEST_CASE(help_of_an_unknown_command_suggests_one) {
    test::CapturedRun r = cli({"help", "stauts"});
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(r.err ==
               "envgate help: unknown command \"stauts\"; did you mean \"status\"?\n"
               "Run 'envgate --help' for the commands, or 'envgate help COMMAND' for one.\n");
    test::CapturedRun sub = cli({"help", "config", "chek"});
    BOOST_TEST(sub.code == k_exit_usage);
    BOOST_TEST(has(sub.err, "unknown command \"config chek\"; did you mean \"config check\"?"),
               sub.err);
    BOOST_TEST(has(sub.err, "Run 'envgate config --help'"), sub.err);
}

// Given a typo, then the suggestion is the only error (no "A subcommand is required"
// or "--env is required" after it), followed by the command's own --help.
BOOST_AUTO_TEST_CASE(a_typo_gets_one_error_and_the_commands_own_help) {
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"stauts"},
         "envgate: unknown command \"stauts\"; did you mean \"status\"?\n"
         "Run 'envgate --help' for the commands, or 'envgate help COMMAND' for one.\n"},
        {{"zzzzzz"},
         "envgate: unknown command \"zzzzzz\"\n"
         "Run 'envgate --help' for the commands, or 'envgate help COMMAND' for one.\n"},
        {{"config", "chek"},
         "envgate config: unknown command \"chek\"; did you mean \"check\"?\n"
         "Run 'envgate config --help' for its usage and options.\n"},
        {{"run", "--evn", "staging"},
         "envgate run: unknown option \"--evn\"; did you mean \"--env\"?\n"
         "Run 'envgate run --help' for its usage and options.\n"},
    };
    for (const auto& [args, want] : cases) {
        test::CapturedRun r = cli(args);
        BOOST_TEST(r.code == k_exit_usage);
        BOOST_TEST(r.err == want);
    }
}

// Given a usage error of another kind, then CLI11's message names the command and
// the pointer is to that command's --help.
BOOST_AUTO_TEST_CASE(usage_errors_point_to_the_commands_own_help) {
    test::CapturedRun r = cli({"lock", "acquire"});
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(r.err ==
               "envgate lock: env is required\n"
               "Run 'envgate lock --help' for its usage and options.\n");
    test::CapturedRun o = cli({"status", "-o", "yaml"});
    BOOST_TEST(o.code == k_exit_usage);
    BOOST_TEST(has(o.err, "Run 'envgate status --help'"), o.err);
}

// Given the words a completion script passes, then `__complete` prints the
// candidates: -o values from the option's own set, environment names of the
// --config file, contexts of $KUBECONFIG's files, ":files" after a file option.
BOOST_AUTO_TEST_CASE(complete_prints_candidates_from_cli_config_and_kubeconfig) {
    const std::string config = std::string(ENVGATE_FIXTURES) + "/config/envgate.yml";
    std::string kubeconfig = "cli_help_test_kubeconfig.yaml";
    std::ofstream(kubeconfig) << "contexts:\n- name: gke-prod\n- name: kind-dev\n"
                              << "- {name: gke-prod}\n";  // merged files may repeat one
    std::map<std::string, std::string> vars = {{"KUBECONFIG", "missing.yaml:" + kubeconfig}};
    const std::pair<std::vector<std::string>, std::string> cases[] = {
        {{"st"}, "status\n"},
        {{"status", "-o", ""}, "text\njson\nprometheus\n"},
        {{"status", "--output=p"}, "--output=prometheus\n"},
        {{"run", "--config", config, "--env", ""}, "gstg\ngprd\n"},
        {{"lock", "release", "--config", config, "q"}, "qa\n"},
        {{"run", "--context", ""}, "gke-prod\nkind-dev\n"},
        {{"run", "--config", ""}, ":files\n"},
        {{"run", "--config", "missing.yml", "--env", ""}, ""},  // no file: no names, no error
        {{"help", "config", ""}, "check\n--help\n-h\n"},
    };
    for (const auto& [args, want] : cases) {
        std::vector<std::string> words = {"__complete"};
        words.insert(words.end(), args.begin(), args.end());
        test::CapturedRun r = cli(words, vars);
        BOOST_TEST_CONTEXT(args.front() << " ... " << args.back()) {
            BOOST_TEST(r.code == k_exit_success);
            BOOST_TEST(r.out == want);
            BOOST_TEST(r.err.empty(), r.err);
        }
    }
    std::remove(kubeconfig.c_str());
}

BOOST_AUTO_TEST_SUITE_END()
