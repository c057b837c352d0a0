#include "runner/connect/gitlab_members.h"

#include <cctype>
#include <cstdio>
#include <mutex>

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <nlohmann/json.hpp>

#include "runner/base/http_status.h"
#include "runner/base/secrets.h"

namespace envgate {
namespace {

using nlohmann::json;

bool is_loopback(const std::string& host) {
    return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

// GitLab's own words ({"message": "401 Unauthorized"}) when they add to the status line.
std::string body_message(const std::string& body, const std::string& status_line) {
    json j = json::parse(body, nullptr, false);
    if (!j.is_object() || !j.contains("message")) {
        return {};
    }
    std::string message =
        j["message"].is_string() ? j["message"].get<std::string>() : j["message"].dump();
    if (message.size() > 200) {
        message = message.substr(0, 200) + "...";
    }
    return message == status_line ? std::string() : ": " + message;
}

std::string string_or_empty(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

class GitLabMembers : public GroupMembers {
  public:
    GitLabMembers(GitLabSettings settings, Poco::URI uri, Poco::Net::Context::Ptr context)
        : m_settings(std::move(settings)), m_uri(std::move(uri)), m_context(std::move(context)) {
        m_prefix = m_uri.getPath();
        while (!m_prefix.empty() && m_prefix.back() == '/') {
            m_prefix.pop_back();
        }
    }

    Result<bool> is_member(const std::string& group_path, std::int64_t user_id) override {
        const std::string path = m_prefix + group_member_path(group_path, user_id);
        TRY_ASSIGN(Reply reply, get(path, "PRIVATE-TOKEN", m_settings.token));
        return membership_from_reply(reply.status, reply.reason, reply.body, reply.request, user_id,
                                     m_settings.token);
    }

    Result<JobUser> job_user(const std::string& job_token) override {
        TRY_ASSIGN(Reply reply, get(m_prefix + "/api/v4/job", "JOB-TOKEN", job_token));
        return job_user_from_reply(reply.status, reply.reason, reply.body, reply.request,
                                   job_token);
    }

    Result<std::string> signing_keys() override {
        TRY_ASSIGN(Reply reply, get(m_prefix + "/oauth/discovery/keys", nullptr, ""));
        if (reply.status != 200) {
            const std::string status_line = std::to_string(reply.status) + " " + reply.reason;
            return Status(
                code_for_http_status(reply.status),
                reply.request + ": " + status_line + body_message(reply.body, status_line));
        }
        return reply.body;
    }

  private:
    struct Reply {
        int status = 0;
        std::string reason;
        std::string body;
        std::string request;
    };

    // GET `path` with the credential header `header: secret` (none when `header` is
    // null); `secret` is masked out of any error text.
    Result<Reply> get(const std::string& path, const char* header, const std::string& secret) {
        Reply reply;
        reply.request = "GET " + m_uri.getScheme() + "://" + m_uri.getAuthority() + path;
        try {
            auto session = open_session();
            Poco::Net::HTTPRequest get(Poco::Net::HTTPRequest::HTTP_GET, path,
                                       Poco::Net::HTTPMessage::HTTP_1_1);
            if (header != nullptr) {
                get.set(header, secret);
            }
            get.set("Accept", "application/json");
            get.set("User-Agent", "envgate");
            session->sendRequest(get);
            Poco::Net::HTTPResponse response;
            std::istream& in = session->receiveResponse(response);
            Poco::StreamCopier::copyToString(in, reply.body);
            reply.status = response.getStatus();
            // The standard reason: proxies and HTTP/2 may send none.
            reply.reason = Poco::Net::HTTPResponse::getReasonForStatus(response.getStatus());
            return reply;
        } catch (const Poco::Exception& e) {
            return Status(Code::transient,
                          reply.request + ": " + replace_secret(e.displayText(), secret));
        }
    }

    std::unique_ptr<Poco::Net::HTTPClientSession> open_session() const {
        std::unique_ptr<Poco::Net::HTTPClientSession> session;
        if (m_context) {
            session = std::make_unique<Poco::Net::HTTPSClientSession>(m_uri.getHost(),
                                                                      m_uri.getPort(), m_context);
        } else {
            session =
                std::make_unique<Poco::Net::HTTPClientSession>(m_uri.getHost(), m_uri.getPort());
        }
        session->setTimeout(Poco::Timespan(m_settings.timeout.count()));
        return session;
    }

    GitLabSettings m_settings;
    Poco::URI m_uri;
    Poco::Net::Context::Ptr m_context;  // null: plain http to a loopback address
    std::string m_prefix;               // a GitLab under a relative URL: "/gitlab"
};

Result<Poco::Net::Context::Ptr> tls_context(const GitLabSettings& s) {
    static std::once_flag once;
    std::call_once(once, [] { Poco::Net::initializeSSL(); });
    using Poco::Net::Context;
    try {
        Context::Params params;
        params.verificationMode = Context::VERIFY_STRICT;
        params.caLocation = s.ca_file;
        params.loadDefaultCAs = s.ca_file.empty();
        return Context::Ptr(new Context(Context::TLS_CLIENT_USE, params));
    } catch (const Poco::Exception& e) {
        return Status(Code::invalid,
                      "gitlab.ca_file " + s.ca_file + ": cannot use it: " + e.displayText());
    }
}

}  // namespace

std::string group_member_path(const std::string& group_path, std::int64_t user_id) {
    std::string encoded;
    for (unsigned char c : group_path) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
            encoded += static_cast<char>(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof(hex), "%%%02X", c);
            encoded += hex;
        }
    }
    return "/api/v4/groups/" + encoded + "/members/all/" + std::to_string(user_id);
}

Result<bool> membership_from_reply(int status, const std::string& reason, const std::string& body,
                                   const std::string& request, std::int64_t user_id,
                                   const std::string& secret) {
    const std::string status_line = std::to_string(status) + " " + reason;
    const std::string said = replace_secret(body_message(body, status_line), secret);
    if (status == 404 && said.find("Group Not Found") != std::string::npos) {
        return Status(Code::not_found, request + ": " + status_line + said +
                                           " (no such group, or the token cannot see it)");
    }
    if (status == 404) {
        return false;
    }
    if (status != 200) {
        return Status(code_for_http_status(status), request + ": " + status_line + said);
    }
    json member = json::parse(body, nullptr, false);
    if (!member.is_object()) {
        return Status(Code::failed, request + ": 200 but the answer is not a JSON object");
    }
    if (member.contains("id") && member["id"] != user_id) {
        return Status(Code::failed, request + ": the answer is about user " + member["id"].dump() +
                                        ", not " + std::to_string(user_id));
    }
    std::string membership = string_or_empty(member, "membership_state");
    return string_or_empty(member, "state") == "active" &&
           (membership.empty() || membership == "active");
}

Result<JobUser> job_user_from_reply(int status, const std::string& reason, const std::string& body,
                                    const std::string& request, const std::string& secret) {
    const std::string status_line = std::to_string(status) + " " + reason;
    if (status != 200) {
        return Status(
            code_for_http_status(status),
            request + ": " + status_line + replace_secret(body_message(body, status_line), secret));
    }
    json job = json::parse(body, nullptr, false);
    const json* user = job.is_object() && job.contains("user") ? &job["user"] : nullptr;
    if (user == nullptr || !user->is_object() || !(*user)["id"].is_number_integer() ||
        string_or_empty(*user, "username").empty()) {
        return Status(Code::failed, request +
                                        ": 200 but the answer names no user (user.username, "
                                        "user.id)");
    }
    return JobUser{string_or_empty(*user, "username"), (*user)["id"].get<std::int64_t>()};
}

Result<std::unique_ptr<GroupMembers>> make_gitlab_members(const GitLabSettings& settings) {
    Poco::URI uri;
    try {
        uri = Poco::URI(settings.server_url);
    } catch (const Poco::Exception& e) {
        return Status(Code::invalid,
                      "gitlab.url \"" + settings.server_url + "\": " + e.displayText());
    }
    const std::string scheme = uri.getScheme();
    if ((scheme != "https" && scheme != "http") || uri.getHost().empty()) {
        return Status(Code::invalid,
                      "gitlab.url \"" + settings.server_url + "\" is not an http(s) URL");
    }
    if (scheme == "http" && !is_loopback(uri.getHost())) {
        return Status(Code::invalid, "gitlab.url \"" + settings.server_url +
                                         "\" is plain http: envgate sends the GitLab token "
                                         "only over https (or to a loopback address)");
    }
    Poco::Net::Context::Ptr context;
    if (scheme == "https") {
        TRY_ASSIGN(context, tls_context(settings));
    }
    return std::unique_ptr<GroupMembers>(
        std::make_unique<GitLabMembers>(settings, std::move(uri), std::move(context)));
}

}  // namespace envgate
