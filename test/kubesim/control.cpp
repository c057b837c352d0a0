// Control API: see control.h. Endpoints (JSON bodies optional):
//   GET  /kubesim/v1/healthz, /kubesim/v1/counters, /kubesim/v1/faults
//   POST /kubesim/v1/counters/reset, /kubesim/v1/faults/{fail,reset,delay,clear}
//   POST /kubesim/v1/watches/close, /kubesim/v1/compact
//   POST /kubesim/v1/namespaces/NS/pods/NAME/{evict,preempt,api-evict}
#include "test/kubesim/control.h"

#include <Poco/URI.h>

#include <sstream>

#include "test/kubesim/faults.h"
#include "test/kubesim/kubelet.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/store.h"

namespace kubesim {

using nlohmann::json;

namespace {

std::vector<std::string> parts_of(const std::string& path) {
    std::vector<std::string> parts;
    std::stringstream ss(path);
    std::string p;
    while (std::getline(ss, p, '/')) {
        if (!p.empty()) {
            parts.push_back(p);
        }
    }
    return parts;
}

void ok(Poco::Net::HTTPServerResponse& resp, const json& extra = json::object()) {
    json body = {{"ok", true}};
    body.update(extra);
    send_json(resp, 200, body);
}

void pod_action(Context& ctx, const std::string& ns, const std::string& name,
                const std::string& action, const json& body, Poco::Net::HTTPServerResponse& resp) {
    Status st;
    if (action == "evict") {
        st = ctx.kubelet.evict(ns, name,
                               body.value("message",
                                          "The node was low on resource: memory. "
                                          "Threshold quantity: 100Mi, available: "
                                          "64Mi. "));
    } else if (action == "preempt") {
        auto r = disrupt_pod(ctx.store, ns, name, "PreemptionByScheduler",
                             "default-scheduler: preempting to accommodate a higher priority pod");
        st = r ? Status::ok() : r.status();
        if (r) {
            record_event(ctx.store, *r, "Normal", "Preempted",
                         "Preempted by " + ns + "/kubesim-high-priority on node kubesim-node",
                         "default-scheduler");
        }
    } else if (action == "api-evict") {
        auto r =
            disrupt_pod(ctx.store, ns, name, "EvictionByEvictionAPI", "Eviction API: evicting");
        st = r ? Status::ok() : r.status();
    } else {
        send_status(resp, 404, "NotFound", "unknown pod action " + action);
        return;
    }
    if (!st.is_ok()) {
        send_error(resp, st, find_resource("", "v1", "pods"), name);
        return;
    }
    ok(resp);
}

}  // namespace

void handle_control(Context& ctx, Poco::Net::HTTPServerRequest& request,
                    Poco::Net::HTTPServerResponse& resp) {
    auto parts = parts_of(Poco::URI(request.getURI()).getPath());
    std::vector<std::string> p(parts.begin() + 2, parts.end());  // after kubesim/v1
    std::string method = request.getMethod();
    std::string text = read_body(request);
    json body = json::object();
    try {
        if (!text.empty()) {
            body = json::parse(text);
        }
    } catch (const json::exception& e) {
        send_status(resp, 400, "BadRequest", std::string("invalid JSON body: ") + e.what());
        return;
    }
    auto is = [&](std::initializer_list<const char*> want) {
        if (p.size() != want.size()) {
            return false;
        }
        size_t i = 0;
        for (const char* w : want) {
            if (p[i++] != w) {
                return false;
            }
        }
        return true;
    };
    if (is({"healthz"})) {
        ok(resp, {{"resourceVersion", std::to_string(ctx.store.current_rv())}});
    } else if (is({"counters"}) && method == "GET") {
        send_json(resp, 200, ctx.faults.counters());
    } else if (is({"counters", "reset"})) {
        ctx.faults.reset_counters();
        ok(resp);
    } else if (is({"faults"}) && method == "GET") {
        send_json(resp, 200, {{"rules", ctx.faults.rules()}});
    } else if (p.size() == 2 && p[0] == "faults" && p[1] == "clear") {
        ctx.faults.clear();
        ok(resp);
    } else if (p.size() == 2 && p[0] == "faults" &&
               (p[1] == "fail" || p[1] == "reset" || p[1] == "delay")) {
        FaultRule rule = FaultRule::from_json(p[1], body);
        ctx.faults.add(rule);
        ok(resp, {{"rule", rule.to_json()}});
    } else if (is({"watches", "close"})) {
        ++ctx.watch_generation;
        ctx.store.wake_all();
        ok(resp);
    } else if (is({"compact"})) {
        ctx.store.compact();
        ok(resp, {{"oldestResourceVersion", std::to_string(ctx.store.oldest_rv())}});
    } else if (p.size() == 5 && p[0] == "namespaces" && p[2] == "pods") {
        pod_action(ctx, p[1], p[3], p[4], body, resp);
    } else {
        send_status(resp, 404, "NotFound", "unknown control endpoint " + request.getURI());
    }
}

}  // namespace kubesim
