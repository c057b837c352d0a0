// Given an envgate.yml on a FakeEnv and the jobs of a split child pipeline (`envgate run
// --only`, `envgate gate`, `envgate lock release`) run in GitLab's order with each
// pipeline's CI variables, then the lock is taken by the diff job, kept between jobs,
// proven by every job before it acts, failed by the job that fails, and refused to any
// other pipeline and to a --holder that names one: the decisions run_e2e.sh split_jobs
// checked against a cluster (test/run/README.md).
#include <boost/test/unit_test.hpp>

#include <regex>

#include "test/run/env_workspace.h"
#include "test/run/report_files.h"

using namespace envgate;
using envgate::test::EnvWorkspace;
using envgate::test::has;
using envgate::test::ReportFiles;

namespace {

// `envgate run --only WHAT` in pipeline `pipeline` of grp/app, reports in `report_dir`.
test::CommandRun run_only(EnvWorkspace& w, const char* what, int pipeline,
                          const std::string& report_dir) {
    w.in_pipeline(pipeline);
    RunOptions o = w.run_options();
    o.only = what;
    o.report_dir = report_dir;
    return w.envgate_run(o);
}

GateOptions gate_options(const EnvWorkspace& w, const char* gate) {
    GateOptions g;
    g.environment = "e1";
    g.gate = gate;
    g.config = w.config;
    g.report_dir = w.reports + "/gate";
    return g;
}

// The Job the last `create jobs` call made, as the cluster stores it.
nlohmann::json last_job(EnvWorkspace& w) {
    auto jobs = w.jobs_created();
    BOOST_REQUIRE(!jobs.empty());
    auto job = w.env.kube.object(kube::jobs("gitlab", jobs.back()));
    BOOST_REQUIRE(job.has_value());
    return *job;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(split_jobs_suite)

// run_e2e.sh split_jobs: a later job first, the diff job, another pipeline's gate and
// --holder, a step named as a gate, the holding pipeline's gate and deploy jobs.
BOOST_AUTO_TEST_CASE(split_jobs_take_the_lock_once_keep_it_and_refuse_other_pipelines) {
    EnvWorkspace w;
    w.env.steps.scripts["helmfile apply"].lines = {"deploying e1"};
    auto early = run_only(w, "deploy", 8, w.reports + "/r0");
    BOOST_TEST(early.code == k_exit_lock_not_obtained, early.all());
    BOOST_TEST(has(early.out, "the lock is free: this pipeline (grp/app#8) does not hold it"),
               early.out);
    BOOST_TEST(w.env.steps.commands.empty());
    BOOST_TEST((w.lock_record().state == locks::LockState::free));

    auto diff = run_only(w, "diff", 8, w.reports + "/r1");
    BOOST_TEST(diff.code == k_exit_success, diff.all());
    BOOST_TEST(has(diff.out, "e1 stays locked by grp/app#8 for this pipeline's next job"));
    BOOST_TEST((w.lock_record().state == locks::LockState::held));

    GateOptions g = gate_options(w, "pre-migrations");
    w.in_pipeline(7);
    auto gate7 = w.run([&](Context& ctx) { return run_gate(g, ctx); });
    BOOST_TEST(gate7.code == k_exit_lock_not_obtained, gate7.all());
    BOOST_TEST(has(gate7.out, "held by grp/app#8, not by this pipeline (grp/app#7)"), gate7.out);
    BOOST_TEST(w.jobs_created().empty());

    RunOptions holder7 = w.run_options();
    holder7.only = "deploy";
    holder7.holder = "grp/app#8";
    auto refused = w.envgate_run(holder7);
    BOOST_TEST(refused.code == k_exit_usage);
    BOOST_TEST(has(refused.err, "is refused in GitLab CI"), refused.err);
    BOOST_TEST(w.env.steps.commands == std::vector<std::string>{"helmfile diff"});

    w.in_pipeline(8);
    GateOptions step_as_gate = gate_options(w, "deploy");
    auto named_step = w.run([&](Context& ctx) { return run_gate(step_as_gate, ctx); });
    BOOST_TEST(named_step.code == k_exit_usage);
    BOOST_TEST(has(named_step.err, "--gate \"deploy\": not a gate"), named_step.err);

    auto gate8 = w.run([&](Context& ctx) { return run_gate(g, ctx); });
    BOOST_TEST(gate8.code == k_exit_success, gate8.all());
    BOOST_REQUIRE(w.jobs_created().size() == 1U);
    // The Job carries the lock's fencing token (a revision).
    const std::string fence = last_job(w)["metadata"]["labels"].value("envgate.dev/fence", "");
    BOOST_TEST(std::regex_match(fence, std::regex("[0-9]+")), fence);

    auto deploy = run_only(w, "deploy", 8, w.reports + "/r3");
    BOOST_TEST(deploy.code == k_exit_success, deploy.all());
    BOOST_TEST(w.env.steps.commands.back() == "helmfile apply");
    BOOST_TEST(has(deploy.out, "deploying e1"), deploy.out);
    BOOST_TEST(w.env.steps.ran.back().env.at("ENVGATE_ENV") == "e1");
}

// run_e2e.sh split_jobs, from the failing post-migrations job on: the lock failed with
// the failure, a retry refused until the unlock, then the retry and the release job.
BOOST_AUTO_TEST_CASE(a_failed_split_job_holds_the_lock_until_an_unlock_then_its_retry_runs) {
    EnvWorkspace w;
    BOOST_TEST(run_only(w, "diff", 8, w.reports + "/r1").code == k_exit_success);
    w.failing["post"] = "column missing";
    auto post = run_only(w, "post-migrations", 8, w.reports + "/r4");
    BOOST_TEST(post.code == k_exit_failed, post.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::failed));
    BOOST_TEST(has(post.out, "envgate unlock e1"), post.out);
    check_reports(ReportFiles(w.reports + "/r4"), "e1", "failed", "MigrationsJobFailed");
    StatusOptions s;
    s.config_path = w.config;
    s.env = "e1";
    s.output = "json";
    auto status = w.run([&](Context& ctx) { return run_status(s, ctx); });
    auto failure = nlohmann::json::parse(status.out)["locks"][0]["lock"]["failure"];
    BOOST_TEST(failure.value("step", "") == "post-migrations", status.out);
    BOOST_TEST(failure.value("reason", "") == "MigrationsJobFailed", status.out);

    auto retry_held = run_only(w, "post-migrations", 8, w.reports + "/r5");
    BOOST_TEST(retry_held.code == k_exit_lock_not_obtained);
    BOOST_TEST(has(retry_held.out, "held after a failure"), retry_held.out);
    BOOST_TEST(has(retry_held.out, "envgate unlock e1"));

    w.out_of_pipeline();  // an operator's shell (lock.local_unlock)
    UnlockOptions u;
    u.env = "e1";
    u.config_path = w.config;
    u.reason = "column added by hand";
    auto unlocked = w.run([&](Context& ctx) { return run_unlock(u, ctx); });
    BOOST_TEST(unlocked.code == k_exit_success, unlocked.all());
    w.failing.clear();
    auto retry = run_only(w, "post-migrations", 8, w.reports + "/r6");
    BOOST_TEST(retry.code == k_exit_success, retry.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::held));

    LockOptions release;
    release.action = "release";
    release.env = "e1";
    release.config_path = w.config;
    auto released = w.run([&](Context& ctx) { return run_lock(release, ctx); });
    BOOST_TEST(released.code == k_exit_success, released.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
}

BOOST_AUTO_TEST_SUITE_END()
