// Given a local stand-in for the GitLab API, then the group-membership client asks
// GET /api/v4/groups/<URL-encoded path>/members/all/<user id> with the PRIVATE-TOKEN
// header, reads an active member as a member and 404 as not one, turns every other
// answer into an error naming the request and the HTTP status (never the token), and
// sends the token only over verified TLS or to a loopback address.
#include <boost/test/unit_test.hpp>

#include "runner/connect/gitlab_members.h"
#include "test/kube/test_api_server.h"
#include "test/runner/fake_gitlab.h"

using namespace envgate;

namespace {

const std::string k_token = "glpat-s3cr3t-t0ken";
const std::string k_sre = "/api/v4/groups/gitlab-org%2Fsre/members/all/42";

std::unique_ptr<GroupMembers> client(const std::string& url, const std::string& ca_file = {}) {
    auto made = make_gitlab_members({url, k_token, ca_file, std::chrono::seconds(5)});
    BOOST_REQUIRE_MESSAGE(made.is_ok(), test::why(made));
    return std::move(made.value());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gitlab_members_suite)

BOOST_AUTO_TEST_CASE(asks_members_all_with_the_url_encoded_group_and_the_private_token) {
    test::FakeGitLab gitlab;
    gitlab.answer(k_sre, 200, test::FakeGitLab::member_body(42));
    auto member = client(gitlab.url())->is_member("gitlab-org/sre", 42);
    BOOST_REQUIRE_MESSAGE(member.is_ok(), test::why(member));
    BOOST_TEST(*member);
    auto seen = gitlab.requests();
    BOOST_REQUIRE(seen.size() == 1u);
    BOOST_TEST(seen[0].uri == k_sre);
    BOOST_TEST(seen[0].private_token == k_token);
    BOOST_TEST(seen[0].authorization.empty());
    BOOST_TEST(group_member_path("sre-oncall", 7) == "/api/v4/groups/sre-oncall/members/all/7");
    BOOST_TEST(group_member_path("a.b/c_d/e f", 1) ==
               "/api/v4/groups/a.b%2Fc_d%2Fe%20f/members/all/1");
}

BOOST_AUTO_TEST_CASE(a_404_is_not_a_member_and_a_relative_url_root_is_kept) {
    test::FakeGitLab gitlab;  // answers 404 "Not found" to everything
    auto member = client(gitlab.url() + "/gitlab/")->is_member("sre-oncall", 42);
    BOOST_REQUIRE_MESSAGE(member.is_ok(), test::why(member));
    BOOST_TEST(!*member);
    BOOST_TEST(gitlab.requests().at(0).uri == "/gitlab/api/v4/groups/sre-oncall/members/all/42");
}

BOOST_AUTO_TEST_CASE(answers_other_than_member_or_not_are_errors_naming_the_status) {
    struct Case {
        const char* name;
        int status;
        const char* reason;
        std::string body;
        std::optional<bool> member;  // nullopt: an error
        Code code;
        const char* want;
    };
    const std::string echo = R"({"message":"token )" + k_token + R"( is invalid"})";
    const std::vector<Case> cases = {
        {"active member", 200, "OK", test::FakeGitLab::member_body(42), true, Code::ok, ""},
        {"blocked user", 200, "OK", test::FakeGitLab::member_body(42, "blocked"), false, Code::ok,
         ""},
        {"awaiting membership", 200, "OK",
         R"({"id":42,"state":"active","membership_state":"awaiting"})", false, Code::ok, ""},
        {"not a member", 404, "Not Found", R"({"message":"404 Not found"})", false, Code::ok, ""},
        {"no such group", 404, "Not Found", R"({"message":"404 Group Not Found"})", std::nullopt,
         Code::not_found, "GET X: 404 Not Found: 404 Group Not Found (no such group"},
        {"bad token", 401, "Unauthorized", R"({"message":"401 Unauthorized"})", std::nullopt,
         Code::unauthorized, "GET X: 401 Unauthorized"},
        {"token without read_api", 403, "Forbidden", R"({"error":"insufficient_scope"})",
         std::nullopt, Code::forbidden, "GET X: 403 Forbidden"},
        {"GitLab down", 500, "Internal Server Error", "<html>oops</html>", std::nullopt,
         Code::transient, "GET X: 500 Internal Server Error"},
        {"another user's answer", 200, "OK", test::FakeGitLab::member_body(7), std::nullopt,
         Code::failed, "about user 7, not 42"},
        {"not JSON", 200, "OK", "<html>", std::nullopt, Code::failed, "not a JSON object"},
        {"an answer echoing the token", 401, "Unauthorized", echo, std::nullopt, Code::unauthorized,
         "token [MASKED] is invalid"},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto got = membership_from_reply(c.status, c.reason, c.body, "GET X", 42, k_token);
            if (c.member) {
                BOOST_REQUIRE_MESSAGE(got.is_ok(), test::why(got));
                BOOST_TEST(*got == *c.member);
            } else {
                BOOST_REQUIRE(!got.is_ok());
                BOOST_TEST((got.status().code() == c.code));
                BOOST_TEST(got.status().message().find(c.want) != std::string::npos,
                           got.status().message());
                BOOST_TEST(got.status().message().find(k_token) == std::string::npos);
            }
        }
    }
}

BOOST_AUTO_TEST_CASE(http_errors_fail_closed_with_the_request_and_status_but_no_token) {
    test::FakeGitLab gitlab;
    gitlab.answer(k_sre, 401, R"({"message":"401 Unauthorized"})");
    auto unauthorized = client(gitlab.url())->is_member("gitlab-org/sre", 42);
    BOOST_REQUIRE(!unauthorized.is_ok());
    BOOST_TEST(unauthorized.status().message() ==
               "GET " + gitlab.url() + k_sre + ": 401 Unauthorized");
    gitlab.answer(k_sre, 500, R"({"message":"500 Internal Server Error"})");
    auto down = client(gitlab.url())->is_member("gitlab-org/sre", 42);
    BOOST_REQUIRE(!down.is_ok());
    BOOST_TEST((down.status().code() == Code::transient));
    BOOST_TEST(down.status().message().find("500 Internal Server Error") != std::string::npos);
    BOOST_TEST(down.status().message().find(k_token) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_token_goes_only_over_https_or_to_a_loopback_address) {
    for (const std::string url : {"http://gitlab.example.com", "ftp://127.0.0.1", "", "https://"}) {
        BOOST_TEST_CONTEXT(url) {
            auto made = make_gitlab_members({url, k_token, "", std::chrono::seconds(1)});
            BOOST_REQUIRE(!made.is_ok());
            BOOST_TEST((made.status().code() == Code::invalid));
            BOOST_TEST(made.status().message().find("gitlab.url") != std::string::npos);
        }
    }
    BOOST_TEST(make_gitlab_members({"https://gitlab.example.com", k_token, "", {}}).is_ok());
}

BOOST_AUTO_TEST_CASE(https_is_verified_against_the_pinned_ca_file) {
    test::TestPki pki;
    test::FakeGitLab gitlab(std::make_pair(pki.server_cert, pki.server_key));
    gitlab.answer(k_sre, 200, test::FakeGitLab::member_body(42));
    auto trusted = client(gitlab.url(), pki.ca_cert)->is_member("gitlab-org/sre", 42);
    BOOST_REQUIRE_MESSAGE(trusted.is_ok(), test::why(trusted));
    BOOST_TEST(*trusted);
    auto untrusted = client(gitlab.url(), pki.other_ca_cert)->is_member("gitlab-org/sre", 42);
    BOOST_REQUIRE(!untrusted.is_ok());
    BOOST_TEST(untrusted.status().message().find("GET " + gitlab.url() + k_sre) == 0u,
               untrusted.status().message());
    BOOST_TEST(gitlab.requests().size() == 1u);  // the token never reached the untrusted server
}

BOOST_AUTO_TEST_CASE(an_unreachable_gitlab_is_an_error_naming_the_request) {
    std::string url;
    {
        test::FakeGitLab gone;
        url = gone.url();
    }
    auto member = client(url)->is_member("sre-oncall", 42);
    BOOST_REQUIRE(!member.is_ok());
    BOOST_TEST((member.status().code() == Code::transient));
    BOOST_TEST(member.status().message().find("GET " + url) == 0u, member.status().message());
}

// Given the stand-in GitLab, then its ID token keys are read from /oauth/discovery/keys
// with no credential at all (they are public), and any answer but 200 is an error
// naming the request and the status.
BOOST_AUTO_TEST_CASE(the_signing_keys_are_read_without_a_credential) {
    test::FakeGitLab gitlab;
    const std::string jwks = R"({"keys": [{"kty": "RSA", "kid": "k", "n": "AQAB", "e": "AQAB"}]})";
    gitlab.answer("/oauth/discovery/keys", 200, jwks);
    auto keys = client(gitlab.url())->signing_keys();
    BOOST_REQUIRE_MESSAGE(keys.is_ok(), test::why(keys));
    BOOST_TEST(*keys == jwks);
    auto seen = gitlab.requests();
    BOOST_REQUIRE(seen.size() == 1u);
    BOOST_TEST(seen[0].uri == "/oauth/discovery/keys");
    BOOST_TEST(seen[0].private_token.empty());
    BOOST_TEST(seen[0].job_token.empty());
    BOOST_TEST(seen[0].authorization.empty());
    gitlab.answer("/oauth/discovery/keys", 503, "{}");
    auto down = client(gitlab.url())->signing_keys();
    BOOST_REQUIRE(!down.is_ok());
    BOOST_TEST((down.status().code() == Code::transient));
    BOOST_TEST(down.status().message() ==
               "GET " + gitlab.url() + "/oauth/discovery/keys: 503 Service Unavailable");
}

BOOST_AUTO_TEST_SUITE_END()
