// The kubesim kubelet seen through the API: init containers run first and in order,
// termination messages (file and FallbackToLogsOnError), graceful deletion (SIGTERM,
// then SIGKILL after the grace period), logs with previous and follow.
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "test/kubesim/sim_process.h"

namespace kubesim::testing {

using nlohmann::json;

namespace {

const std::string k_pods = "/api/v1/namespaces/default/pods";

json container(const std::string& name, const std::string& script) {
    return {{"name", name}, {"image", "busybox"}, {"command", {"sh", "-c", script}}};
}

json pod(const std::string& name, const std::string& restart, json containers,
         json init = json::array()) {
    json spec = {{"restartPolicy", restart},
                 {"terminationGracePeriodSeconds", 2},
                 {"containers", std::move(containers)}};
    if (!init.empty()) {
        spec["initContainers"] = std::move(init);
    }
    return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

json create_and_wait(SimClient& c, const json& p, const std::string& phase) {
    int code = 0;
    send_json(c, "POST", k_pods, p, &code);
    BOOST_REQUIRE_EQUAL(code, 201);
    std::string path = k_pods + "/" + p["metadata"]["name"].get<std::string>();
    json got;
    BOOST_REQUIRE(wait_until([&] {
        got = get_json(c, path);
        return got["status"].value("phase", "") == phase;
    }));
    return got;
}

std::string text(SimClient& c, const std::string& path, int* code = nullptr) {
    auto r = c.request("GET", path);
    BOOST_REQUIRE(r.is_ok());
    if (code != nullptr) {
        *code = r->code;
    }
    return r->body;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(kubesim_kubelet)

// Given two init containers and an app container, then they run in order, and the
// failing app's message falls back to its last log lines.
BOOST_AUTO_TEST_CASE(init_containers_in_order_and_fallback_message) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    std::string file = sim.dir() + "/order";
    json app = container("app", "cat " + file + "; echo PG::ConnectionBad >&2; exit 1");
    app["terminationMessagePolicy"] = "FallbackToLogsOnError";
    json p = pod("init", "Never", {app},
                 {container("first", "sleep 0.05; echo first >> " + file),
                  container("second", "echo second >> " + file)});
    json done = create_and_wait(c, p, "Failed");
    BOOST_TEST(done["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"] ==
               "Completed");
    const json& term = done["status"]["containerStatuses"][0]["state"]["terminated"];
    BOOST_TEST(term["exitCode"] == 1);
    BOOST_TEST(term["reason"] == "Error");
    BOOST_TEST(term["message"] == "first\nsecond\nPG::ConnectionBad\n");
    BOOST_TEST(text(c, k_pods + "/init/log?container=second") == "");
    BOOST_TEST(text(c, k_pods + "/init/log?container=app") == "first\nsecond\nPG::ConnectionBad\n");
}

// Given a container that writes $KUBESIM_TERMINATION_LOG, then that is its message.
BOOST_AUTO_TEST_CASE(termination_message_file) {
    SimProcess sim({"--time-scale", "0.01"});
    SimClient c = sim.client();
    json done = create_and_wait(
        c,
        pod("msg", "Never",
            {container("c", "printf 'migration 42 failed' > $KUBESIM_TERMINATION_LOG; exit 2")}),
        "Failed");
    BOOST_TEST(done["status"]["containerStatuses"][0]["state"]["terminated"]["message"] ==
               "migration 42 failed");
    int code = 0;
    json st = json::parse(text(c, k_pods + "/msg/log?previous=true", &code));
    BOOST_TEST(code == 400);
    BOOST_TEST(st["message"] == "previous terminated container \"c\" in pod \"msg\" not found");
}

// Given a deleted pod with one container that exits on SIGTERM and one that ignores
// it, then the first ends 0 and the second is killed (137) after the grace period.
BOOST_AUTO_TEST_CASE(graceful_deletion_sigterm_then_sigkill) {
    SimProcess sim({"--time-scale", "0.05"});
    SimClient c = sim.client();
    std::string ready = sim.dir() + "/ready-";
    create_and_wait(c,
                    pod("grace", "Never",
                        {container("polite", "trap 'echo got TERM; exit 0' TERM; touch " + ready +
                                                 "polite; while :; do sleep 0.01; done"),
                         container("stubborn", "trap '' TERM; touch " + ready +
                                                   "stubborn; while :; do sleep 0.01; done")}),
                    "Running");
    // The traps must be in place before the deletion: wait for both markers.
    BOOST_REQUIRE(wait_until([&] {
        return std::ifstream(ready + "polite").good() && std::ifstream(ready + "stubborn").good();
    }));
    std::string rv = get_json(c, k_pods)["metadata"]["resourceVersion"];
    int code = 0;
    json deleting = send_json(c, "DELETE", k_pods + "/grace", nullptr, &code);
    BOOST_TEST(code == 200);
    BOOST_TEST(deleting["metadata"]["deletionGracePeriodSeconds"] == 2);
    json gone;
    (void)c.stream(k_pods + "?watch=1&timeoutSeconds=20&resourceVersion=" + rv,
                   [&](const std::string& l) {
                       json ev = json::parse(l);
                       if (ev["type"] == "DELETED") {
                           gone = ev["object"];
                       }
                       return gone.is_null();
                   });
    BOOST_REQUIRE(!gone.is_null());
    BOOST_TEST(gone["status"]["phase"] == "Failed");
    for (const auto& cs : gone["status"]["containerStatuses"]) {
        int want = cs["name"] == "polite" ? 0 : 137;
        BOOST_TEST(cs["state"]["terminated"]["exitCode"] == want, cs["name"] << " exit code");
    }
}

// Given a crash-looping container, then ?previous=true serves the run its
// lastState names; ?follow=true streams a running container until it ends.
BOOST_AUTO_TEST_CASE(logs_previous_and_follow) {
    SimProcess sim({"--time-scale", "0.1"});
    SimClient c = sim.client();
    create_and_wait(
        c, pod("loop", "OnFailure", {container("c", "echo run-$KUBESIM_RESTART_COUNT; exit 1")}),
        "Running");
    auto last_instance = [&] {
        json p = get_json(c, k_pods + "/loop");
        json last = p["status"]["containerStatuses"][0].value("lastState", json::object());
        std::string id = last.value("terminated", json::object()).value("containerID", "");
        return id.empty() ? id : id.substr(id.rfind('-') + 1);
    };
    std::string before;
    std::string log;
    std::string after;
    BOOST_REQUIRE(wait_until([&] {
        before = last_instance();
        log = text(c, k_pods + "/loop/log?previous=true");
        after = last_instance();
        return !before.empty() && before == after;
    }));
    BOOST_TEST(log == "run-" + before + "\n");

    send_json(
        c, "POST", k_pods,
        pod("count", "Never", {container("c", "for i in 1 2 3; do echo $i; sleep 0.05; done")}));
    BOOST_REQUIRE(wait_until(
        [&] { return get_json(c, k_pods + "/count")["status"].value("phase", "") == "Running"; }));
    std::string followed;
    (void)c.stream(k_pods + "/count/log?follow=true", [&](const std::string& l) {
        followed += l + "\n";
        return true;
    });
    BOOST_TEST(followed == "1\n2\n3\n");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace kubesim::testing
