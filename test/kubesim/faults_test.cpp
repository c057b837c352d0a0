// The fault/control API and the API's error shapes, each observed by a plain HTTP
// client: injected 500/503/429 (+ Retry-After), connection resets, delays, closing
// watches, compaction (410 Expired on watch), history expiry, bookmarks and watch
// timeouts, request counters, and the three pod disruptions.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
const std::string k_pods = "/api/v1/namespaces/default/pods";

json lease(const std::string& name) {
    return {{"apiVersion", "coordination.k8s.io/v1"},
            {"kind", "Lease"},
            {"metadata", {{"name", name}}},
            {"spec", {{"holderIdentity", "a"}, {"leaseDurationSeconds", 30}}}};
}

json sleeper_pod(const std::string& name) {
    return {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"restartPolicy", "Never"},
          {"terminationGracePeriodSeconds", 1},
          {"containers", {{{"name", "c"}, {"image", "busybox"}, {"command", {"sleep", "60"}}}}}}}};
}

void post(SimClient& c, const std::string& path, const json& body = json::object()) {
    int code = 0;
    json answer = send_json(c, "POST", path, body, &code);
    BOOST_REQUIRE_MESSAGE(code == 200, "POST " << path << ": " << code << " " << answer.dump());
}

bool running(SimClient& c, const std::string& name) {
    return get_json(c, k_pods + "/" + name)["status"].value("phase", "") == "Running";
}

const json* condition(const json& pod, const std::string& type) {
    for (const auto& c : pod["status"]["conditions"]) {
        if (c["type"] == type) {
            return &c;
        }
    }
    return nullptr;
}

long elapsed_ms(std::chrono::steady_clock::time_point start) {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_faults)

// Given fail rules, then the next N matching requests get the code as a metav1.Status.
BOOST_AUTO_TEST_CASE(fail_next_requests_with_status_codes) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    post(c, "/kubesim/v1/faults/fail",
         {{"verb", "get"}, {"resource", "leases"}, {"code", 503}, {"count", 2}});
    for (int i = 0; i < 2; ++i) {
        auto r = c.request("GET", k_leases + "/x");
        BOOST_REQUIRE(r.is_ok());
        BOOST_TEST(r->code == 503);
        BOOST_TEST(json::parse(r->body)["reason"] == "ServiceUnavailable");
    }
    int code = 0;
    json body = get_json(c, k_leases + "/x", &code);
    BOOST_TEST(code == 404);
    BOOST_TEST(body["reason"] == "NotFound");
    BOOST_TEST(body["details"]["name"] == "x");

    post(c, "/kubesim/v1/faults/fail",
         {{"verb", "create"}, {"resource", "leases"}, {"code", 429}, {"retryAfterSeconds", 3}});
    auto r = c.request("POST", k_leases, lease("l1").dump());
    BOOST_REQUIRE(r.is_ok());
    BOOST_TEST(r->code == 429);
    BOOST_TEST(r->headers["Retry-After"] == "3");
    BOOST_TEST(json::parse(r->body)["details"]["retryAfterSeconds"] == 3);
    post(c, "/kubesim/v1/faults/fail", {{"verb", "list"}, {"resource", "*"}, {"code", 500}});
    json failed = get_json(c, k_pods, &code);
    BOOST_TEST(code == 500);
    BOOST_TEST(failed["reason"] == "InternalError");
    get_json(c, k_pods, &code);
    BOOST_TEST(code == 200);
    post(c, "/kubesim/v1/faults/fail", {{"verb", "update"}, {"resource", "leases"}, {"code", 403}});
    json forbidden = send_json(c, "PUT", k_leases + "/x", lease("x"), &code);
    BOOST_TEST(code == 403);
    BOOST_TEST(forbidden["reason"] == "Forbidden");
}

// Given a reset rule, then the matching request's connection is dropped without an
// answer, and the next request works.
BOOST_AUTO_TEST_CASE(reset_drops_the_connection) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    post(c, "/kubesim/v1/faults/reset", {{"verb", "get"}, {"resource", "leases"}, {"count", 2}});
    auto r = c.request("GET", k_leases + "/x");  // the client retries once: both reset
    BOOST_TEST(!r.is_ok());
    auto again = c.request("GET", k_leases + "/x");
    BOOST_REQUIRE(again.is_ok());
    BOOST_TEST(again->code == 404);
}

// Given a delay rule, then the matching response takes at least that long.
BOOST_AUTO_TEST_CASE(delay_slows_matching_requests) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    post(c, "/kubesim/v1/faults/delay",
         {{"verb", "list"}, {"resource", "leases"}, {"delayMs", 300}});
    auto start = std::chrono::steady_clock::now();
    get_json(c, k_leases);
    BOOST_TEST(elapsed_ms(start) >= 300);
}

// Given an open watch, when watches are closed, then the stream ends; given a
// compaction, a watch from an older resourceVersion gets ERROR 410 Expired.
BOOST_AUTO_TEST_CASE(close_watches_and_compact_to_410) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    std::string rv = get_json(c, k_leases)["metadata"]["resourceVersion"];
    std::atomic<bool> ended{false};
    std::vector<std::string> lines;
    std::thread watcher([&] {
        SimClient w = sim.client();
        (void)w.stream(k_leases + "?watch=1&resourceVersion=" + rv, [&](const std::string& l) {
            lines.push_back(l);
            return true;
        });
        ended = true;
    });
    send_json(c, "POST", k_leases, lease("w1"));
    BOOST_TEST(wait_until([&] { return !lines.empty(); }));
    post(c, "/kubesim/v1/watches/close");
    BOOST_TEST(wait_until([&] { return ended.load(); }));
    watcher.join();
    BOOST_TEST(json::parse(lines.at(0))["type"] == "ADDED");

    send_json(c, "POST", k_leases, lease("w2"));
    post(c, "/kubesim/v1/compact");
    std::vector<json> events;
    auto code = c.stream(k_leases + "?watch=1&resourceVersion=" + rv, [&](const std::string& l) {
        events.push_back(json::parse(l));
        return true;
    });
    BOOST_REQUIRE(code.is_ok());
    BOOST_TEST(*code == 200);
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_TEST(events[0]["type"] == "ERROR");
    BOOST_TEST(events[0]["object"]["code"] == 410);
    BOOST_TEST(events[0]["object"]["reason"] == "Expired");
}

// Given a small history window, old resourceVersions expire on their own; bookmarks
// arrive when asked for and timeoutSeconds ends the stream.
BOOST_AUTO_TEST_CASE(history_window_bookmarks_and_timeouts) {
    SimProcess sim({"--time-scale", "0.01", "--history", "5", "--bookmark-interval-ms", "100"});
    SimClient c = sim.client();
    std::string rv = get_json(c, k_leases)["metadata"]["resourceVersion"];
    for (int i = 0; i < 8; ++i) {
        send_json(c, "POST", k_leases, lease("h" + std::to_string(i)));
    }
    std::vector<json> events;
    (void)c.stream(k_leases + "?watch=1&resourceVersion=" + rv, [&](const std::string& l) {
        events.push_back(json::parse(l));
        return true;
    });
    BOOST_REQUIRE_EQUAL(events.size(), 1u);
    BOOST_TEST(events[0]["object"]["code"] == 410);

    std::string now_rv = get_json(c, k_leases)["metadata"]["resourceVersion"];
    events.clear();
    auto start = std::chrono::steady_clock::now();
    (void)c.stream(
        k_leases + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=" + now_rv,
        [&](const std::string& l) {
            events.push_back(json::parse(l));
            return true;
        });
    BOOST_TEST(elapsed_ms(start) >= 900);
    BOOST_REQUIRE(!events.empty());
    BOOST_TEST(events[0]["type"] == "BOOKMARK");
    BOOST_TEST(events[0]["object"]["metadata"]["resourceVersion"] == now_rv);
}

// Given counters reset, then each request is counted under its verb and resource.
BOOST_AUTO_TEST_CASE(counters_per_verb_and_resource) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    post(c, "/kubesim/v1/counters/reset");
    send_json(c, "POST", k_leases, lease("c1"));
    for (int i = 0; i < 3; ++i) {
        get_json(c, k_leases + "/c1");
    }
    get_json(c, k_pods);
    json counters = get_json(c, "/kubesim/v1/counters");
    BOOST_TEST(counters["requests"]["get leases"] == 3);
    BOOST_TEST(counters["requests"]["create leases"] == 1);
    BOOST_TEST(counters["requests"]["list pods"] == 1);
    BOOST_TEST(counters["total"] == 5);
}

// Given running pods, then kubelet eviction, preemption and API eviction leave the
// shapes of spec/kubernetes-jobs.md §2.2-2.3.
BOOST_AUTO_TEST_CASE(pod_disruptions_have_kubernetes_shapes) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    for (const char* name : {"p-evict", "p-preempt", "p-drain"}) {
        send_json(c, "POST", k_pods, sleeper_pod(name));
    }
    BOOST_REQUIRE(wait_until(
        [&] { return running(c, "p-evict") && running(c, "p-preempt") && running(c, "p-drain"); }));
    post(c, "/kubesim/v1/namespaces/default/pods/p-evict/evict");
    json evicted = get_json(c, k_pods + "/p-evict");
    BOOST_TEST(evicted["status"]["phase"] == "Failed");
    BOOST_TEST(evicted["status"]["reason"] == "Evicted");
    BOOST_REQUIRE(condition(evicted, "DisruptionTarget") != nullptr);
    BOOST_TEST((*condition(evicted, "DisruptionTarget"))["reason"] == "TerminationByKubelet");
    BOOST_TEST(evicted["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137);

    post(c, "/kubesim/v1/namespaces/default/pods/p-preempt/preempt");
    int code = 0;
    json preempted = send_json(
        c, "POST", k_pods + "/p-drain/eviction",
        {{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", "p-drain"}}}},
        &code);
    BOOST_TEST(code == 201);
    std::vector<json> deleted;
    (void)c.stream(k_pods + "?watch=1&timeoutSeconds=20&resourceVersion=1",
                   [&](const std::string& l) {
                       json ev = json::parse(l);
                       if (ev["type"] == "DELETED") {
                           deleted.push_back(ev["object"]);
                       }
                       return deleted.size() < 2;
                   });
    BOOST_REQUIRE_EQUAL(deleted.size(), 2u);
    for (const auto& pod : deleted) {
        std::string want = pod["metadata"]["name"] == "p-preempt" ? "PreemptionByScheduler"
                                                                  : "EvictionByEvictionAPI";
        BOOST_REQUIRE(condition(pod, "DisruptionTarget") != nullptr);
        BOOST_TEST((*condition(pod, "DisruptionTarget"))["reason"] == want);
        BOOST_TEST(pod["metadata"].contains("deletionTimestamp"));
        BOOST_TEST(pod["status"]["phase"] == "Failed");
        BOOST_TEST(pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 143);
    }
}

// Given objects, then create/update/get errors are metav1.Status with the API
// server's code, reason and details.
BOOST_AUTO_TEST_CASE(api_errors_are_status_objects) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    int code = 0;
    json created = send_json(c, "POST", k_leases, lease("e1"), &code);
    BOOST_TEST(code == 201);
    json again = send_json(c, "POST", k_leases, lease("e1"), &code);
    BOOST_TEST(code == 409);
    BOOST_TEST(again["reason"] == "AlreadyExists");
    json stale = created;
    stale["spec"]["holderIdentity"] = "b";
    send_json(c, "PUT", k_leases + "/e1", stale, &code);
    BOOST_TEST(code == 200);
    json conflict = send_json(c, "PUT", k_leases + "/e1", stale, &code);
    BOOST_TEST(code == 409);
    BOOST_TEST(conflict["reason"] == "Conflict");
    BOOST_TEST(conflict["details"]["group"] == "coordination.k8s.io");
    json bad = lease("Bad_Name");
    send_json(c, "POST", k_leases, bad, &code);
    BOOST_TEST(code == 422);
    json strict = lease("s1");
    strict["spec"]["bogus"] = 1;
    json rejected = send_json(c, "POST", k_leases + "?fieldValidation=Strict", strict, &code);
    BOOST_TEST(code == 400);
    BOOST_TEST(rejected["message"].get<std::string>().find("unknown field \"spec.bogus\"") !=
               std::string::npos);
    json patched = send_json(c, "PATCH", k_leases + "/e1",
                             {{"metadata", {{"annotations", {{"envgate/step", "2"}}}}}}, &code,
                             "application/merge-patch+json");
    BOOST_TEST(code == 200);
    BOOST_TEST(patched["metadata"]["annotations"]["envgate/step"] == "2");
    // Malformed objects are refused (422) or, where the API accepts them, survived.
    json bad_job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", "bad"}}}};
    bad_job["spec"]["backoffLimit"] = "six";
    bad_job["spec"]["template"]["spec"] = sleeper_pod("x")["spec"];
    json refused = send_json(c, "POST", "/apis/batch/v1/namespaces/default/jobs", bad_job, &code);
    BOOST_TEST(code == 422);
    BOOST_TEST(refused["reason"] == "Invalid");
    json odd_pod = sleeper_pod("odd");
    odd_pod["spec"]["containers"][0]["command"] = {1, 2};
    send_json(c, "POST", k_pods, odd_pod, &code);
    BOOST_TEST(code == 201);
    send_json(c, "POST", k_pods, sleeper_pod("after-odd"), &code);
    BOOST_TEST(wait_until([&] { return running(c, "after-odd"); }));  // the kubelet went on
    get_json(c, k_pods + "/odd", &code);
    BOOST_TEST(code == 200);
    get_json(c, "/kubesim/v1/healthz", &code);
    BOOST_TEST(code == 200);
    json gone = send_json(c, "DELETE", k_leases + "/e1", nullptr, &code);
    BOOST_TEST(code == 200);
    get_json(c, k_leases + "/e1", &code);
    BOOST_TEST(code == 404);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
