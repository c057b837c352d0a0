// Given the lock commands with -o json, --context and -n, then each prints one JSON
// object with the lock record read back, and --context / -n reach the Lease store in
// place of the config's context and namespace.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include "runner/cmd_dashboard.h"
#include "runner/exit_status.h"
#include "test/runner/lock_workspace.h"

using namespace envgate;
using test::has;
using test::Run;
using test::Workspace;

BOOST_AUTO_TEST_SUITE(lock_output_suite)

// Given -o json, then unlock and each lock action print one JSON object: the action,
// its message and the lock record read back; another output is a usage error.
BOOST_AUTO_TEST_CASE(lock_and_unlock_print_json_with_output_json) {
    Workspace w;
    UnlockOptions u;
    u.env = "gstg";
    u.reason = "fixed by hand";
    u.config_path = w.config;
    u.output = "json";
    Run unlocked = w.run([&](Context& ctx) { return run_unlock(u, ctx); }, {{"USER", "sre"}});
    BOOST_REQUIRE_MESSAGE(unlocked.code == k_exit_success, unlocked.err);
    auto j = nlohmann::json::parse(unlocked.out);
    BOOST_TEST(j["action"] == "unlock");
    BOOST_TEST(j["lock"] == "gstg");
    BOOST_TEST(j["record"]["state"] == "free");
    BOOST_TEST(has(j["message"].get<std::string>(), "recorded as sre: fixed by hand"));
    for (const char* action : {"acquire", "verify", "release"}) {
        Run r = w.lock(action, "gprd", "grp/app#9", "json");
        BOOST_TEST_CONTEXT(action) {
            BOOST_REQUIRE_MESSAGE(r.code == k_exit_success, r.err);
            auto a = nlohmann::json::parse(r.out);
            BOOST_TEST(a["action"] == action);
            BOOST_TEST(a["record"]["state"] ==
                       (std::string(action) == "release" ? "free" : "held"));
        }
    }
    u.output = "yaml";
    BOOST_TEST(w.run([&](Context& ctx) { return run_unlock(u, ctx); }, {}).code == k_exit_usage);
}

// Given a kubernetes lock store, then --context picks the kubeconfig context over the
// environment's (a missing one is named, with those the file has) and -n the Leases'
// namespace, for status, lock and unlock alike.
BOOST_AUTO_TEST_CASE(context_and_namespace_reach_the_lease_store) {
    test::TempDir dir;
    const std::string config = dir.path() + "/envgate.yml";
    const std::string kubeconfig = dir.path() + "/kubeconfig";
    std::ofstream(config) << "version: 1\n"
                             "defaults:\n"
                             "  namespace: gitlab\n"
                             "  lock: { store: kubernetes, namespace: envgate-locks }\n"
                             "environments:\n"
                             "  - { name: gstg, kube_context: ops }\n";
    std::ofstream(kubeconfig)
        << "apiVersion: v1\nkind: Config\ncurrent-context: ops\n"
           "clusters:\n- name: c\n  cluster: { server: 'http://127.0.0.1:1' }\n"
           "users:\n- name: u\n  user: { token: s3cr3t-kube-token }\n"
           "contexts:\n- name: ops\n  context: { cluster: c, user: u }\n";
    Workspace w;
    // The options every lock command shares, aimed at this config and kubeconfig.
    auto on_lease_store = [&](auto o) {
        o.config_path = config;
        o.env = "gstg";
        o.kubeconfig = kubeconfig;
        o.context = "elsewhere";
        return o;
    };
    StatusOptions s = on_lease_store(StatusOptions{});
    Run status = w.run([&](Context& ctx) { return run_status(s, ctx); }, {});
    BOOST_TEST(status.code == k_exit_usage);
    BOOST_TEST(has(status.err, "context \"elsewhere\" not found; the contexts are: ops"),
               status.err);
    LockOptions l = on_lease_store(LockOptions{});
    l.action = "verify";
    UnlockOptions u = on_lease_store(UnlockOptions{});
    u.reason = "r";
    for (const Run& r : {w.run([&](Context& ctx) { return run_lock(l, ctx); }, {}),
                         w.run([&](Context& ctx) { return run_unlock(u, ctx); }, {})}) {
        BOOST_TEST(r.code == k_exit_usage);
        BOOST_TEST(has(r.err, "context \"elsewhere\" not found"), r.err);
    }
    DashboardOptions d;
    d.out_dir = dir.path() + "/dashboard";
    d.config_path = config;
    d.kubeconfig = kubeconfig;
    d.context = "elsewhere";
    Run dashboard = w.run([&](Context& ctx) { return run_dashboard(d, ctx); }, {});
    BOOST_TEST(has(dashboard.err, "context \"elsewhere\" not found"), dashboard.err);
    // The environment's own context reaches the (unreachable) server, in the -n namespace.
    s.context.reset();
    s.namespace_ = "other-locks";
    s.output = "json";
    Run reached = w.run([&](Context& ctx) { return run_status(s, ctx); }, {});
    BOOST_TEST(reached.code == k_exit_infra);
    auto j = nlohmann::json::parse(reached.out);
    BOOST_TEST(j["locks"][0]["store"] == "kubernetes store (Leases in namespace other-locks)");
    BOOST_TEST(has(j["locks"][0]["error"].get<std::string>(), "Connection refused"));
}

// In CI the holder is the pipeline: --holder naming another pipeline is refused before
// the lock is read, so pipeline 8 can neither re-enter nor release pipeline 7's lock.
BOOST_AUTO_TEST_CASE(holder_flag_is_refused_inside_ci) {
    Workspace w;
    std::map<std::string, std::string> ci = {
        {"CI", "true"}, {"CI_PROJECT_PATH", "grp/app"}, {"CI_PIPELINE_ID", "8"}};
    const std::string before = locks::FileStore(w.locks).read("gstg")->version;
    for (const char* action : {"acquire", "release", "fail", "verify"}) {
        LockOptions o;
        o.action = action;
        o.env = "gstg";
        o.config_path = w.config;
        o.holder = "grp/app#7";
        o.no_wait = true;
        Run r = w.run([&](Context& ctx) { return run_lock(o, ctx); }, ci);
        BOOST_TEST(r.code == k_exit_usage, action);
        BOOST_TEST(has(r.err, "--holder \"grp/app#7\" is refused in GitLab CI"), r.err);
        BOOST_TEST(has(r.err, "its own pipeline (grp/app#8)"), r.err);
    }
    BOOST_TEST(locks::FileStore(w.locks).read("gstg")->version == before);
    // Outside CI --holder still names the holder (a person's own scripts).
    Run local = w.lock("verify", "gstg", "grp/app#7");
    BOOST_TEST(local.code == k_exit_lock_not_obtained, local.err);
    BOOST_TEST(!has(local.err, "refused in GitLab CI"), local.err);
}

BOOST_AUTO_TEST_SUITE_END()
