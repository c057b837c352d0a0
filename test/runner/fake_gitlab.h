// A tiny stand-in for the GitLab API in unit tests: a Poco HTTP(S) server on
// 127.0.0.1 that answers each request URI with a canned status and body (404 "Not
// found" when none is set) and records what it was asked, with the PRIVATE-TOKEN sent.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/HTTPServer.h>

namespace envgate::test {

struct GitLabRequest {
    std::string uri;
    std::string private_token;
    std::string authorization;
    std::string job_token;  // the JOB-TOKEN header
};

class FakeGitLab {
  public:
    // With `tls`, serves https with that certificate and key.
    explicit FakeGitLab(std::optional<std::pair<std::string, std::string>> tls = std::nullopt);
    ~FakeGitLab();
    FakeGitLab(const FakeGitLab&) = delete;
    FakeGitLab& operator=(const FakeGitLab&) = delete;

    std::string url() const;  // "http(s)://127.0.0.1:<port>"
    void answer(const std::string& uri, int status, std::string body);
    // The member answer GitLab gives for user `id` (state "active" unless told).
    static std::string member_body(long id, const std::string& state = "active");
    // GitLab's answer to GET /api/v4/job for a job run by `username` (user `id`).
    static std::string job_body(const std::string& username, long id);
    std::vector<GitLabRequest> requests() const;

    struct Shared {
        mutable std::mutex mutex;
        std::map<std::string, std::pair<int, std::string>> answers;
        std::vector<GitLabRequest> seen;
    };

  private:
    std::shared_ptr<Shared> m_shared = std::make_shared<Shared>();
    std::unique_ptr<Poco::Net::HTTPServer> m_server;
    bool m_tls = false;
};

}  // namespace envgate::test
