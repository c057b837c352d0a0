#include "test/kube/test_api_server.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/StreamCopier.h>
#include <Poco/TemporaryFile.h>
#include <nlohmann/json.hpp>

#include "runner/kube/http_kube_api.h"
#include "test/fakes/fake_clock.h"

namespace envgate::test {
namespace {

class CannedHandler : public Poco::Net::HTTPRequestHandler {
  public:
    explicit CannedHandler(std::shared_ptr<TestApiServer::Shared> shared)
        : m_shared(std::move(shared)) {}

    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        SeenRequest seen;
        seen.method = request.getMethod();
        seen.uri = request.getURI();
        seen.authorization = request.get("Authorization", "");
        seen.content_type = request.getContentType();
        Poco::StreamCopier::copyToString(request.stream(), seen.body);
        seen.client_port = request.clientAddress().port();
        for (const auto& [name, value] : request) {
            seen.headers.emplace_back(name, value);
        }
        CannedResponse canned = m_shared->next(std::move(seen));
        response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(canned.status));
        response.setContentType("application/json");
        for (const auto& [name, value] : canned.headers) {
            response.set(name, value);
        }
        if (canned.chunks.empty()) {
            response.sendBuffer(canned.body.data(), canned.body.size());
            return;
        }
        response.setChunkedTransferEncoding(true);
        std::ostream& out = response.send();
        for (const auto& chunk : canned.chunks) {
            out << chunk;
            out.flush();
        }
        while (canned.hold_open && !m_shared->stopping.load() && out.good()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a silent watch
        }
    }

  private:
    std::shared_ptr<TestApiServer::Shared> m_shared;
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
  public:
    explicit Factory(std::shared_ptr<TestApiServer::Shared> shared) : m_shared(std::move(shared)) {}
    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest&) override {
        return new CannedHandler(m_shared);
    }

  private:
    std::shared_ptr<TestApiServer::Shared> m_shared;
};

void run(const std::string& command) {
    if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
        throw std::runtime_error("failed: " + command);
    }
}

}  // namespace

TestApiServer::TestApiServer(std::optional<ServerTls> tls) : m_tls(tls.has_value()) {
    Poco::Net::SocketAddress address("127.0.0.1", 0);
    std::unique_ptr<Poco::Net::ServerSocket> socket;
    if (tls) {
        Poco::Net::initializeSSL();
        using Poco::Net::Context;
        const auto mode =
            tls->client_ca_file.empty() ? Context::VERIFY_NONE : Context::VERIFY_STRICT;
        Context::Ptr context = new Context(Context::SERVER_USE, tls->key_file, tls->cert_file,
                                           tls->client_ca_file, mode);
        // OpenSSL refuses to verify clients without a session id context, and Poco would
        // match the client certificate's name against the client's address.
        context->enableSessionCache(true, "envgate-test");
        context->enableExtendedCertificateVerification(false);
        socket = std::make_unique<Poco::Net::SecureServerSocket>(address, 64, context);
    } else {
        socket = std::make_unique<Poco::Net::ServerSocket>(address);
    }
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(4);
    params->setKeepAlive(true);
    m_server = std::make_unique<Poco::Net::HTTPServer>(new Factory(m_shared), *socket, params);
    m_server->start();
}

TestApiServer::~TestApiServer() {
    m_shared->stopping = true;
    m_server->stopAll(true);
}

std::string TestApiServer::url() const {
    return std::string(m_tls ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(m_server->port());
}

void TestApiServer::push(CannedResponse response) {
    std::lock_guard lock(m_shared->mutex);
    m_shared->queue.push_back(std::move(response));
}

std::vector<SeenRequest> TestApiServer::requests() const {
    std::lock_guard lock(m_shared->mutex);
    return m_shared->seen;
}

CannedResponse TestApiServer::Shared::next(SeenRequest request) {
    std::lock_guard lock(mutex);
    seen.push_back(std::move(request));
    if (queue.empty()) {
        return {
            500, status_body(500, "InternalError", "test server: no canned response left"), {}, {}};
    }
    CannedResponse out = std::move(queue.front());
    queue.pop_front();
    return out;
}

TestPki::TestPki() {
    dir = Poco::TemporaryFile::tempName() + "-pki";
    std::filesystem::create_directories(dir);
    ca_cert = dir + "/ca.crt";
    ca_key = dir + "/ca.key";
    server_cert = dir + "/server.crt";
    server_key = dir + "/server.key";
    client_cert = dir + "/client.crt";
    client_key = dir + "/client.key";
    other_ca_cert = dir + "/other-ca.crt";
    named_cert = dir + "/named.crt";
    named_key = dir + "/named.key";
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(dir + "/server.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    std::ofstream(dir + "/named.ext") << "subjectAltName=DNS:kube.internal\n";
    run("openssl req -x509 " + ec + " -keyout " + ca_key + " -out " + ca_cert +
        " -days 2 -subj /CN=envgate-test-ca");
    run("openssl req -x509 " + ec + " -keyout " + dir + "/other-ca.key -out " + other_ca_cert +
        " -days 2 -subj /CN=envgate-other-ca");
    const std::pair<std::string, std::string> subjects[] = {
        {"server", "127.0.0.1"}, {"client", "envgate-test-user"}, {"named", "kube.internal"}};
    for (const auto& [who, cn] : subjects) {
        const std::string base = dir + "/" + who;
        run("openssl req " + ec + " -keyout " + base + ".key -out " + base +
            ".csr -subj /CN=" + cn);
        run("openssl x509 -req -in " + base + ".csr -CA " + ca_cert + " -CAkey " + ca_key +
            " -CAcreateserial -days 2 -out " + base + ".crt" +
            (who != "client" ? " -extfile " + dir + "/" + who + ".ext" : ""));
    }
}

TestPki::~TestPki() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
}

std::string TestPki::read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

TestPki& shared_pki() {
    static TestPki shared;
    return shared;
}

Result<nlohmann::json> get_test_lease(const kube::RestConfig& config) {
    using namespace std::chrono_literals;
    FakeClock clock(TimePoint(std::chrono::seconds(1'700'000'000)));
    kube::HttpOptions options;
    options.retry = {1ms, 1ms, 2.0, 0.0, 1s, 1};
    auto api = kube::HttpKubeApi::create(config, clock, options);
    if (!api) {
        return api.status();
    }
    return (*api)->get(kube::leases("locks", "envgate-gprd"));
}

std::string status_body(int code, const std::string& reason, const std::string& message) {
    return nlohmann::json{
        {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
        {"status", "Failure"}, {"message", message}, {"reason", reason},
        {"code", code}}
        .dump();
}

}  // namespace envgate::test
