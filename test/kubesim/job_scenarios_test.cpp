// Job-controller scenarios against a running kubesim, compared with the rules of
// spec/kubernetes-jobs.md §1-2: restart limit (OnFailure, backoffLimit 0/1/3), pod limit
// (Never), evicted and preempted pods counted as failed, podFailurePolicy Ignore,
// FailJob and Count, activeDeadlineSeconds, success. Each case's observed condition
// sequence, final counters and pod numbers are checked and printed as a table.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_jobs = "/apis/batch/v1/namespaces/default/jobs";
const std::string k_pods = "/api/v1/namespaces/default/pods";

enum class Action { none, evict_each, preempt, api_evict, preempt_then_succeed };

struct Case {
    std::string name;
    std::string restart_policy;
    int backoff_limit;
    std::string script;
    json spec_extra;
    Action action;
    std::string want_sequence;  // successive condition-type lists, "|"-separated
    std::string want_reason;
    int want_failed;
    int want_succeeded;
    int want_pods;
    int want_max_restarts;  // -1: not checked
};

struct Observed {
    std::vector<std::string> sequence;
    json status;
    bool saw_uncounted = false;
    int pods = 0;
    int max_restarts = 0;
    std::string error;
};

json make_job(const Case& c) {
    json spec = {
        {"backoffLimit", c.backoff_limit},
        {"template",
         {{"spec",
           {{"restartPolicy", c.restart_policy},
            {"terminationGracePeriodSeconds", 5},
            {"containers",
             {{{"name", "main"}, {"image", "busybox"}, {"command", {"sh", "-c", c.script}}}}}}}}}};
    spec.update(c.spec_extra);
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", {{"name", c.name}}},
            {"spec", spec}};
}

std::string condition_types(const json& status) {
    std::string out;
    for (const auto& cond : status.value("conditions", json::array())) {
        out += (out.empty() ? "" : ",") + cond.value("type", "");
    }
    return out.empty() ? "-" : out;
}

bool terminal(const json& status) {
    for (const auto& cond : status.value("conditions", json::array())) {
        std::string t = cond.value("type", "");
        if ((t == "Failed" || t == "Complete") && cond.value("status", "") == "True") {
            return true;
        }
    }
    return false;
}

// Runs the disruption of `c` on each new active pod until the Job finishes.
void act(const SimProcess& sim, const Case& c, const std::atomic<bool>& done) {
    const std::string marker = sim.dir() + "/ignored-once";
    if (c.action == Action::none) {
        return;
    }
    SimClient client = sim.client();
    std::set<std::string> handled;
    while (!done) {
        int code = 0;
        json pods = get_json(client, k_pods + "?labelSelector=job-name%3D" + c.name, &code);
        if (!pods.is_object()) {
            throw std::runtime_error("list pods answered " + std::to_string(code) + ": " +
                                     pods.dump());
        }
        for (const auto& pod : pods.value("items", json::array())) {
            std::string name = pod["metadata"]["name"];
            bool running = pod["status"].value("phase", "") == "Running";
            if (!running || handled.count(name) != 0 ||
                pod["metadata"].contains("deletionTimestamp")) {
                continue;
            }
            bool first = handled.empty();
            handled.insert(name);
            if (c.action == Action::preempt_then_succeed && !first) {
                continue;
            }
            if (c.action == Action::preempt_then_succeed && !std::ifstream(marker).good()) {
                handled.erase(name);  // not yet past its `touch`: try again
                continue;
            }
            std::string base = "/kubesim/v1/namespaces/default/pods/" + name + "/";
            if (c.action == Action::evict_each) {
                send_json(client, "POST", base + "evict", json::object());
            } else if (c.action == Action::preempt || c.action == Action::preempt_then_succeed) {
                send_json(client, "POST", base + "preempt", json::object());
            } else if (c.action == Action::api_evict) {
                send_json(client, "POST", k_pods + "/" + name + "/eviction",
                          {{"apiVersion", "policy/v1"},
                           {"kind", "Eviction"},
                           {"metadata", {{"name", name}, {"namespace", "default"}}}});
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
}

Observed run_case(const SimProcess& sim, const Case& c) {
    Observed obs;
    SimClient client = sim.client();
    json list = get_json(client, k_jobs);
    std::string rv = list["metadata"]["resourceVersion"];
    std::string pods_rv = get_json(client, k_pods)["metadata"]["resourceVersion"];
    std::atomic<bool> done{false};
    std::atomic<uint64_t> terminal_rv{0};  // of the Job's terminal status
    // Every pod change from before the Job existed up to its terminal status, whenever
    // this watch gets going: it starts at a resourceVersion read before the create and
    // ends once an event or bookmark (kubesim's resourceVersions are one counter)
    // reached the terminal one, so no restartCount is missed under load.
    std::thread pod_watch([&] {
        SimClient pc = sim.client();
        (void)pc.stream(
            k_pods + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=60" +
                "&resourceVersion=" + pods_rv + "&labelSelector=job-name%3D" + c.name,
            [&](const std::string& line) {
                json ev = json::parse(line, nullptr, false);
                if (!ev.is_object() || !ev["object"].is_object()) {
                    return !done.load();
                }
                const json& obj = ev["object"];
                const json st = obj.value("status", json::object());
                for (const auto& cs : st.value("containerStatuses", json::array())) {
                    obs.max_restarts = std::max(obs.max_restarts, cs.value("restartCount", 0));
                }
                uint64_t seen = std::stoull(
                    obj.value("metadata", json::object()).value("resourceVersion", "0"));
                uint64_t end = terminal_rv.load();
                return end != 0 ? seen < end : !done.load();
            });
    });
    std::thread job_watch([&] {
        SimClient wc = sim.client();
        auto r = wc.stream(k_jobs + "?watch=1&timeoutSeconds=60&resourceVersion=" + rv +
                               "&fieldSelector=metadata.name%3D" + c.name,
                           [&](const std::string& line) {
                               json ev = json::parse(line, nullptr, false);
                               if (!ev.is_object() || ev["type"] == "BOOKMARK") {
                                   return true;
                               }
                               const json st = ev["object"].value("status", json::object());
                               std::string types = condition_types(st);
                               if (obs.sequence.empty() || obs.sequence.back() != types) {
                                   obs.sequence.push_back(types);
                               }
                               const json unc = st.value("uncountedTerminatedPods", json::object());
                               obs.saw_uncounted =
                                   obs.saw_uncounted || !unc.value("failed", json::array()).empty();
                               obs.status = st;
                               if (terminal(st)) {
                                   terminal_rv = std::stoull(
                                       ev["object"]["metadata"].value("resourceVersion", "0"));
                                   return false;
                               }
                               return true;
                           });
        if (!r) {
            obs.error = r.status().message();
        }
        done = true;
    });
    int code = 0;
    send_json(client, "POST", k_jobs, make_job(c), &code);
    if (code != 201) {
        obs.error = "create answered " + std::to_string(code);
    }
    std::thread actor([&] {
        try {
            act(sim, c, done);
        } catch (const std::exception& e) {
            obs.error = std::string("actor: ") + e.what();
        }
    });
    job_watch.join();
    done = true;
    actor.join();
    pod_watch.join();
    json job = get_json(client, k_jobs + "/" + c.name);
    json events =
        get_json(client, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.uid%3D" +
                             job["metadata"].value("uid", "") + ",reason%3DSuccessfulCreate");
    obs.pods = static_cast<int>(events.value("items", json::array()).size());
    return obs;
}

std::string join_sequence(const std::vector<std::string>& seq) {
    std::string out;
    for (const auto& s : seq) {
        out += (out.empty() ? "" : "|") + s;
    }
    return out;
}

std::string last_reason(const json& status) {
    const json conds = status.value("conditions", json::array());
    return conds.empty() ? "" : conds.back().value("reason", "");
}

const std::string k_seq_fail = "-|FailureTarget|FailureTarget,Failed";
const std::string k_seq_ok = "-|SuccessCriteriaMet|SuccessCriteriaMet,Complete";

std::vector<Case> cases(const std::string& dir) {
    json ignore_disruption = {
        {"podFailurePolicy",
         {{"rules",
           {{{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}}}}}}};
    json fail_42 = {{"podFailurePolicy",
                     {{"rules",
                       {{{"action", "FailJob"},
                         {"onExitCodes",
                          {{"containerName", "main"}, {"operator", "In"}, {"values", {42}}}}}}}}}};
    json count_5 = {
        {"podFailurePolicy",
         {{"rules",
           {{{"action", "Count"}, {"onExitCodes", {{"operator", "In"}, {"values", {5}}}}}}}}}};
    std::string marker = dir + "/ignored-once";
    return {
        {"restart-limit-0", "OnFailure", 0, "exit 1", json::object(), Action::none, k_seq_fail,
         "BackoffLimitExceeded", 1, 0, 1, 1},
        {"restart-limit-1", "OnFailure", 1, "exit 1", json::object(), Action::none, k_seq_fail,
         "BackoffLimitExceeded", 1, 0, 1, 1},
        {"restart-limit-3", "OnFailure", 3, "exit 1", json::object(), Action::none, k_seq_fail,
         "BackoffLimitExceeded", 1, 0, 1, 3},
        {"pod-limit-never-2", "Never", 2, "exit 1", json::object(), Action::none, k_seq_fail,
         "BackoffLimitExceeded", 3, 0, 3, 0},
        {"evicted-counted", "Never", 1, "sleep 30", json::object(), Action::evict_each, k_seq_fail,
         "BackoffLimitExceeded", 2, 0, 2, 0},
        {"preempted-counted", "Never", 0, "sleep 30", json::object(), Action::preempt, k_seq_fail,
         "BackoffLimitExceeded", 1, 0, 1, 0},
        {"api-evicted-counted", "Never", 0, "sleep 30", json::object(), Action::api_evict,
         k_seq_fail, "BackoffLimitExceeded", 1, 0, 1, 0},
        {"policy-ignore-disruption", "Never", 0,
         "if [ -f " + marker + " ]; then exit 0; fi; touch " + marker + "; sleep 30",
         ignore_disruption, Action::preempt_then_succeed, k_seq_ok, "CompletionsReached", 0, 1, 2,
         0},
        {"policy-failjob-42", "Never", 6, "exit 42", fail_42, Action::none, k_seq_fail,
         "PodFailurePolicy", 1, 0, 1, 0},
        {"policy-count-5", "Never", 1, "exit 5", count_5, Action::none, k_seq_fail,
         "BackoffLimitExceeded", 2, 0, 2, 0},
        {"deadline",
         "Never",
         6,
         "sleep 30",
         {{"activeDeadlineSeconds", 20}},
         Action::none,
         k_seq_fail,
         "DeadlineExceeded",
         1,
         0,
         1,
         0},
        {"success", "Never", 6, "echo done", json::object(), Action::none, k_seq_ok,
         "CompletionsReached", 0, 1, 1, 0},
    };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_job_scenarios)

// Given one kubesim at --time-scale 0.01, when every scenario Job runs side by side,
// then each reaches the condition sequence, reason and counts Kubernetes 1.31+ gives.
BOOST_AUTO_TEST_CASE(job_controller_matches_kubernetes_rules) {
    SimProcess sim({"--time-scale", "0.01", "--bookmark-interval-ms", "50"});
    auto all = cases(sim.dir());
    std::vector<Observed> observed(all.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < all.size(); ++i) {
        threads.emplace_back([&, i] {
            try {
                observed[i] = run_case(sim, all[i]);
            } catch (const std::exception& e) {
                observed[i].error = e.what();
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    std::cout << std::left << std::setw(26) << "case" << std::setw(52) << "conditions observed"
              << std::setw(22) << "reason"
              << "failed succ pods restarts\n";
    for (size_t i = 0; i < all.size(); ++i) {
        const Case& c = all[i];
        const Observed& o = observed[i];
        std::cout << std::left << std::setw(26) << c.name << std::setw(52)
                  << join_sequence(o.sequence) << std::setw(22) << last_reason(o.status)
                  << std::setw(7) << o.status.value("failed", 0) << std::setw(5)
                  << o.status.value("succeeded", 0) << std::setw(5) << o.pods << std::setw(5)
                  << o.max_restarts << "\n";
        BOOST_TEST_CONTEXT("case " << c.name) {
            BOOST_TEST(o.error == "");
            BOOST_TEST(join_sequence(o.sequence) == c.want_sequence);
            BOOST_TEST(last_reason(o.status) == c.want_reason);
            BOOST_TEST(o.status.value("failed", 0) == c.want_failed);
            BOOST_TEST(o.status.value("succeeded", 0) == c.want_succeeded);
            BOOST_TEST(o.pods == c.want_pods);
            if (c.want_max_restarts >= 0 && c.restart_policy == "OnFailure") {
                BOOST_TEST(o.max_restarts == c.want_max_restarts);
            }
            BOOST_TEST(o.status.value("uncountedTerminatedPods", json::object()).empty());
            BOOST_TEST(o.status.value("active", 0) == 0);
        }
    }
    // Failed pods are counted through uncountedTerminatedPods before status.failed.
    BOOST_TEST(observed[3].saw_uncounted);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
