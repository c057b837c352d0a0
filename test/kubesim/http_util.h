// Small helpers shared by kubesim's HTTP handlers: metav1.Status bodies with the
// API server's code/reason/details, JSON responses, and the request context.
#pragma once

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/base/vocab/status.h"
#include "test/kubesim/resources.h"

namespace kubesim {

class Store;
class Faults;
class Kubelet;

struct Options {
    int port = 0;
    std::string kubeconfig;
    bool tls = false;
    double time_scale = 1.0;
    size_t history = 10000;
    int bookmark_ms = 1000;
    std::string workdir;
    std::string token;  // empty: no authentication
};

// What every handler may use. Owned by the server.
struct Context {
    Store& store;
    Faults& faults;
    Kubelet& kubelet;
    Options options;
    std::string server_address;  // "127.0.0.1:PORT"
    std::atomic<uint64_t> watch_generation{0};
    std::atomic<bool> stopping{false};
};

using Query = std::map<std::string, std::string>;

// A metav1.Status failure body.
nlohmann::json status_body(int code, const std::string& reason, const std::string& message,
                           const nlohmann::json& details = nullptr);
// The HTTP code and reason for an envgate::Status from the store or validation.
int http_code_of(const envgate::Status& st, std::string* reason);
// Sends `st` as a metav1.Status with details naming `name` of `info`.
void send_error(Poco::Net::HTTPServerResponse& resp, const envgate::Status& st,
                const ResourceInfo* info, const std::string& name);
void send_status(Poco::Net::HTTPServerResponse& resp, int code, const std::string& reason,
                 const std::string& message);
void send_json(Poco::Net::HTTPServerResponse& resp, int code, const nlohmann::json& body);
std::string read_body(Poco::Net::HTTPServerRequest& req);
Query parse_query(const std::string& uri);
bool query_true(const Query& q, const std::string& key);

}  // namespace kubesim
