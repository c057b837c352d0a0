// HTTP helpers: see http_util.h.
#include "test/kubesim/http_util.h"

#include <Poco/StreamCopier.h>
#include <Poco/URI.h>

#include <sstream>

namespace kubesim {

using nlohmann::json;

json status_body(int code, const std::string& reason, const std::string& message,
                 const json& details) {
    json body = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
    if (!details.is_null()) {
        body["details"] = details;
    }
    return body;
}

int http_code_of(const envgate::Status& st, std::string* reason) {
    struct Row {
        envgate::Code code;
        int http;
        const char* reason;
    };
    static const Row k_rows[] = {
        {envgate::Code::not_found, 404, "NotFound"},
        {envgate::Code::already_exists, 409, "AlreadyExists"},
        {envgate::Code::conflict, 409, "Conflict"},
        {envgate::Code::gone, 410, "Gone"},
        {envgate::Code::invalid, 422, "Invalid"},
        {envgate::Code::unauthorized, 401, "Unauthorized"},
        {envgate::Code::forbidden, 403, "Forbidden"},
        {envgate::Code::failed, 400, "BadRequest"},
        {envgate::Code::timeout, 504, "Timeout"},
    };
    for (const auto& row : k_rows) {
        if (row.code == st.code()) {
            *reason = row.reason;
            return row.http;
        }
    }
    *reason = "InternalError";
    return 500;
}

void send_error(Poco::Net::HTTPServerResponse& resp, const envgate::Status& st,
                const ResourceInfo* info, const std::string& name) {
    std::string reason;
    int code = http_code_of(st, &reason);
    json details = nullptr;
    if (info != nullptr && code != 400) {
        details = {{"name", name}, {"kind", code == 422 ? info->kind : info->resource}};
        if (!info->group.empty()) {
            details["group"] = info->group;
        }
    }
    send_json(resp, code, status_body(code, reason, st.message(), details));
}

void send_status(Poco::Net::HTTPServerResponse& resp, int code, const std::string& reason,
                 const std::string& message) {
    send_json(resp, code, status_body(code, reason, message));
}

void send_json(Poco::Net::HTTPServerResponse& resp, int code, const json& body) {
    std::string text = body.dump();
    resp.setStatusAndReason(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(code));
    resp.setContentType("application/json");
    resp.setContentLength(static_cast<std::streamsize>(text.size()));
    resp.send() << text;
}

std::string read_body(Poco::Net::HTTPServerRequest& req) {
    std::string body;
    Poco::StreamCopier::copyToString(req.stream(), body);
    return body;
}

Query parse_query(const std::string& uri) {
    Query q;
    for (auto& [k, v] : Poco::URI(uri).getQueryParameters()) {
        q[k] = v;
    }
    return q;
}

bool query_true(const Query& q, const std::string& key) {
    auto it = q.find(key);
    return it != q.end() && (it->second == "1" || it->second == "true");
}

}  // namespace kubesim
