// Given an envgate.yml on a FakeEnv whose inputs a run must refuse or survive (a gate
// manifest naming another environment's namespace; a step whose command and output are
// not UTF-8), then `envgate run`, `envgate gate` and `envgate config check` decide as
// run_e2e.sh manifest_namespace and not_utf8 checked against a cluster: the exit code,
// the message, nothing touched before the lock, and reports CI can still read
// (test/run/README.md).
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <regex>

#include "runner/cmd_config.h"
#include "test/run/env_workspace.h"
#include "test/run/report_files.h"

using namespace envgate;
using envgate::test::EnvWorkspace;
using envgate::test::has;
using envgate::test::ReportFiles;

BOOST_AUTO_TEST_SUITE(run_inputs_suite)

// run_e2e.sh manifest_namespace
BOOST_AUTO_TEST_CASE(a_manifest_naming_another_namespace_is_refused_by_run_gate_and_check) {
    EnvWorkspace w;
    w.write_job("post.yaml", "post", "  namespace: other\n");
    const std::string want =
        w.dir.path() +
        "/post.yaml:5:14: metadata.namespace: \"other\" is not the namespace of environment "
        "\"e1\" (\"gitlab\")";
    auto run = w.envgate_run();
    BOOST_TEST(run.code == k_exit_usage, run.all());
    BOOST_TEST(has(run.all(), want), run.all());
    BOOST_TEST(w.env.steps.commands.empty());

    GateOptions g;
    g.environment = "e1";
    g.gate = "post-migrations";
    g.config = w.config;
    g.report_dir = w.reports + "/gate";
    auto gate = w.run([&](Context& ctx) { return run_gate(g, ctx); });
    BOOST_TEST(gate.code == k_exit_usage, gate.all());
    BOOST_TEST(has(gate.all(), want), gate.all());

    ConfigCheckOptions check;
    check.config_path = w.config;
    auto checked = w.run([&](Context& ctx) { return run_config_check(check, ctx); });
    BOOST_TEST(checked.code == k_exit_usage, checked.all());
    BOOST_TEST(has(checked.err, want), checked.all());

    BOOST_TEST(!w.lock_written());
    BOOST_TEST(w.jobs_created().empty());  // in any namespace

    // The same manifest naming the environment's own namespace runs.
    w.write_job("post.yaml", "post", "  namespace: gitlab\n");
    auto rechecked = w.run([&](Context& ctx) { return run_config_check(check, ctx); });
    BOOST_TEST(rechecked.code == k_exit_success, rechecked.all());
    auto rerun = w.envgate_run();
    BOOST_TEST(rerun.code == k_exit_success, rerun.all());
    BOOST_TEST(w.env.steps.commands.back() == "helmfile apply");
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
}

// run_e2e.sh not_utf8: bytes that are not UTF-8 (\377\376, as a UTF-16 log starts) in
// a failing step's command and output.
BOOST_AUTO_TEST_CASE(a_step_that_is_not_utf8_fails_into_reports_ci_can_read) {
    const std::string command = "echo \377\376 deploying; exit 3";
    EnvWorkspace w("{ store: file, path: locks, on_failure: hold, local_unlock: true }", command);
    w.env.steps.scripts[command] = {3, {"\377\376 deploying"}, std::nullopt, nullptr, true};
    // An earlier run's report is replaced, not left for this run's.
    std::filesystem::create_directories(w.reports);
    std::ofstream(w.reports + "/run.json")
        << R"({"schema": "envgate.run/v1", "result": "success", "earlier": true})";
    RunOptions o = w.run_options();
    o.output = "json";
    auto r = w.envgate_run(o);
    BOOST_TEST(r.code == k_exit_failed, r.all());
    BOOST_TEST(w.env.steps.commands.back() == command);  // the raw bytes reached the step
    BOOST_TEST(!has(r.all(), "internal error"), r.all());
    ReportFiles reports(w.reports);
    auto report = reports.run_json();  // valid JSON, or this throws
    BOOST_TEST(report.value("result", "") == "failed");
    BOOST_TEST(report.value("failed_step", "") == "deploy");
    BOOST_TEST(report["lock"].value("state", "") == "failed");
    BOOST_TEST(!report.contains("earlier"));
    std::string deploy_message;
    for (const auto& step : report["steps"]) {
        if (step.value("name", "") == "deploy") {
            deploy_message = step.value("message", "");
        }
    }
    BOOST_TEST(has(deploy_message, "exited 3: echo \uFFFD\uFFFD deploying"), deploy_message);
    BOOST_TEST((w.lock_record().state == locks::LockState::failed));
    check_reports(reports, "e1", "failed");
    for (const auto& dir : {w.locks, w.reports}) {
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
            BOOST_TEST(!has(entry.path().filename().string(), ".tmp"), entry.path());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
