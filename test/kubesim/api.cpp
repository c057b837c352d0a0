// kubesim REST verbs: see api.h.
#include "test/kubesim/api.h"

#include <Poco/String.h>

#include <sstream>

#include "test/kubesim/objects.h"
#include "test/kubesim/store.h"
#include "test/kubesim/table.h"

namespace kubesim {

using nlohmann::json;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

namespace {

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> parts;
    std::stringstream ss(path);
    std::string part;
    while (std::getline(ss, part, '/')) {
        if (!part.empty()) {
            parts.push_back(part);
        }
    }
    return parts;
}

std::string verb_of(const std::string& method, bool named, const Query& q) {
    if (method == "GET") {
        return named ? "get" : (query_true(q, "watch") ? "watch" : "list");
    }
    if (method == "POST") {
        return "create";
    }
    if (method == "PUT") {
        return "update";
    }
    if (method == "PATCH") {
        return "patch";
    }
    if (method == "DELETE") {
        return named ? "delete" : "deletecollection";
    }
    return "unknown";
}

Result<json> parse_json(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        return Status(Code::failed, std::string("invalid JSON body: ") + e.what());
    }
}

json from_api(const ResourceInfo& info, const json& obj) {
    return info.group == "events.k8s.io" ? event_from_events_v1(obj) : obj;
}

void handle_get(Context& ctx, const ApiRequest& req, HTTPServerResponse& resp) {
    auto obj = ctx.store.get(req.info->storage, req.ns, req.name);
    if (!obj) {
        send_error(resp, obj.status(), req.info, req.name);
        return;
    }
    if (req.table) {
        send_json(resp, 200, to_table(*req.info, {*obj}, (*obj)["metadata"]["resourceVersion"]));
        return;
    }
    send_json(resp, 200, to_api(*req.info, *obj));
}

void handle_list(Context& ctx, const ApiRequest& req, const Selector& sel,
                 HTTPServerResponse& resp) {
    uint64_t rv = 0;
    auto items = ctx.store.list(
        req.info->storage, req.ns, [&](const json& o) { return selector_matches(sel, o); }, &rv);
    size_t start = 0;
    if (req.query.count("continue") != 0) {
        start = std::stoul("0" + req.query.at("continue"));
    }
    size_t limit = req.query.count("limit") != 0 ? std::stoul("0" + req.query.at("limit")) : 0;
    json meta = {{"resourceVersion", std::to_string(rv)}};
    if (req.table) {
        send_json(resp, 200, to_table(*req.info, items, std::to_string(rv)));
        return;
    }
    json out = json::array();
    for (size_t i = start; i < items.size(); ++i) {
        if (limit != 0 && out.size() == limit) {
            meta["continue"] = std::to_string(i);
            meta["remainingItemCount"] = items.size() - i;
            break;
        }
        out.push_back(to_api(*req.info, items[i]));
    }
    send_json(resp, 200,
              {{"kind", req.info->kind + "List"},
               {"apiVersion", req.info->api_version()},
               {"metadata", meta},
               {"items", out}});
}

void handle_create(Context& ctx, const ApiRequest& req, const std::string& body,
                   HTTPServerResponse& resp) {
    auto parsed = parse_json(body);
    if (!parsed) {
        send_error(resp, parsed.status(), nullptr, "");
        return;
    }
    json obj = from_api(*req.info, *parsed);
    auto fv = req.query.find("fieldValidation");
    bool strict = fv != req.query.end() && fv->second == "Strict";
    const ResourceInfo& storage_info =
        req.info->group == "events.k8s.io" ? *find_resource("", "v1", "events") : *req.info;
    Status st = prepare_create(storage_info, req.ns, strict, obj);
    std::string name = obj.contains("metadata") ? obj["metadata"].value("name", "") : "";
    if (!st.is_ok()) {
        send_error(resp, st, req.info, name);
        return;
    }
    if (query_true(req.query, "dryRun") || req.query.count("dryRun") != 0) {
        send_json(resp, 201, to_api(*req.info, obj));
        return;
    }
    auto created = ctx.store.create(req.info->storage, std::move(obj));
    if (!created) {
        send_error(resp, created.status(), req.info, name);
        return;
    }
    send_json(resp, 201, to_api(*req.info, *created));
}

// Applies `incoming` over `obj` for PUT on the resource or its status subresource.
Status apply_update(const ApiRequest& req, const json& incoming, json& obj) {
    json next = from_api(*req.info, incoming);
    bool has_status = std::find(req.info->subresources.begin(), req.info->subresources.end(),
                                "status") != req.info->subresources.end();
    if (req.sub == "status") {
        json merged = obj;
        merged["status"] = next.value("status", json::object());
        obj = merged;
        return Status::ok();
    }
    if (has_status) {
        next["status"] = obj.value("status", json::object());
    }
    json old = obj;
    next["metadata"]["namespace"] = old["metadata"].value("namespace", "");
    if (old["metadata"].contains("deletionTimestamp")) {
        next["metadata"]["deletionTimestamp"] = old["metadata"]["deletionTimestamp"];
        next["metadata"]["deletionGracePeriodSeconds"] =
            old["metadata"]["deletionGracePeriodSeconds"];
    }
    const ResourceInfo& storage_info =
        req.info->group == "events.k8s.io" ? *find_resource("", "v1", "events") : *req.info;
    TRY(prepare_update(storage_info, old, next));
    obj = next;
    return Status::ok();
}

Result<json> apply_patch(const std::string& content_type, const std::string& body,
                         const ResourceInfo& info, const json& obj) {
    TRY_ASSIGN(json patch, parse_json(body));
    json current = to_api(info, obj);
    try {
        if (content_type.find("json-patch+json") != std::string::npos) {
            return current.patch(patch);
        }
        if (content_type.find("merge-patch+json") != std::string::npos) {
            current.merge_patch(patch);
            return current;
        }
    } catch (const json::exception& e) {
        return Status(Code::invalid, std::string("the server rejected our request due to an "
                                                 "error in our request: ") +
                                         e.what());
    }
    return Status(Code::failed, "the content type " + content_type + " is not supported");
}

void handle_write(Context& ctx, const ApiRequest& req, HTTPServerRequest& request,
                  HTTPServerResponse& resp) {
    std::string body = read_body(request);
    json incoming;
    std::string expected_rv;
    if (req.verb == "update") {
        auto parsed = parse_json(body);
        if (!parsed) {
            send_error(resp, parsed.status(), nullptr, "");
            return;
        }
        incoming = *parsed;
        if (incoming.contains("metadata")) {
            expected_rv = incoming["metadata"].value("resourceVersion", "");
        }
    }
    std::string content_type = request.getContentType();
    auto result =
        ctx.store.mutate(req.info->storage, req.ns, req.name, expected_rv, [&](json& obj) {
            if (req.verb == "update") {
                return apply_update(req, incoming, obj);
            }
            auto patched = apply_patch(content_type, body, *req.info, obj);
            if (!patched) {
                return patched.status();
            }
            std::string rv = (*patched)["metadata"].value("resourceVersion", "");
            if (!rv.empty() && rv != obj["metadata"].value("resourceVersion", "")) {
                return Status(Code::conflict,
                              "Operation cannot be fulfilled on " +
                                  qualified_resource(req.info->storage) + " \"" + req.name +
                                  "\": the object has been modified; please apply your changes to "
                                  "the latest version and try again");
            }
            return apply_update(req, *patched, obj);
        });
    if (!result) {
        send_error(resp, result.status(), req.info, req.name);
        return;
    }
    send_json(resp, 200, to_api(*req.info, *result));
}

}  // namespace

bool client_gone(const ApiRequest& req) {
    if (req.socket == nullptr) {
        return false;
    }
    try {
        return req.socket->poll(Poco::Timespan(0),
                                Poco::Net::Socket::SELECT_READ | Poco::Net::Socket::SELECT_ERROR);
    } catch (const Poco::Exception&) {
        return true;
    }
}

json to_api(const ResourceInfo& info, const json& stored) {
    return info.group == "events.k8s.io" ? event_to_events_v1(stored) : stored;
}

Result<Selector> request_selector(const ApiRequest& req) {
    auto get = [&](const char* k) {
        auto it = req.query.find(k);
        return it == req.query.end() ? std::string() : it->second;
    };
    TRY_ASSIGN(Selector sel, parse_selector(get("labelSelector"), get("fieldSelector")));
    for (auto& f : sel.fields) {
        if (req.info->group == "events.k8s.io") {
            f.key = events_v1_field_to_core(f.key);
        }
        if (f.key == "source" && req.info->storage == "events") {
            f.key = "source.component";
        }
    }
    return sel;
}

std::optional<ApiRequest> parse_api_path(const std::string& path, const std::string& method,
                                         const Query& query) {
    auto parts = split_path(path);
    ApiRequest req;
    req.query = query;
    std::string group;
    size_t i = 0;
    if (parts.size() >= 2 && parts[0] == "api") {
        i = 2;
    } else if (parts.size() >= 3 && parts[0] == "apis") {
        group = parts[1];
        i = 3;
    } else {
        return std::nullopt;
    }
    std::string version = parts[i - 1];
    std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
    if (rest.empty()) {
        return std::nullopt;
    }
    std::string resource;
    if (rest[0] == "namespaces" && rest.size() >= 3) {
        req.ns = rest[1];
        resource = rest[2];
        req.name = rest.size() > 3 ? rest[3] : "";
        req.sub = rest.size() > 4 ? rest[4] : "";
    } else {
        resource = rest[0];
        req.name = rest.size() > 1 ? rest[1] : "";
        req.sub = rest.size() > 2 ? rest[2] : "";
    }
    req.info = find_resource(group, version, resource);
    req.verb = verb_of(method, !req.name.empty(), query);
    if (req.sub == "eviction" && method == "POST") {
        req.verb = "create";
    }
    return req;
}

void handle_api(Context& ctx, const ApiRequest& req, HTTPServerRequest& request,
                HTTPServerResponse& resp) {
    if (req.info == nullptr) {
        (void)read_body(request);
        send_status(resp, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    if (req.sub == "log") {
        serve_log(ctx, req, resp);
        return;
    }
    if (req.sub == "eviction") {
        handle_eviction_verb(ctx, req, request, resp);
        return;
    }
    if (req.verb == "list" || req.verb == "watch") {
        auto sel = request_selector(req);
        if (!sel) {
            send_error(resp, sel.status(), nullptr, "");
            return;
        }
        if (req.verb == "watch") {
            serve_watch(ctx, req, *sel, resp);
        } else {
            handle_list(ctx, req, *sel, resp);
        }
        return;
    }
    if (req.verb == "get") {
        handle_get(ctx, req, resp);
    } else if (req.verb == "create") {
        handle_create(ctx, req, read_body(request), resp);
    } else if (req.verb == "update" || req.verb == "patch") {
        handle_write(ctx, req, request, resp);
    } else if (req.verb == "delete") {
        handle_delete_verb(ctx, req, request, resp);
    } else {
        send_status(resp, 405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource");
    }
}

}  // namespace kubesim
