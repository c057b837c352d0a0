// Given the lock commands with -o json, --context and -n, then each prints one JSON
// object with the lock record read back, and --context / -n reach the Lease store in
// place of the config's context and namespace.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

#include "runner/base/exit_status.h"
#include "runner/cmd_dashboard.h"
#include "test/runner/lock_workspace.h"

using namespace envgate;
using test::has;
using test::Run;
using test::Workspace;

namespace {

// A kubeconfig whose one context, ops, reaches an API that refuses every connection.
void write_unreachable_kubeconfig(const std::string& path) {
    std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: ops\n"
                           "clusters:\n- name: c\n  cluster: { server: 'http://127.0.0.1:1' }\n"
                           "users:\n- name: u\n  user: { token: s3cr3t-kube-token }\n"
                           "contexts:\n- name: ops\n  context: { cluster: c, user: u }\n";
}

}  // namespace

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
    write_unreachable_kubeconfig(kubeconfig);
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

// Given Lease stores on an API that refuses every connection, then status shows each
// lock as unknown with the error in every output (never free: JSON lock.state
// "unknown", text UNKNOWN, Prometheus state="unknown" 1 and state="free" 0), the
// --timeout is one budget shared by all the locks (the later ones are not read once it
// is spent), and the exit is 4.
BOOST_AUTO_TEST_CASE(status_of_an_unreachable_store_is_unknown_in_every_output) {
    test::TempDir dir;
    const std::string config = dir.path() + "/envgate.yml";
    const std::string kubeconfig = dir.path() + "/kubeconfig";
    std::ofstream(config) << "version: 1\n"
                             "defaults:\n"
                             "  namespace: gitlab\n"
                             "  lock: { store: kubernetes, namespace: envgate-locks }\n"
                             "environments:\n"
                             "  - { name: gstg, kube_context: ops }\n"
                             "  - { name: gprd, kube_context: ops }\n";
    write_unreachable_kubeconfig(kubeconfig);
    Workspace w;
    auto status = [&](const std::string& output) {
        StatusOptions s;
        s.config_path = config;
        s.kubeconfig = kubeconfig;
        s.output = output;
        s.timeout = "3s";
        return w.run([&](Context& ctx) { return run_status(s, ctx); }, {});
    };
    Run json = status("json");
    BOOST_TEST(json.code == k_exit_infra);
    auto j = nlohmann::json::parse(json.out);
    BOOST_REQUIRE(j["locks"].size() == 3u);  // gstg, gprd, qa
    for (const auto& entry : j["locks"]) {
        BOOST_TEST_CONTEXT(entry["lock"]["name"]) {
            BOOST_TEST(entry["lock"]["state"] == "unknown");
            BOOST_TEST(entry["error"].is_string());
        }
    }
    BOOST_TEST(has(j["locks"][0]["error"].get<std::string>(), "Connection refused"));
    // The budget is shared: all three reads, retries included, end within the 3s (on the
    // clock the retries sleep on), and once it is spent no lock is read at all.
    auto config_read = load_config(config);
    BOOST_REQUIRE(config_read.is_ok());
    const std::vector<std::string> names = {"gstg", "gprd", "qa"};
    for (Duration budget : {Duration(std::chrono::seconds(3)), Duration::zero()}) {
        Duration spent{};
        std::vector<LockStatus> read;
        w.run(
            [&](Context& ctx) {
                int exit = 0;
                const TimePoint start = ctx.clock.now();
                read = read_lock_statuses(*config_read, names, ctx, exit,
                                          {kubeconfig, std::nullopt, std::nullopt, std::nullopt},
                                          budget)
                           .value_or(std::vector<LockStatus>{});
                spent = ctx.clock.now() - start;
                return exit;
            },
            {});
        BOOST_TEST_CONTEXT(format_duration(budget)) {
            BOOST_REQUIRE(read.size() == 3u);
            BOOST_TEST(spent <= budget);
            for (const LockStatus& l : read) {
                BOOST_TEST(!l.error.empty());
                BOOST_TEST(has(l.error, "not read: the") == (budget == Duration::zero()), l.error);
            }
        }
    }
    Run text = status("text");
    BOOST_TEST(text.code == k_exit_infra);
    BOOST_TEST(has(text.out, "gstg  UNKNOWN"), text.out);
    BOOST_TEST(!has(text.out, "FREE"), text.out);
    Run prometheus = status("prometheus");
    BOOST_TEST(prometheus.code == k_exit_infra);
    for (const char* env : {"gstg", "gprd", "qa"}) {
        const std::string l = std::string("envgate_lock_state{environment=\"") + env;
        BOOST_TEST(has(prometheus.out, l + "\",state=\"unknown\"} 1\n"), prometheus.out);
        BOOST_TEST(has(prometheus.out, l + "\",state=\"free\"} 0\n"), prometheus.out);
    }
    // The dashboard reads the locks the same way: unknown on the page and in its JSON.
    DashboardOptions d;
    d.out_dir = dir.path() + "/dashboard";
    d.config_path = config;
    d.kubeconfig = kubeconfig;
    d.output = "json";
    d.timeout = "3s";
    Run dashboard = w.run([&](Context& ctx) { return run_dashboard(d, ctx); }, {});
    auto page = nlohmann::json::parse(dashboard.out);
    for (const auto& entry : page["locks"]) {
        BOOST_TEST(entry["lock"]["state"] == "unknown");
    }
    std::ifstream html(d.out_dir + "/index.html");
    const std::string html_text{std::istreambuf_iterator<char>(html), {}};
    BOOST_TEST(has(html_text, "<section class=\"lock state-unknown\" id=\"lock-gstg\">"));
    BOOST_TEST(!has(html_text, "<section class=\"lock state-free\""));
    StatusOptions bad;
    bad.config_path = config;
    bad.timeout = "soon";
    Run refused = w.run([&](Context& ctx) { return run_status(bad, ctx); }, {});
    BOOST_TEST(refused.code == k_exit_usage);
    BOOST_TEST(has(refused.err, "--timeout"), refused.err);
}

BOOST_AUTO_TEST_SUITE_END()
