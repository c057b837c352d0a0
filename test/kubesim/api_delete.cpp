// DELETE (DeleteOptions, propagationPolicy Orphan, the Status answer for objects
// gone at once) and the pods/eviction subresource of kubesim's REST API.
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
