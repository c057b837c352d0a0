// kubesim HTTP server: see server.h.
#include "test/kubesim/server.h"

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/ThreadPool.h>
#include <Poco/URI.h>

#include <thread>

#include "test/kubesim/api.h"
#include "test/kubesim/control.h"
#include "test/kubesim/faults.h"
#include "test/kubesim/store.h"
#include "test/kubesim/table.h"

namespace kubesim {

using nlohmann::json;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

namespace {

bool serve_discovery(Context& ctx, const std::string& path, HTTPServerResponse& resp) {
    if (path == "/version") {
        send_json(resp, 200, version_document());
    } else if (path == "/api") {
        send_json(resp, 200, api_versions_document(ctx.server_address));
    } else if (path == "/apis") {
        send_json(resp, 200, api_group_list_document());
    } else if (path == "/openapi/v3") {
        send_json(resp, 200, openapi_index_document());
    } else if (path.rfind("/openapi/v3/", 0) == 0) {
        auto doc = openapi_group_document(path.substr(12));
        if (!doc) {
            send_status(resp, 404, "NotFound", "the server could not find the requested resource");
        } else {
            send_json(resp, 200, *doc);
        }
    } else if (path == "/healthz" || path == "/livez" || path == "/readyz") {
        resp.setContentType("text/plain");
        resp.send() << "ok";
    } else if (path == "/api/v1" ||
               (path.rfind("/apis/", 0) == 0 && std::count(path.begin(), path.end(), '/') == 3)) {
        auto doc = resource_list_document(path == "/api/v1" ? "v1" : path.substr(6));
        if (!doc) {
            send_status(resp, 404, "NotFound", "the server could not find the requested resource");
        } else {
            send_json(resp, 200, *doc);
        }
    } else {
        return false;
    }
    return true;
}

// Applies delay/reset/fail rules; true when the request was answered (or dropped).
bool apply_faults(Context& ctx, const ApiRequest& req, HTTPServerRequest& request,
                  HTTPServerResponse& resp) {
    std::string resource = req.info != nullptr ? req.info->resource : "";
    if (!req.sub.empty()) {
        resource += "/" + req.sub;
    }
    ctx.faults.count(req.verb, resource);
    for (const auto& rule : ctx.faults.take(req.verb, resource)) {
        if (rule.action == "delay") {
            std::this_thread::sleep_for(std::chrono::milliseconds(rule.delay_ms));
        } else if (rule.action == "reset") {
            auto& impl = dynamic_cast<Poco::Net::HTTPServerRequestImpl&>(request);
            impl.socket().setLinger(true, 0);
            impl.socket().close();
            return true;
        } else if (rule.action == "fail") {
            (void)read_body(request);  // keep the kept-alive connection in step
            json details = nullptr;
            if (rule.retry_after > 0) {
                resp.set("Retry-After", std::to_string(rule.retry_after));
                details = {{"retryAfterSeconds", rule.retry_after}};
            }
            std::string msg = rule.code == 429 ? "Too many requests, please try again later."
                                               : "kubesim: injected fault";
            send_json(resp, rule.code,
                      status_body(rule.code, reason_for_code(rule.code), msg, details));
            return true;
        }
    }
    return false;
}

class Handler : public Poco::Net::HTTPRequestHandler {
  public:
    explicit Handler(Context& ctx) : m_ctx(ctx) {}

    void handleRequest(HTTPServerRequest& request, HTTPServerResponse& resp) override {
        try {
            handle(request, resp);
        } catch (const Poco::Exception& e) {
            if (!resp.sent()) {
                send_status(resp, 500, "InternalError", "kubesim: " + e.displayText());
            }
        } catch (const std::exception& e) {
            if (!resp.sent()) {
                send_status(resp, 500, "InternalError", std::string("kubesim: ") + e.what());
            }
        }
    }

  private:
    void handle(HTTPServerRequest& request, HTTPServerResponse& resp) {
        if (!m_ctx.options.token.empty() &&
            request.get("Authorization", "") != "Bearer " + m_ctx.options.token) {
            (void)read_body(request);
            send_status(resp, 401, "Unauthorized", "Unauthorized");
            return;
        }
        Poco::URI uri(request.getURI());
        const std::string& path = uri.getPath();
        if (path.rfind("/kubesim/v1/", 0) == 0) {
            handle_control(m_ctx, request, resp);
            return;
        }
        if (request.getMethod() == "GET" && serve_discovery(m_ctx, path, resp)) {
            return;
        }
        auto req = parse_api_path(path, request.getMethod(), parse_query(request.getURI()));
        if (!req) {
            (void)read_body(request);
            send_status(resp, 404, "NotFound", "the server could not find the requested resource");
            return;
        }
        req->table = wants_table(request.get("Accept", ""));
        req->socket = &dynamic_cast<Poco::Net::HTTPServerRequestImpl&>(request).socket();
        if (apply_faults(m_ctx, *req, request, resp)) {
            return;
        }
        handle_api(m_ctx, *req, request, resp);
    }

    Context& m_ctx;
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
  public:
    explicit Factory(Context& ctx) : m_ctx(ctx) {}
    Poco::Net::HTTPRequestHandler* createRequestHandler(const HTTPServerRequest&) override {
        return new Handler(m_ctx);
    }

  private:
    Context& m_ctx;
};

Poco::ThreadPool& server_pool() {
    static Poco::ThreadPool pool(4, 512, 60);
    return pool;
}

}  // namespace

Server::Server(Context& ctx) : m_ctx(ctx) {}

Server::~Server() {
    stop();
}

Result<int> Server::start(int port, const TlsFiles* tls) {
    try {
        Poco::Net::SocketAddress addr("127.0.0.1", static_cast<Poco::UInt16>(port));
        std::unique_ptr<Poco::Net::ServerSocket> socket;
        if (tls != nullptr) {
            Poco::Net::Context::Ptr context =
                new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, tls->server_key,
                                       tls->server_cert, "", Poco::Net::Context::VERIFY_NONE);
            socket = std::make_unique<Poco::Net::SecureServerSocket>(addr, 256, context);
        } else {
            socket = std::make_unique<Poco::Net::ServerSocket>(addr, 256);
        }
        int bound = socket->address().port();
        auto* params = new Poco::Net::HTTPServerParams;
        params->setMaxThreads(500);
        params->setMaxQueued(1000);
        params->setKeepAlive(true);
        params->setMaxKeepAliveRequests(0);
        params->setKeepAliveTimeout(Poco::Timespan(120, 0));
        params->setTimeout(Poco::Timespan(3600, 0));
        m_server = std::make_unique<Poco::Net::HTTPServer>(new Factory(m_ctx), server_pool(),
                                                           *socket, params);
        m_server->start();
        return bound;
    } catch (const Poco::Exception& e) {
        return Status(Code::io,
                      "cannot serve on 127.0.0.1:" + std::to_string(port) + ": " + e.displayText());
    }
}

void Server::stop() {
    if (m_server) {
        m_server->stopAll(true);
        m_server.reset();
    }
}

}  // namespace kubesim
