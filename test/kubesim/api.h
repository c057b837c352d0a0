// The Kubernetes REST API of kubesim: path routing and the verbs get, list, watch,
// create, update, patch and delete on the served resources and subresources.
#pragma once

#include <optional>
#include <string>

#include <Poco/Net/StreamSocket.h>

#include "test/kubesim/http_util.h"
#include "test/kubesim/selectors.h"

namespace kubesim {

struct ApiRequest {
    const ResourceInfo* info = nullptr;
    std::string ns;
    std::string name;
    std::string sub;   // "", "status", "log", "eviction"
    std::string verb;  // get, list, watch, create, update, patch, delete, deletecollection
    Query query;
    bool table = false;  // the client asked for a meta.k8s.io Table
    // The connection, so long streams notice a client that went away.
    Poco::Net::StreamSocket* socket = nullptr;
};

// Parses "/api/v1/namespaces/NS/pods/NAME/log" and friends. nullopt when the path is
// not a resource path; a request with info == nullptr names an unknown resource.
std::optional<ApiRequest> parse_api_path(const std::string& path, const std::string& method,
                                         const Query& query);
void handle_api(Context& ctx, const ApiRequest& req, Poco::Net::HTTPServerRequest& request,
                Poco::Net::HTTPServerResponse& response);
// DELETE of one object and POST pods/NAME/eviction (api_delete.cpp).
void handle_delete_verb(Context& ctx, const ApiRequest& req, Poco::Net::HTTPServerRequest& request,
                        Poco::Net::HTTPServerResponse& response);
void handle_eviction_verb(Context& ctx, const ApiRequest& req,
                          Poco::Net::HTTPServerRequest& request,
                          Poco::Net::HTTPServerResponse& response);
// Streams watch events (watch.cpp).
void serve_watch(Context& ctx, const ApiRequest& req, const Selector& selector,
                 Poco::Net::HTTPServerResponse& response);
// Streams or returns a container log (pods/NAME/log, logs.cpp).
void serve_log(Context& ctx, const ApiRequest& req, Poco::Net::HTTPServerResponse& response);
// True when the client of a streaming request closed its side (it sends nothing else).
bool client_gone(const ApiRequest& req);
// The object as the API of `info` shows it (events.k8s.io conversion).
nlohmann::json to_api(const ResourceInfo& info, const nlohmann::json& stored);
// The selector of a list/watch request, with events.k8s.io field names converted.
envgate::Result<Selector> request_selector(const ApiRequest& req);

}  // namespace kubesim
