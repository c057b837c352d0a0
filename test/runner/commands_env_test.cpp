// Given the commands run in-process on a FakeEnv (fake clock, fake cluster, scripted
// steps, an in-memory GitLab), then `run`, `lock`, `unlock`, `gate` and `status` reach
// the world only through it: Leases on the fake cluster for a kubernetes lock store, a
// gate's Job on it, GitLab asked through the Env's client, and an unreachable cluster or
// GitLab is an exit code, not a crash. test/run/README.md maps each case to the bash
// scenario it took over.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "test/run/env_workspace.h"
#include "test/run/report_files.h"

using namespace envgate;
using envgate::test::EnvWorkspace;
using envgate::test::has;
using envgate::test::lock_options;
using envgate::test::ReportFiles;

namespace {

const char* const k_lease_lock =
    "{ store: kubernetes, namespace: envgate-locks, on_failure: hold, local_unlock: true }";

// GitLab as the Env's client answers it: the job runs as `user`, who is a member of the
// groups in `groups`; `down` makes every call fail.
class MemoryGitLab : public GroupMembers {
  public:
    MemoryGitLab(JobUser user, std::set<std::string> groups, bool down)
        : m_user(std::move(user)), m_groups(std::move(groups)), m_down(down) {}
    Result<JobUser> job_user(const std::string&) override {
        if (m_down) {
            return Status(Code::transient, "GET /api/v4/job: Connection refused");
        }
        return m_user;
    }
    Result<bool> is_member(const std::string& group, std::int64_t) override {
        return m_groups.count(group) > 0;
    }
    Result<std::string> signing_keys() override { return Status(Code::failed, "no keys"); }

  private:
    JobUser m_user;
    std::set<std::string> m_groups;
    bool m_down;
};

// The reasons of the events recorded in namespace gitlab, in order.
std::vector<std::string> gate_events(EnvWorkspace& w) {
    std::vector<std::string> reasons;
    for (const char* group_version : {"events.k8s.io/v1", "v1"}) {
        auto listed = w.env.kube.list(kube::ResourceRef{group_version, "events", "gitlab", ""}, {});
        BOOST_REQUIRE(listed.is_ok());
        for (const auto& event : listed->items) {
            reasons.push_back(event.value("reason", ""));
        }
    }
    return reasons;
}

// Gate `gate` of e1 in namespace gitlab from the workspace's `manifest`, without an
// envgate.yml (outside CI the gate then runs alone), its reports in the workspace's.
GateOptions lone_gate(const EnvWorkspace& w, const char* gate, const char* manifest) {
    GateOptions g;
    g.environment = "e1";
    g.gate = gate;
    g.config = w.dir.path() + "/absent.yml";
    g.manifest = w.dir.path() + "/" + manifest;
    g.namespace_ = "gitlab";
    g.report_dir = w.reports;
    return g;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(commands_env_suite)

// run_e2e.sh step_fails (-o json: stdout is the report alone; the log on stderr)
BOOST_AUTO_TEST_CASE(run_with_json_output_prints_only_the_report_on_stdout) {
    EnvWorkspace w;
    w.env.steps.scripts["helmfile apply"] = {3, {"deploying"}, std::nullopt, nullptr, true};
    RunOptions o = w.run_options();
    o.output = "json";
    auto r = w.envgate_run(o);
    BOOST_TEST(r.code == k_exit_failed);
    auto report = nlohmann::json::parse(r.out);  // throws unless stdout is the JSON alone
    BOOST_TEST(report.value("result", "") == "failed");
    BOOST_TEST(report.value("failed_step", "") == "deploy");
    BOOST_TEST(report["lock"].value("state", "") == "failed");
    BOOST_TEST(!report["lock"]["unlock_command"].is_null());
    BOOST_TEST(has(r.err, "deploying"));
    BOOST_TEST(has(r.err, "envgate run e1: failed (exit 1)"));
}

// lease_store_itest / split_jobs' lock commands, on the Lease store
BOOST_AUTO_TEST_CASE(lock_commands_on_a_lease_store_reach_the_cluster_through_the_env) {
    EnvWorkspace w(k_lease_lock);
    auto acquired = w.run([&](Context& c) { return run_lock(lock_options(w, "acquire", "a"), c); });
    BOOST_TEST(acquired.code == k_exit_success, acquired.all());
    BOOST_TEST(w.env.kube
                   .object(kube::ResourceRef{"coordination.k8s.io/v1", "leases", "envgate-locks",
                                             "envgate-e1"})
                   .has_value());
    BOOST_TEST(w.env.calls.front() == "open_lock_store kubernetes envgate-locks");
    BOOST_TEST(w.env.calls.at(1) == "connect_kube ctx-e1");

    struct Case {
        const char* action;
        const char* holder;
        int want;
    };
    const Case cases[] = {
        {"verify", "a", k_exit_success},
        {"verify", "b", k_exit_lock_not_obtained},
        {"acquire", "b", k_exit_lock_not_obtained},
        {"release", "b", k_exit_failed},
        {"release", "a", k_exit_success},
        {"acquire", "b", k_exit_success},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.action << " by " << c.holder) {
            auto r = w.run(
                [&](Context& ctx) { return run_lock(lock_options(w, c.action, c.holder), ctx); });
            BOOST_TEST(r.code == c.want, r.all());
        }
    }
}

// An unreachable cluster of the Lease store: exit 4 (infrastructure), for lock and status.
BOOST_AUTO_TEST_CASE(an_unreachable_lease_store_is_an_infrastructure_error) {
    EnvWorkspace w(k_lease_lock);
    w.env.fail_next_connect(Status(Code::transient, "dial tcp: Connection refused"));
    auto r = w.run([&](Context& c) { return run_lock(lock_options(w, "acquire", "a"), c); });
    BOOST_TEST(r.code == k_exit_infra, r.all());
    BOOST_TEST(has(r.err, "kubernetes lock store: dial tcp: Connection refused"), r.err);
}

// status_prometheus_test.sh / lock_held's `envgate status --output json`
BOOST_AUTO_TEST_CASE(status_shows_the_lease_store_holder_as_text_and_json) {
    EnvWorkspace w(k_lease_lock);
    BOOST_TEST(w.run([&](Context& c) {
                    return run_lock(lock_options(w, "acquire", "a"), c);
                }).code == k_exit_success);
    StatusOptions o;
    o.config_path = w.config;
    o.env = "e1";
    o.output = "json";
    auto json = w.run([&](Context& c) { return run_status(o, c); });
    BOOST_TEST(json.code == k_exit_success, json.all());
    auto parsed = nlohmann::json::parse(json.out);
    BOOST_TEST(parsed["locks"][0]["lock"].value("state", "") == "held", json.out);
    o.output = "text";
    auto text = w.run([&](Context& c) { return run_status(o, c); });
    BOOST_TEST(text.code == k_exit_success);
    BOOST_TEST(has(text.out, "e1"));
    BOOST_TEST(has(text.out, "a"), text.out);
}

// The store that cannot be reached: status says so and exits 4.
BOOST_AUTO_TEST_CASE(status_of_an_unreachable_lease_store_exits_4_naming_the_error) {
    EnvWorkspace w(k_lease_lock);
    w.env.fail_next_connect(Status(Code::transient, "dial tcp: Connection refused"));
    StatusOptions o;
    o.config_path = w.config;
    o.env = "e1";
    auto r = w.run([&](Context& c) { return run_status(o, c); });
    BOOST_TEST(r.code == k_exit_infra, r.all());
    BOOST_TEST(has(r.all(), "Connection refused"), r.all());
}

// gate_e2e.sh success (without envgate.yml, outside CI: the gate runs alone)
BOOST_AUTO_TEST_CASE(gate_without_a_config_runs_its_job_on_the_cluster_alone) {
    EnvWorkspace w;
    GateOptions g = lone_gate(w, "pre-migrations", "pre.yaml");
    g.output = "json";
    auto r = w.run([&](Context& c) { return run_gate(g, c); });
    BOOST_TEST(r.code == k_exit_success, r.all());
    BOOST_TEST(has(r.err, "succeeded (PreMigrationsComplete)"), r.err);
    auto report = nlohmann::json::parse(r.out);  // -o json: stdout is the report alone
    BOOST_TEST(report.value("result", "") == "success");
    BOOST_TEST(report["failed_step"].is_null());
    BOOST_TEST(report["steps"][0].value("name", "") == "pre-migrations");
    BOOST_TEST(report["steps"][0].value("state", "") == "passed");
    BOOST_REQUIRE(w.jobs_created().size() == 1U);
    BOOST_TEST(has(r.err, "created Job gitlab/" + w.jobs_created()[0]), r.err);
    BOOST_TEST(gate_events(w).empty());  // a clean pass records none
    BOOST_TEST(!w.lock_written());
    ReportFiles reports(w.reports);
    check_reports(reports, "e1", "success");
    BOOST_TEST(reports.testcases().size() == 1U, reports.junit());
    BOOST_TEST(reports.dotenv_has_line("ENVGATE_JOB_PRE_MIGRATIONS=" + w.jobs_created()[0]),
               reports.dotenv());
    g.output = "text";
    // In GitLab CI a gate runs under its lock: without envgate.yml it is refused.
    w.in_pipeline(9);
    auto in_ci = w.run([&](Context& c) { return run_gate(g, c); });
    BOOST_TEST(in_ci.code == k_exit_usage);
    BOOST_TEST(has(in_ci.err, "in GitLab CI a gate runs under its environment's lock"));
    BOOST_TEST(w.jobs_created().size() == 1U);
}

// gate_e2e.sh (a failed gate): exit 1 and the failure in the reports.
BOOST_AUTO_TEST_CASE(gate_whose_job_fails_exits_1) {
    EnvWorkspace w;
    w.failing["pre"] = "relation users missing";
    GateOptions g = lone_gate(w, "pre-migrations", "pre.yaml");
    auto r = w.run([&](Context& c) { return run_gate(g, c); });
    BOOST_TEST(r.code == k_exit_failed, r.all());
    BOOST_TEST(has(r.out, "pre-migrations: failed"), r.out);
}

// gate_e2e.sh rerun_failed: the same gate again after its Job failed re-attaches to
// it, says the same verdict and records no second event (the memory on the Job).
BOOST_AUTO_TEST_CASE(a_failed_gate_run_again_reattaches_and_records_no_second_event) {
    EnvWorkspace w;
    w.failing["post"] = "exit 5";
    GateOptions g = lone_gate(w, "post-migrations", "post.yaml");
    g.report_dir = w.reports + "/first";
    auto first = w.run([&](Context& c) { return run_gate(g, c); });
    BOOST_TEST(first.code == k_exit_failed, first.all());
    BOOST_REQUIRE(w.jobs_created().size() == 1U);
    const std::string job = w.jobs_created()[0];
    const auto before = gate_events(w);
    BOOST_TEST(std::count(before.begin(), before.end(), "MigrationsFailed") == 1);

    g.report_dir = w.reports + "/second";
    auto second = w.run([&](Context& c) { return run_gate(g, c); });
    BOOST_TEST(second.code == k_exit_failed, second.all());
    BOOST_TEST(has(second.out, "re-attached to Job gitlab/" + job), second.out);
    BOOST_TEST(has(second.out, "failed (MigrationsJobFailed)"), second.out);
    BOOST_TEST(w.jobs_stored() == 1U);
    BOOST_TEST(gate_events(w) == before, boost::test_tools::per_element());
}

// unlock_gitlab_e2e.sh: in CI, GitLab (through the Env's client) says who runs the job.
BOOST_AUTO_TEST_CASE(unlock_in_ci_asks_gitlab_through_the_env_and_fails_closed) {
    struct Case {
        const char* name;
        const char* user;
        std::set<std::string> groups;
        bool down;
        int want;
        const char* want_said;
    };
    const Case cases[] = {
        {"a listed unlocker", "alice", {}, false, k_exit_success, "recorded as alice"},
        {"a member of a listed group",
         "carol",
         {"sre-oncall"},
         false,
         k_exit_success,
         "recorded as carol"},
        {"someone else", "mallory", {}, false, k_exit_failed, "mallory"},
        // exit_code.cpp's table: a transient error of the permission stage is exit 4.
        {"GitLab unreachable", "alice", {}, true, k_exit_infra, "Connection refused"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            EnvWorkspace w;
            std::ofstream(w.config, std::ios::app)
                << "gitlab:\n  url: https://gitlab.example.com\n";
            {
                std::string text;
                std::ifstream in(w.config);
                text.assign(std::istreambuf_iterator<char>(in), {});
                text.replace(text.find("environments:"), 0,
                             "  unlockers: [ \"alice\", \"@sre-oncall\" ]\n");
                std::ofstream(w.config, std::ios::trunc) << text;
            }
            w.env.steps.scripts["helmfile apply"].exit_code = 3;
            BOOST_TEST(w.envgate_run().code == k_exit_failed);
            w.env.gitlab_factory =
                [&c](const GitLabSettings& s) -> Result<std::unique_ptr<GroupMembers>> {
                BOOST_TEST(s.server_url == "https://gitlab.example.com");
                BOOST_TEST(s.token == "api-token");
                return std::unique_ptr<GroupMembers>(
                    std::make_unique<MemoryGitLab>(JobUser{c.user, 42}, c.groups, c.down));
            };
            w.in_pipeline(9);
            w.vars["CI_JOB_TOKEN"] = "job-token";
            w.vars["ENVGATE_GITLAB_TOKEN"] = "api-token";
            w.vars["GITLAB_USER_LOGIN"] = c.user;
            UnlockOptions u;
            u.env = "e1";
            u.config_path = w.config;
            u.reason = "fixed by hand";
            auto r = w.run([&](Context& ctx) { return run_unlock(u, ctx); });
            BOOST_TEST(r.code == c.want, r.all());
            BOOST_TEST(has(r.all(), c.want_said), r.all());
            BOOST_TEST(has(w.env.calls.back(), "gitlab https://gitlab.example.com"));
            BOOST_TEST(
                (w.lock_record().state ==
                 (c.want == k_exit_success ? locks::LockState::free : locks::LockState::failed)));
            BOOST_TEST(!has(r.all(), "job-token"));  // no token is ever printed
            BOOST_TEST(!has(r.all(), "api-token"));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
