#include "test/runner/fake_gitlab.h"

#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <nlohmann/json.hpp>

namespace envgate::test {
namespace {

class Handler : public Poco::Net::HTTPRequestHandler {
  public:
    explicit Handler(std::shared_ptr<FakeGitLab::Shared> shared) : m_shared(std::move(shared)) {}

    void handleRequest(Poco::Net::HTTPServerRequest& request,
                       Poco::Net::HTTPServerResponse& response) override {
        std::pair<int, std::string> reply{404, R"({"message":"404 Not found"})"};
        {
            std::lock_guard lock(m_shared->mutex);
            m_shared->seen.push_back({request.getURI(), request.get("PRIVATE-TOKEN", ""),
                                      request.get("Authorization", ""),
                                      request.get("JOB-TOKEN", "")});
            auto it = m_shared->answers.find(request.getURI());
            if (it != m_shared->answers.end()) {
                reply = it->second;
            }
        }
        response.setStatusAndReason(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(reply.first));
        response.setContentType("application/json");
        response.sendBuffer(reply.second.data(), reply.second.size());
    }

  private:
    std::shared_ptr<FakeGitLab::Shared> m_shared;
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
  public:
    explicit Factory(std::shared_ptr<FakeGitLab::Shared> shared) : m_shared(std::move(shared)) {}
    Poco::Net::HTTPRequestHandler* createRequestHandler(
        const Poco::Net::HTTPServerRequest&) override {
        return new Handler(m_shared);
    }

  private:
    std::shared_ptr<FakeGitLab::Shared> m_shared;
};

}  // namespace

FakeGitLab::FakeGitLab(std::optional<std::pair<std::string, std::string>> tls)
    : m_tls(tls.has_value()) {
    Poco::Net::SocketAddress address("127.0.0.1", 0);
    std::unique_ptr<Poco::Net::ServerSocket> socket;
    if (tls) {
        Poco::Net::initializeSSL();
        using Poco::Net::Context;
        Context::Ptr context =
            new Context(Context::SERVER_USE, tls->second, tls->first, "", Context::VERIFY_NONE);
        socket = std::make_unique<Poco::Net::SecureServerSocket>(address, 64, context);
    } else {
        socket = std::make_unique<Poco::Net::ServerSocket>(address);
    }
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(2);
    m_server = std::make_unique<Poco::Net::HTTPServer>(new Factory(m_shared), *socket, params);
    m_server->start();
}

FakeGitLab::~FakeGitLab() {
    m_server->stopAll(true);
}

std::string FakeGitLab::url() const {
    return std::string(m_tls ? "https" : "http") +
           "://127.0.0.1:" + std::to_string(m_server->port());
}

void FakeGitLab::answer(const std::string& uri, int status, std::string body) {
    std::lock_guard lock(m_shared->mutex);
    m_shared->answers[uri] = {status, std::move(body)};
}

std::string FakeGitLab::member_body(long id, const std::string& state) {
    // The shape of GET /groups/:id/members/all/:user_id in GitLab's members API docs.
    return nlohmann::json{{"id", id},
                          {"username", "bob"},
                          {"name", "Bob"},
                          {"state", state},
                          {"access_level", 30},
                          {"expires_at", nullptr},
                          {"membership_state", "active"}}
        .dump();
}

std::string FakeGitLab::job_body(const std::string& username, long id) {
    // The shape of GET /api/v4/job (the job of the CI_JOB_TOKEN) in GitLab's jobs API docs.
    return nlohmann::json{{"id", 1302},
                          {"status", "running"},
                          {"stage", "deploy"},
                          {"name", "envgate-unlock-staging"},
                          {"user", {{"id", id}, {"username", username}, {"state", "active"}}}}
        .dump();
}

std::vector<GitLabRequest> FakeGitLab::requests() const {
    std::lock_guard lock(m_shared->mutex);
    return m_shared->seen;
}

}  // namespace envgate::test
