// Given an envgate.yml (gates pre- and post-migrations, steps diff and deploy) and a
// FakeEnv (fake clock, fake cluster, file lock store in a temp folder, scripted step
// processes), then `envgate run` decides as the bash e2e scenarios of run_e2e.sh check
// against a cluster: the order of the steps, the failure policy, the exit code of each
// outcome, what is printed to unlock, and that nothing is touched before the preflight
// passed. test/run/README.md maps each case to the scenario it took over.
#include <boost/test/unit_test.hpp>

#include <csignal>
#include <regex>

#include "locks/lock_manager.h"
#include "test/run/env_workspace.h"
#include "test/run/report_files.h"

using namespace envgate;
using envgate::test::EnvWorkspace;
using envgate::test::has;
using envgate::test::ReportFiles;

namespace {

// The names of the steps of a run's report, in order.
std::vector<std::string> step_names(const std::string& json_report) {
    std::vector<std::string> names;
    const nlohmann::json report = nlohmann::json::parse(json_report);  // outlives the loop
    for (const auto& s : report["steps"]) {
        names.push_back(s.value("name", ""));
    }
    return names;
}

nlohmann::json run_json(const EnvWorkspace& w) {
    std::ifstream in(w.reports + "/run.json");
    return nlohmann::json::parse(in);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(upgrade_env_suite)

// run_e2e.sh clean
BOOST_AUTO_TEST_CASE(a_clean_run_takes_each_step_in_order_and_frees_the_lock) {
    EnvWorkspace w;
    w.env.steps.scripts["helmfile apply"].lines = {"deploying e1"};
    auto r = w.envgate_run();
    BOOST_TEST(r.code == k_exit_success, r.all());
    BOOST_TEST(w.env.steps.commands ==
               (std::vector<std::string>{"helmfile diff", "helmfile apply"}));
    auto jobs = w.jobs_created();
    BOOST_REQUIRE(jobs.size() == 2U);
    BOOST_TEST(jobs[0].rfind("pre-", 0) == 0U);
    BOOST_TEST(jobs[1].rfind("post-", 0) == 0U);
    auto report = run_json(w);
    BOOST_TEST(
        step_names(report.dump()) ==
        (std::vector<std::string>{"lock", "diff", "pre-migrations", "deploy", "post-migrations"}));
    BOOST_TEST(report.value("result", "") == "success");
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
    BOOST_TEST(has(r.out, "envgate run e1: success (exit 0)"));
    BOOST_TEST(has(r.out, "deploying e1"), r.out);  // the step's output, in the job log
    // The reports CI reads: one passing testcase per step (the lock's included).
    ReportFiles reports(w.reports);
    check_reports(reports, "e1", "success");
    BOOST_TEST(reports.testcases().size() == 5U, reports.junit());
    BOOST_TEST(reports.junit_count("<failure") + reports.junit_count("<skipped") == 0U);
    // Each step ran with its environment's variables.
    BOOST_TEST(w.env.steps.ran[1].env.at("ENVGATE_ENV") == "e1");
    BOOST_TEST(w.env.steps.ran[1].env.at("ENVGATE_STEP") == "deploy");
}

// run_e2e.sh step_fails, post_exhausted (the failure policy hold)
BOOST_AUTO_TEST_CASE(a_failure_holds_the_lock_skips_what_follows_and_prints_the_unlock_command) {
    struct Case {
        const char* name;
        const char* failing_job;  // or a failing deploy
        const char* failed_step;
        std::vector<std::string> want_jobs;  // prefixes
        const char* failure_type;            // of its junit failure
    };
    const Case cases[] = {
        {"deploy exits 3", "", "deploy", {"pre"}, "StepFailed"},
        {"post-migrations fails",
         "post",
         "post-migrations",
         {"pre", "post"},
         "MigrationsJobFailed"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            EnvWorkspace w;
            if (*c.failing_job != 0) {
                w.failing[c.failing_job] = "column missing";
            } else {
                w.env.steps.scripts["helmfile apply"].exit_code = 3;
            }
            auto r = w.envgate_run();
            BOOST_TEST(r.code == k_exit_failed, r.all());
            auto jobs = w.jobs_created();
            BOOST_REQUIRE(jobs.size() == c.want_jobs.size());
            for (size_t i = 0; i < jobs.size(); ++i) {
                BOOST_TEST(jobs[i].rfind(c.want_jobs[i] + "-", 0) == 0U);
            }
            auto record = w.lock_record();
            BOOST_TEST((record.state == locks::LockState::failed));
            BOOST_REQUIRE(record.failure.has_value());
            BOOST_TEST(record.failure->step == c.failed_step);
            auto report = run_json(w);
            BOOST_TEST(report.value("failed_step", "") == c.failed_step);
            BOOST_TEST(report["lock"].value("state", "") == "failed");
            BOOST_TEST(!report["lock"]["unlock_command"].is_null());
            // The unlock command on a line of its own, as on-call copies it.
            BOOST_TEST(std::regex_search(r.out, std::regex("(^|\n) +envgate unlock e1 ")), r.out);
            ReportFiles reports(w.reports);
            check_reports(reports, "e1", "failed", c.failure_type);
            BOOST_TEST(reports.testcase_outcome(c.failed_step) == "failure", reports.junit());
            BOOST_TEST(reports.dotenv_has_line(std::string("ENVGATE_FAILED_STEP=") + c.failed_step),
                       reports.dotenv());
            BOOST_TEST(reports.dotenv_has_line("ENVGATE_LOCK_STATE=failed"), reports.dotenv());
            if (std::string(c.failed_step) == "deploy") {
                BOOST_TEST(has(r.out, "step deploy exited 3"));
                BOOST_TEST(!has(r.out, "created Job gitlab/post-"), r.out);
                BOOST_TEST(report["steps"][4].value("skipped_why", "") ==
                           "not reached: deploy failed");
                BOOST_TEST(reports.testcase_outcome("post-migrations") == "skipped",
                           reports.junit());
            } else {
                BOOST_TEST(std::regex_search(r.out, std::regex("(^|\n)post-migrations: failed "
                                                               "\\(MigrationsJobFailed\\)")),
                           r.out);
            }
        }
    }
}

// The failure policy release (DESIGN.md "on failure holds it or releases it").
BOOST_AUTO_TEST_CASE(a_failure_under_policy_release_frees_the_lock) {
    EnvWorkspace w("{ store: file, path: locks, on_failure: release }");
    w.env.steps.scripts["helmfile apply"].exit_code = 3;
    auto r = w.envgate_run();
    BOOST_TEST(r.code == k_exit_failed, r.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
    BOOST_TEST(!has(r.out, "envgate unlock e1 "));
}

// run_e2e.sh lock_held
BOOST_AUTO_TEST_CASE(a_lock_held_after_a_failure_is_not_obtained_and_names_the_unlock) {
    EnvWorkspace w;
    w.env.steps.scripts["helmfile apply"].exit_code = 3;
    BOOST_TEST(w.envgate_run().code == k_exit_failed);
    w.env.steps.scripts.clear();
    w.env.steps.commands.clear();
    auto r = w.envgate_run();
    BOOST_TEST(r.code == k_exit_lock_not_obtained, r.all());
    BOOST_TEST(w.env.steps.commands.empty());
    BOOST_TEST(has(r.out, "held after a failure"), r.out);
    BOOST_TEST(has(r.out, "envgate unlock e1 "));
    auto report = run_json(w);
    BOOST_TEST(report.value("failed_step", "") == "lock");
    // The printed command frees it (run_next in the bash scenario).
    UnlockOptions u;
    u.env = "e1";
    u.config_path = w.config;
    u.reason = "fixed by hand";
    auto unlocked = w.run([&](Context& ctx) { return run_unlock(u, ctx); });
    BOOST_TEST(unlocked.code == k_exit_success, unlocked.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
}

// run_e2e.sh lock_wait (the part without a second process): held by another, no wait.
BOOST_AUTO_TEST_CASE(a_lock_another_holds_is_not_obtained_without_waiting) {
    EnvWorkspace w;
    LockOptions o = envgate::test::lock_options(w, "acquire", "other");
    BOOST_TEST(w.run([&](Context& ctx) { return run_lock(o, ctx); }).code == k_exit_success);
    auto r = w.envgate_run();
    BOOST_TEST(r.code == k_exit_lock_not_obtained, r.all());
    BOOST_TEST(w.env.steps.commands.empty());
    BOOST_TEST(w.jobs_created().empty());
    BOOST_TEST(w.lock_record().holder->id == "other");
}

// run_e2e.sh stale_holder
BOOST_AUTO_TEST_CASE(a_vanished_holder_leaves_the_lock_failed_until_an_unlock) {
    EnvWorkspace w;
    LockOptions o = envgate::test::lock_options(w, "acquire", "other");
    o.hold_for = "1s";
    BOOST_TEST(w.run([&](Context& ctx) { return run_lock(o, ctx); }).code == k_exit_success);
    // Its lease of 1 s runs out while the run waits (3 s, on the fake clock): nothing
    // renews it.
    RunOptions waiting = w.run_options();
    waiting.no_wait = false;
    waiting.wait_timeout = "3s";
    auto r = w.envgate_run(waiting);
    BOOST_TEST(r.code == k_exit_lock_not_obtained, r.all());
    BOOST_TEST(has(r.out, "HolderVanished"), r.out);
    BOOST_TEST(w.env.steps.commands.empty());
    BOOST_TEST((w.lock_record().state == locks::LockState::failed));
}

// run_e2e.sh preflight, manifest_namespace; "a broken config never touches the lock"
BOOST_AUTO_TEST_CASE(what_fails_before_the_lock_touches_nothing) {
    struct Case {
        const char* name;
        std::function<void(EnvWorkspace&)> given;
        int want_exit;
        const char* want_said;
    };
    const Case cases[] = {
        {"a Job the API rejects",
         [](EnvWorkspace& w) {
             w.env.dry_run = [](const nlohmann::json& job) {
                 return job["metadata"].value("name", "").rfind("post-", 0) == 0
                            ? Status(Code::invalid,
                                     "strict decoding error: unknown field "
                                     "\"spec.backofLimit\"")
                            : Status::ok();
             };
         },
         k_exit_usage, "preflight, before the lock: post-migrations"},
        {"an unreachable API",
         [](EnvWorkspace& w) {
             w.env.fail_next_connect(Status(Code::transient, "Connection refused"));
         },
         k_exit_infra, "Connection refused"},
        {"a manifest naming another namespace",
         [](EnvWorkspace& w) { w.write_job("post.yaml", "post", "  namespace: other\n"); },
         k_exit_usage, "is not the namespace of environment \"e1\""},
        {"a broken config",
         [](EnvWorkspace& w) { std::ofstream(w.config, std::ios::app) << "bogus: [\n"; },
         k_exit_usage, "envgate.yml"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            EnvWorkspace w;
            c.given(w);
            auto r = w.envgate_run();
            BOOST_TEST(r.code == c.want_exit, r.all());
            BOOST_TEST(has(r.all(), c.want_said), r.all());
            BOOST_TEST(!w.lock_written());
            BOOST_TEST(w.jobs_created().empty());
            BOOST_TEST(w.env.steps.commands.empty());
            for (const auto& call : w.env.calls) {
                BOOST_TEST(call.rfind("open_lock_store", 0) != 0U, call);
            }
        }
    }
}

// run_e2e.sh infra_before_change, infra_after_job ("hold only what is broken")
BOOST_AUTO_TEST_CASE(an_infrastructure_error_holds_the_lock_only_once_something_changed) {
    struct Case {
        const char* name;
        bool after_job;
        locks::LockState want;
    };
    const Case cases[] = {
        {"the first Job refused", false, locks::LockState::free},
        {"the Job's read refused", true, locks::LockState::failed},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            EnvWorkspace w;
            if (c.after_job) {
                w.env.on_job_created = [&w](const nlohmann::json&) {
                    for (int i = 0; i < 50; ++i) {
                        w.env.kube.fail_next(Code::forbidden, "get");
                        w.env.kube.fail_next(Code::forbidden, "list");
                    }
                };
            } else {  // after the preflight, while diff runs
                w.env.steps.scripts["helmfile diff"].during = [&w] {
                    w.env.kube.fail_next(Code::forbidden, "create");
                };
            }
            auto r = w.envgate_run();
            BOOST_TEST(r.code == k_exit_infra, r.all());
            BOOST_TEST((w.lock_record().state == c.want));
            BOOST_TEST(has(r.out, "e1 was released, not held") == !c.after_job, r.out);
            BOOST_TEST(w.env.steps.commands == std::vector<std::string>{"helmfile diff"});
            if (!c.after_job) {
                BOOST_TEST(has(r.out, "kubeconfig context \"ctx-e1\", server "), r.out);
            }
        }
    }
}

// run_e2e.sh cancel (a SIGTERM while a step runs)
BOOST_AUTO_TEST_CASE(a_sigterm_during_a_step_ends_the_run_143_and_holds_the_lock) {
    EnvWorkspace w;
    w.env.steps.scripts["helmfile apply"].during = [&w] { w.env.signal = SIGTERM; };
    auto r = w.envgate_run();
    BOOST_TEST(r.code == 128 + SIGTERM, r.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::failed));
    BOOST_TEST(run_json(w).value("result", "") == "cancelled");
    BOOST_TEST(w.jobs_created().size() == 1U);  // post-migrations never started
}

// run_e2e.sh rerun_after_unlock
BOOST_AUTO_TEST_CASE(a_rerun_after_an_unlock_makes_new_jobs_and_the_next_one_reattaches) {
    EnvWorkspace w;
    w.failing["post"] = "PG::UndefinedTable";
    BOOST_TEST(w.envgate_run().code == k_exit_failed);
    BOOST_TEST((w.lock_record().state == locks::LockState::failed));
    BOOST_REQUIRE(!w.jobs_created().empty());
    const std::string failed_job = w.jobs_created().back();
    UnlockOptions u;
    u.env = "e1";
    u.config_path = w.config;
    u.reason = "table restored";
    BOOST_TEST(w.run([&](Context& ctx) { return run_unlock(u, ctx); }).code == k_exit_success);
    w.failing.clear();
    w.env.kube.calls.clear();
    auto second = w.envgate_run();
    BOOST_TEST(second.code == k_exit_success, second.all());
    BOOST_TEST((w.lock_record().state == locks::LockState::free));
    BOOST_TEST(
        std::regex_search(second.out, std::regex("(^|\n)post-migrations: new Job after the unlock "
                                                 "by [^ ]+ at [0-9T:-]+Z; ")),
        second.out);
    BOOST_TEST(!has(second.out, "re-attached"), second.out);
    BOOST_REQUIRE(w.jobs_created().size() == 2U);
    const std::string new_job = w.jobs_created().back();
    BOOST_TEST(new_job != failed_job);
    // The unlock is part of the new Job's identity (its name and this label).
    auto stored_job = w.env.kube.object(kube::jobs("gitlab", new_job));
    BOOST_REQUIRE(stored_job.has_value());
    const std::string unlock_label =
        (*stored_job)["metadata"]["labels"].value("envgate.dev/unlock", "");
    BOOST_TEST(std::regex_match(unlock_label, std::regex("[0-9]+")), unlock_label);
    const std::size_t stored = w.jobs_stored();
    auto third = w.envgate_run();
    BOOST_TEST(third.code == k_exit_success, third.all());
    BOOST_TEST(w.jobs_stored() == stored, third.out);  // re-attached, none created
    BOOST_TEST(has(third.out, "re-attached to Job gitlab/" + new_job), third.out);
}

BOOST_AUTO_TEST_SUITE_END()
