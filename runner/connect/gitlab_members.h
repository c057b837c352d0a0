// Group membership for `envgate unlock` in CI: whether a GitLab user is an active
// member of a group (directly, through an ancestor group or an invited group), asked
// of the GitLab API (GET /groups/:path/members/all/:user_id). Behind a small
// interface so the unlock rule is tested without GitLab.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate {

// The user a CI job runs as, as GitLab knows it.
struct JobUser {
    std::string username;
    std::int64_t id = 0;
};

class GroupMembers {
  public:
    virtual ~GroupMembers() = default;
    // Who runs the CI job whose CI_JOB_TOKEN is `job_token` (GET /api/v4/job with the
    // JOB-TOKEN header): GitLab's word, where GITLAB_USER_LOGIN is only the job's own.
    virtual Result<JobUser> job_user(const std::string& job_token) = 0;
    // Whether user `user_id` is an active member of group `group_path` ("sre-oncall",
    // "gitlab-org/sre"). A Status when GitLab cannot tell us (the caller fails closed).
    virtual Result<bool> is_member(const std::string& group_path, std::int64_t user_id) = 0;
    // The server's JSON Web Key Set, which verifies its ID tokens (GET
    // /oauth/discovery/keys, no credential sent): the body of a 200, else a Status.
    virtual Result<std::string> signing_keys() = 0;
};

struct GitLabSettings {
    std::string server_url;  // envgate.yml's gitlab.url, e.g. https://gitlab.example.com
    std::string token;       // ENVGATE_GITLAB_TOKEN (read_api scope); never printed
    std::string ca_file;     // envgate.yml's gitlab.ca_file, optional: verify the server with it
    Duration timeout = std::chrono::seconds(15);
};

// The GitLab API client. https is verified (the system CAs, or `ca_file`); plain http
// is accepted only to a loopback address, so the token never crosses a network bare.
// `invalid` for a bad URL or CA file. REQUIRES: `settings` come from envgate.yml, never
// from a job variable (a job can point those at a server of its own).
Result<std::unique_ptr<GroupMembers>> make_gitlab_members(const GitLabSettings& settings);

// "/api/v4/groups/<group_path, URL-encoded>/members/all/<user_id>" ("a/b" -> "a%2Fb").
std::string group_member_path(const std::string& group_path, std::int64_t user_id);

// What GitLab's answer means. 200 with `state` "active" (and `membership_state`, when
// present, "active"): a member; 200 otherwise, or 404 "Not found": not a member; 404
// "Group Not Found" and any other status: an error naming `request` and the status.
// `secret` is masked out of any text taken from the body.
Result<bool> membership_from_reply(int status, const std::string& reason, const std::string& body,
                                   const std::string& request, std::int64_t user_id,
                                   const std::string& secret);

// What GitLab's answer to GET /api/v4/job means: 200 with user.username and user.id, or
// an error naming `request` and the status (`secret` masked out of the body's text).
Result<JobUser> job_user_from_reply(int status, const std::string& reason, const std::string& body,
                                    const std::string& request, const std::string& secret);

}  // namespace envgate
