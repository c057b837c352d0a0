// DELETE (DeleteOptions, preconditions as the API server checks them, propagationPolicy
// Orphan, the Status answer for objects gone at once) and the pods/eviction subresource of
// kubesim's REST API.
#include "test/kubesim/api.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/store.h"

namespace kubesim {

using nlohmann::json;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

namespace {

Result<json> parse_body(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        return Status(Code::failed, std::string("invalid JSON body: ") + e.what());
    }
}

Result<DeleteOptions> delete_options(const ApiRequest& req, const std::string& body) {
    DeleteOptions opts;
    json o = json::object();
    if (!body.empty()) {
        TRY_ASSIGN(o, parse_body(body));
    }
    if (o.contains("gracePeriodSeconds")) {
        opts.grace_seconds = o["gracePeriodSeconds"].get<int64_t>();
    } else if (req.query.count("gracePeriodSeconds") != 0) {
        opts.grace_seconds = std::stoll(req.query.at("gracePeriodSeconds"));
    }
    opts.propagation = o.value("propagationPolicy", "");
    if (opts.propagation.empty() && req.query.count("propagationPolicy") != 0) {
        opts.propagation = req.query.at("propagationPolicy");
    }
    if (o.contains("preconditions")) {
        opts.precondition_rv = o["preconditions"].value("resourceVersion", "");
        opts.precondition_uid = o["preconditions"].value("uid", "");
    }
    return opts;
}

void orphan_dependents(Store& store, const std::string& ns, const std::string& uid) {
    auto pods = store.list("pods", ns, nullptr, nullptr);
    for (const auto& pod : pods) {
        const json& meta = pod["metadata"];
        json refs = meta.value("ownerReferences", json::array());
        json kept = json::array();
        for (const auto& r : refs) {
            if (r.value("uid", "") != uid) {
                kept.push_back(r);
            }
        }
        if (kept.size() != refs.size()) {
            (void)store.mutate("pods", ns, meta.value("name", ""), "", [&](json& p) {
                p["metadata"]["ownerReferences"] = kept;
                return Status::ok();
            });
        }
    }
}

// A precondition that does not hold, as the API server answers it: 409 Conflict naming
// the Kind (not the resource) in the message and the details, e.g. `Operation cannot be
// fulfilled on Lease.coordination.k8s.io "x": the ResourceVersion in the precondition
// (212) does not match ...`.
void send_precondition_failed(HTTPServerResponse& resp, const ResourceInfo& info,
                              const std::string& name, const std::string& why) {
    const std::string qualified = info.group.empty() ? info.kind : info.kind + "." + info.group;
    json details = {{"name", name}, {"kind", info.kind}};
    if (!info.group.empty()) {
        details["group"] = info.group;
    }
    send_json(
        resp, 409,
        status_body(409, "Conflict",
                    "Operation cannot be fulfilled on " + qualified + " \"" + name + "\": " + why,
                    details));
}

}  // namespace

void handle_delete_verb(Context& ctx, const ApiRequest& req, HTTPServerRequest& request,
                        HTTPServerResponse& resp) {
    auto opts = delete_options(req, read_body(request));
    if (!opts) {
        send_error(resp, opts.status(), nullptr, "");
        return;
    }
    if (opts->propagation == "Orphan") {
        auto obj = ctx.store.get(req.info->storage, req.ns, req.name);
        if (obj) {
            orphan_dependents(ctx.store, req.ns, (*obj)["metadata"].value("uid", ""));
        }
    }
    auto result = delete_object(ctx.store, req.info->storage, req.ns, req.name, *opts);
    if (!result && result.status().code() == Code::conflict) {
        send_precondition_failed(resp, *req.info, req.name, result.status().message());
        return;
    }
    if (!result) {
        send_error(resp, result.status(), req.info, req.name);
        return;
    }
    bool gone = !ctx.store.get(req.info->storage, req.ns, req.name).is_ok();
    if (gone && req.info->storage != "pods") {
        json details = {{"name", req.name},
                        {"kind", req.info->resource},
                        {"uid", (*result)["metadata"].value("uid", "")}};
        if (!req.info->group.empty()) {
            details["group"] = req.info->group;
        }
        send_json(resp, 200,
                  {{"kind", "Status"},
                   {"apiVersion", "v1"},
                   {"metadata", json::object()},
                   {"status", "Success"},
                   {"details", details}});
        return;
    }
    send_json(resp, 200, to_api(*req.info, *result));
}

void handle_eviction_verb(Context& ctx, const ApiRequest& req, HTTPServerRequest& request,
                          HTTPServerResponse& resp) {
    (void)read_body(request);  // the Eviction object: only its target matters here
    auto result =
        disrupt_pod(ctx.store, req.ns, req.name, "EvictionByEvictionAPI", "Eviction API: evicting");
    if (!result) {
        send_error(resp, result.status(), req.info, req.name);
        return;
    }
    send_json(resp, 201,
              {{"kind", "Status"},
               {"apiVersion", "v1"},
               {"metadata", json::object()},
               {"status", "Success"},
               {"code", 201}});
}

}  // namespace kubesim
