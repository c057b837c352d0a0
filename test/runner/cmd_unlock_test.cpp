// Given `envgate unlock` and `envgate status` run in-process on a file store, then:
// in CI a login listed in `unlockers` or an active member of a listed @group (asked of
// a local stand-in for GitLab) may unlock, anyone else is refused naming who may, a
// missing token or a GitLab error refuses (fail closed) and the token is never
// printed; a lock record that cannot be read is left byte for byte as it was, unlock
// prints the exact commands to look at it and set it aside, and status marks it
// UNREADABLE while still listing the other locks.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "locks/file_store.h"
#include "runner/base/exit_status.h"
#include "runner/cmd_lock.h"
#include "runner/cmd_status.h"
#include "runner/cmd_unlock.h"
#include "runner/config/config.h"
#include "runner/connect/gitlab_members.h"
#include "test/fakes/fake_clock.h"
#include "test/locks/store_factories.h"
#include "test/runner/fake_gitlab.h"
#include "test/runner/jwt_signer.h"
#include "test/runner/lock_workspace.h"

using namespace envgate;
using namespace envgate::locks;

using test::has;
using test::k_t0;
using test::Run;
using test::Workspace;

namespace {

const std::string k_token = "glpat-s3cr3t-t0ken";
const std::string k_sre = "/api/v4/groups/gitlab-org%2Fsre/members/all/42";
const std::string k_job_token = "glcbt-j0b-t0ken-1302";

// Records which groups were asked; answers from a table (absent: not a member).
class FakeMembers : public GroupMembers {
  public:
    std::map<std::string, Result<bool>> answers;
    std::vector<std::string> asked;
    Result<JobUser> job_user(const std::string&) override { return JobUser{"bob", 42}; }
    Result<std::string> signing_keys() override {
        return Status(Code::not_found, "no key set here");
    }
    Result<bool> is_member(const std::string& group, std::int64_t user_id) override {
        asked.push_back(group + "/" + std::to_string(user_id));
        auto it = answers.find(group);
        return it == answers.end() ? Result<bool>(false) : it->second;
    }
};

// A CI job's variables; GitLab (the fake) must answer /api/v4/job for its token.
std::map<std::string, std::string> ci_env(const std::string& server_url, bool token = true) {
    std::map<std::string, std::string> env = {{"CI", "true"},
                                              {"GITLAB_USER_LOGIN", "bob"},
                                              {"GITLAB_USER_ID", "42"},
                                              {"CI_JOB_TOKEN", k_job_token},
                                              {"CI_SERVER_URL", server_url}};
    if (token) {
        env["ENVGATE_GITLAB_TOKEN"] = k_token;
    }
    return env;
}

// Pins `url` as envgate.yml's GitLab server (`gitlab:` with `more` lines under it).
void pin(const Workspace& w, const std::string& url, const std::string& more = "") {
    std::ofstream(w.config, std::ios::app) << "gitlab:\n  url: " << url << "\n" << more;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cmd_unlock_suite)

BOOST_AUTO_TEST_CASE(the_ci_rule_checks_logins_then_each_group_and_fails_closed) {
    const std::vector<std::string> unlockers = {"alice", "@sre-oncall", "@gitlab-org/sre"};
    FakeMembers members;
    auto listed = check_unlocker("alice", 1, unlockers, &members);
    BOOST_TEST(listed.allowed);
    BOOST_TEST(listed.how == "listed in unlockers");
    BOOST_TEST(members.asked.empty());  // a listed login needs no API call

    members.answers.emplace("gitlab-org/sre", true);
    auto member = check_unlocker("bob", 42, unlockers, &members);
    BOOST_TEST(member.allowed);
    BOOST_TEST(member.how == "an active member of @gitlab-org/sre");
    BOOST_TEST(members.asked == (std::vector<std::string>{"sre-oncall/42", "gitlab-org/sre/42"}));

    FakeMembers none;
    auto refused = check_unlocker("bob", 42, unlockers, &none);
    BOOST_TEST(!refused.allowed);
    BOOST_TEST(refused.exit == k_exit_failed);
    BOOST_TEST(refused.refusal ==
               "not listed by login and not an active member of @sre-oncall, @gitlab-org/sre. "
               "Who may: alice, or an active member of @sre-oncall, @gitlab-org/sre.");

    auto no_token = check_unlocker("bob", 42, unlockers, nullptr);
    BOOST_TEST(!no_token.allowed);
    BOOST_TEST(has(no_token.refusal, "ENVGATE_GITLAB_TOKEN: a token with the read_api scope"));

    BOOST_TEST(!check_unlocker("bob", std::nullopt, unlockers, &none).allowed);
    BOOST_TEST(!check_unlocker("@sre-oncall", 42, unlockers, &none).allowed);
    BOOST_TEST(!check_unlocker("bob", 42, {"alice"}, &none).allowed);
    BOOST_TEST(none.asked.size() == 2u);  // only the first refusal asked GitLab

    FakeMembers flaky;
    flaky.answers.emplace("sre-oncall", Status(Code::transient, "GET x: 500 Internal"));
    auto unknown = check_unlocker("bob", 42, unlockers, &flaky);
    BOOST_TEST(!unknown.allowed);
    BOOST_TEST(unknown.exit == k_exit_infra);
    BOOST_TEST(has(unknown.refusal, "could not be checked (GET x: 500 Internal)"));
    flaky.answers.emplace("gitlab-org/sre", true);  // confirmed by another group: enough
    BOOST_TEST(check_unlocker("bob", 42, unlockers, &flaky).allowed);
}

BOOST_AUTO_TEST_CASE(a_group_member_unlocks_from_ci_and_the_token_is_never_printed) {
    test::FakeGitLab gitlab;
    gitlab.answer("/api/v4/job", 200, test::FakeGitLab::job_body("bob", 42));
    gitlab.answer(k_sre, 200, test::FakeGitLab::member_body(42));
    Workspace w;
    pin(w, gitlab.url());
    Run r = w.unlock(ci_env(gitlab.url()));
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.err, "bob may unlock gstg: an active member of @gitlab-org/sre"));
    BOOST_TEST(has(r.out, "recorded as bob: migrations fixed by hand"));
    BOOST_TEST((w.state() == LockState::free));
    BOOST_TEST(!has(r.out + r.err, k_token));
    BOOST_TEST(!has(r.out + r.err, k_job_token));
    auto seen = gitlab.requests();
    BOOST_REQUIRE(seen.size() == 3u);  // the job's user, @sre-oncall: 404, @gitlab-org/sre
    BOOST_TEST(seen[0].uri == "/api/v4/job");
    BOOST_TEST(seen[0].job_token == k_job_token);
    BOOST_TEST(seen[1].uri == "/api/v4/groups/sre-oncall/members/all/42");
    BOOST_TEST(seen[2].private_token == k_token);
}

// Given a job that spoofs GITLAB_USER_LOGIN, unsets CI or sets CI=1, then GitLab's
// answer for its CI_JOB_TOKEN decides who it is, a job without that token is refused,
// and outside CI an environment without lock.local_unlock is refused: the unlockers
// list cannot be bypassed through variables the job controls.
BOOST_AUTO_TEST_CASE(variables_the_job_controls_do_not_bypass_the_unlockers) {
    test::FakeGitLab gitlab;
    gitlab.answer("/api/v4/job", 200, test::FakeGitLab::job_body("mallory", 66));
    Workspace w;
    pin(w, gitlab.url());
    auto spoofed = ci_env(gitlab.url());
    spoofed["GITLAB_USER_LOGIN"] = "alice";  // listed in unlockers; the job runs as mallory
    Run r = w.unlock(spoofed);
    BOOST_TEST(r.code == k_exit_failed);
    BOOST_TEST(has(r.err, "GITLAB_USER_LOGIN says alice, GitLab says this job runs as mallory"));
    BOOST_TEST(has(r.err, "mallory may not unlock gstg from CI"));
    for (const char* ci : {"", "1"}) {
        auto changed = spoofed;
        if (*ci == 0) {
            changed.erase("CI");
        } else {
            changed["CI"] = ci;
        }
        BOOST_TEST(w.unlock(changed).code == k_exit_failed);
    }
    auto no_job_token = spoofed;
    no_job_token.erase("CI_JOB_TOKEN");
    Run unproven = w.unlock(no_job_token);
    BOOST_TEST(unproven.code == k_exit_failed);
    BOOST_TEST(has(unproven.err, "CI_JOB_TOKEN is not set"));
    BOOST_TEST((w.state() == LockState::failed));

    std::ofstream(w.config) << "version: 1\n"
                               "defaults:\n"
                               "  namespace: gitlab\n"
                               "  lock: { store: file, path: locks }\n"
                               "  unlockers: [ \"alice\" ]\n"
                               "environments:\n"
                               "  - name: gstg\n";
    Run local = w.unlock({{"USER", "alice"}});
    BOOST_TEST(local.code == k_exit_failed);
    BOOST_TEST(has(local.err, "set lock: { local_unlock: true } for it in envgate.yml"));
    BOOST_TEST((w.state() == LockState::failed));
}

// Given a lock whose unlockers list alice and a server of the job's own on loopback
// that answers GET /api/v4/job with alice, when the job points CI_SERVER_URL (and
// CI_SERVER_TLS_CA_FILE) at it, then the unlock is refused and that server receives no
// request, so never the job token: with no gitlab.url in envgate.yml (exit 2, saying
// what to add) and with another server pinned (exit 1, naming both).
BOOST_AUTO_TEST_CASE(a_job_cannot_choose_the_gitlab_that_names_its_user) {
    test::FakeGitLab forged;
    forged.answer("/api/v4/job", 200, test::FakeGitLab::job_body("alice", 1));
    Workspace w;
    auto env = ci_env(forged.url());
    env["CI_SERVER_TLS_CA_FILE"] = w.dir.path() + "/forged-ca.pem";
    Run unpinned = w.unlock(env);
    BOOST_TEST(unpinned.code == k_exit_usage, unpinned.err);
    BOOST_TEST(has(unpinned.err, "envgate.yml does not name the GitLab server"), unpinned.err);
    BOOST_TEST(has(unpinned.err, "Add:\n  gitlab:\n    url: https://gitlab.example.com"));

    pin(w, "https://gitlab.example.com");
    Run other = w.unlock(env);
    BOOST_TEST(other.code == k_exit_failed, other.err);
    BOOST_TEST(has(other.err, "this job's CI_SERVER_URL is " + forged.url() +
                                  ", but envgate.yml names gitlab.url https://gitlab.example.com"),
               other.err);
    BOOST_TEST(forged.requests().empty());
    BOOST_TEST(!has(unpinned.err + other.err, k_job_token));
    BOOST_TEST((w.state() == LockState::failed));
}

// Given gitlab.url pinned, when the job has no CI_SERVER_URL (or one written with a
// trailing '/'), then the pinned server is asked and a listed login unlocks (exit 0).
BOOST_AUTO_TEST_CASE(the_pinned_server_is_asked_without_ci_server_url) {
    test::FakeGitLab gitlab;
    gitlab.answer("/api/v4/job", 200, test::FakeGitLab::job_body("alice", 1));
    for (const char* server_url : {"", "/"}) {
        BOOST_TEST_CONTEXT("CI_SERVER_URL " << (*server_url ? "with /" : "unset")) {
            Workspace w;
            pin(w, gitlab.url());
            auto env = ci_env(gitlab.url() + server_url);
            if (*server_url == 0) {
                env.erase("CI_SERVER_URL");
            }
            Run r = w.unlock(env);
            BOOST_TEST(r.code == k_exit_success, r.err);
            BOOST_TEST(has(r.out, "recorded as alice: migrations fixed by hand"), r.out);
            BOOST_TEST((w.state() == LockState::free));
        }
    }
    BOOST_TEST(gitlab.requests().size() == 2u);
}

// Given gitlab.id_token in envgate.yml and the job's ID token in ENVGATE_ID_TOKEN, then
// the token's user_login is the unlocker when the pinned server's key signed it for
// envgate's audience and it has not expired; no job token is sent anywhere (the key
// set needs none); a group entry is checked with ENVGATE_GITLAB_TOKEN for the token's
// user_id, at the pinned server. A token signed by another key, for another audience,
// from another issuer, expired, or missing is refused (exit 1) and the lock stays
// failed; the token is never printed.
BOOST_AUTO_TEST_CASE(the_unlocker_comes_from_a_verified_id_token) {
    static const test::JwtSigner gitlab_key("gitlab-ci");
    static const test::JwtSigner other_key("gitlab-ci");
    test::FakeGitLab gitlab;
    gitlab.answer("/oauth/discovery/keys", 200, test::JwtSigner::jwks(gitlab_key));
    gitlab.answer("/api/v4/job", 200, test::FakeGitLab::job_body("alice", 1));
    gitlab.answer(k_sre, 200, test::FakeGitLab::member_body(42));
    const TimePoint now = k_t0 + std::chrono::hours(1);  // the Workspace's clock
    auto claims = [&](const std::string& user) {
        return test::JwtSigner::gitlab_claims(gitlab.url(), "envgate", user, now);
    };
    auto env_with = [&](const std::string& token) {
        auto env = ci_env(gitlab.url(), false);
        env["ENVGATE_ID_TOKEN"] = token;
        return env;
    };
    const std::string id_token = "  id_token: {audience: envgate}\n";

    Workspace w;
    pin(w, gitlab.url(), id_token);
    const std::string good = gitlab_key.sign(claims("alice"));
    Run r = w.unlock(env_with(good));
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.err, "the ID token of " + gitlab.url() +
                              " names alice in gitlab-org/app on main (protected), environment "
                              "gstg (protected)"),
               r.err);
    BOOST_TEST(has(r.out, "recorded as alice: migrations fixed by hand"));
    BOOST_TEST(!has(r.out + r.err, good));

    Workspace member;
    pin(member, gitlab.url(), id_token);
    auto with_token = env_with(gitlab_key.sign(claims("bob")));
    with_token["ENVGATE_GITLAB_TOKEN"] = k_token;
    Run bob = member.unlock(with_token);
    BOOST_TEST(bob.code == k_exit_success, bob.err);
    BOOST_TEST(has(bob.err, "bob may unlock gstg: an active member of @gitlab-org/sre"));

    struct Case {
        const char* name;
        std::string token;
        std::string want;
    };
    auto expired = claims("alice");
    expired["exp"] = expired["iat"].get<long>() - 3600;
    const Case refusals[] = {
        {"signed by another key", other_key.sign(claims("alice")), "its signature does not verify"},
        {"another audience",
         gitlab_key.sign(test::JwtSigner::gitlab_claims(gitlab.url(), "vault", "alice", now)),
         "its audience (aud) is not \"envgate\""},
        {"another issuer",
         gitlab_key.sign(
             test::JwtSigner::gitlab_claims("https://gitlab.example.com", "envgate", "alice", now)),
         "issued by \"https://gitlab.example.com\", not by the GitLab server envgate.yml pins"},
        {"expired", gitlab_key.sign(expired), "it expired at"},
        {"missing", "",
         "ENVGATE_ID_TOKEN is not set: give the job an ID token (id_tokens: { "
         "ENVGATE_ID_TOKEN: { aud: envgate } }"},
    };
    Workspace refused;
    pin(refused, gitlab.url(), id_token);
    for (const Case& c : refusals) {
        BOOST_TEST_CONTEXT(c.name) {
            Run no = refused.unlock(env_with(c.token));
            BOOST_TEST(no.code == k_exit_failed, no.err);
            BOOST_TEST(has(no.err, c.want), no.err);
            BOOST_TEST((c.token.empty() || !has(no.out + no.err, c.token)));
            BOOST_TEST((refused.state() == LockState::failed));
        }
    }
    for (const auto& seen : gitlab.requests()) {
        BOOST_TEST(seen.job_token.empty(), "JOB-TOKEN sent to " << seen.uri);
        BOOST_TEST(seen.uri != "/api/v4/job");
    }
}

BOOST_AUTO_TEST_CASE(from_ci_a_non_member_no_token_or_a_gitlab_error_leaves_the_lock_failed) {
    test::FakeGitLab gitlab;
    gitlab.answer("/api/v4/job", 200, test::FakeGitLab::job_body("bob", 42));
    Workspace w;
    pin(w, gitlab.url());
    Run stranger = w.unlock(ci_env(gitlab.url()));
    BOOST_TEST(stranger.code == k_exit_failed);
    BOOST_TEST(has(stranger.err,
                   "bob may not unlock gstg from CI: not listed by login and not "
                   "an active member of @sre-oncall, @gitlab-org/sre"));

    const std::size_t asked = gitlab.requests().size();
    Run no_token = w.unlock(ci_env(gitlab.url(), false));
    BOOST_TEST(no_token.code == k_exit_failed);
    BOOST_TEST(has(no_token.err, "ENVGATE_GITLAB_TOKEN"));
    BOOST_TEST(has(no_token.err, "read_api"));
    BOOST_TEST(has(no_token.err, "Who may: alice, or an active member of @sre-oncall"));
    BOOST_TEST(gitlab.requests().size() == asked + 1);  // who runs the job; no group asked

    gitlab.answer("/api/v4/groups/sre-oncall/members/all/42", 500, "{}");
    gitlab.answer(k_sre, 401, R"({"message":"401 Unauthorized: )" + k_token + "\"}");
    Run broken = w.unlock(ci_env(gitlab.url()));
    BOOST_TEST(broken.code == k_exit_infra);
    BOOST_TEST(has(broken.err, "500 Internal Server Error"));
    BOOST_TEST(has(broken.err, "401 Unauthorized"));
    BOOST_TEST(!has(broken.out + broken.err, k_token));

    gitlab.answer("/api/v4/job", 401, R"({"message":"401 Unauthorized"})");
    Run job_refused = w.unlock(ci_env(gitlab.url()));
    BOOST_TEST(job_refused.code == k_exit_failed);
    BOOST_TEST(has(job_refused.err, "GitLab could not say who runs this job"));

    BOOST_TEST((w.state() == LockState::failed));
}

BOOST_AUTO_TEST_CASE(an_unreadable_record_is_not_unlocked_and_unlock_says_how_to_clear_it) {
    Workspace w;
    const std::string path = w.locks + "/gstg.json";
    const std::string bytes = R"({"schema": "envgate.dev/lock/v1", "state": "held"})";
    std::ofstream(path, std::ios::binary) << bytes;
    Run r = w.unlock({{"USER", "sre"}});
    BOOST_TEST(r.code == k_exit_usage);
    BOOST_TEST(has(r.err, "lock gstg not unlocked: its record cannot be read: " + path +
                              ": not a lock record: state is held but holder is null"));
    BOOST_TEST(has(r.err, "\n    cat " + path + "\n"));
    BOOST_TEST(has(r.err, "\n    mv " + path + " " + path + ".unreadable\n"));
    BOOST_TEST(slurp(path) == bytes);
    // Following the advice frees the lock.
    std::filesystem::rename(path, path + ".unreadable");
    BOOST_TEST((w.state() == LockState::free));
}

BOOST_AUTO_TEST_CASE(lock_commands_on_an_unreadable_record_say_how_to_clear_it) {
    Workspace w;
    const std::string path = w.locks + "/gstg.json";
    std::ofstream(path, std::ios::binary) << "{ torn";
    for (const char* action : {"acquire", "release", "fail", "verify"}) {
        Run r = w.lock(action, "gstg", "grp/app#8");
        BOOST_TEST_CONTEXT(action) {
            BOOST_TEST(r.code == k_exit_usage);
            BOOST_TEST(has(r.err, path + ": not a lock record: not JSON"));
            BOOST_TEST(has(r.err, "\n    mv " + path + " " + path + ".unreadable\n"));
        }
    }
    BOOST_TEST(slurp(path) == "{ torn");
}

BOOST_AUTO_TEST_CASE(status_marks_an_unreadable_lock_and_still_lists_the_others) {
    Workspace w;
    const std::string path = w.locks + "/gstg.json";
    std::ofstream(path, std::ios::binary) << "{ torn";
    Run text = w.status("text");
    BOOST_TEST(text.code == k_exit_infra);
    BOOST_TEST(has(text.out, "gstg  UNREADABLE\n  error    " + path +
                                 ": not a lock record: not JSON: parse error"));
    BOOST_TEST(has(text.out, "    cat " + path + "\n"));
    BOOST_TEST(has(text.out, "\ngprd  FREE\n"));
    BOOST_TEST(has(text.out, "\nqa  FREE\n"));
    Run json_run = w.status("json");
    auto j = nlohmann::json::parse(json_run.out);
    BOOST_REQUIRE(j["locks"].size() == 3u);
    BOOST_TEST(has(j["locks"][0]["error"].get<std::string>(), path + ": not a lock record"));
    BOOST_TEST(j["locks"][1]["error"].is_null());
    BOOST_TEST(j["locks"][1]["lock"]["name"] == "gprd");
    BOOST_TEST(slurp(path) == "{ torn");
}

BOOST_AUTO_TEST_CASE(for_a_lease_the_commands_name_the_context_namespace_and_lease) {
    auto config = load_config(std::string(ENVGATE_FIXTURES) + "/config/envgate.yml");
    BOOST_REQUIRE(config.is_ok());
    std::string text = repair_instructions(*config, "gstg");
    const std::string kubectl = "kubectl --context gitlab-org/agents:gstg -n envgate-locks";
    BOOST_TEST(has(text, "\n    " + kubectl + " get lease envgate-gstg -o yaml\n"), text);
    BOOST_TEST(
        has(text, "\n    " + kubectl + " get lease envgate-gstg -o yaml > envgate-gstg.yaml\n    " +
                      kubectl + " delete lease envgate-gstg\n"),
        text);
    BOOST_TEST(has(repair_instructions(*config, "qa"),
                   "    kubectl -n envgate-locks get lease envgate-qa -o yaml\n"));
}

BOOST_AUTO_TEST_CASE(a_blank_reason_is_no_reason) {
    // Given a failed lock, then an unlock whose reason is only whitespace, ASCII or
    // Unicode (no-break, ideographic, em, zero-width spaces), is refused (exit 2) and
    // the lock stays failed.
    Workspace w;
    for (const char* blank : {"", "   ", "\t\n", "\u00a0\u00a0", "\u3000\u2003", "\u200b\u00a0"}) {
        BOOST_TEST_CONTEXT("reason \"" << blank << "\"") {
            Run r = w.unlock({{"USER", "sre"}}, blank);
            BOOST_TEST(r.code == k_exit_usage);
            BOOST_TEST(r.err.find("--reason TEXT is required, and not blank") != std::string::npos,
                       r.err);
            BOOST_TEST((w.state() == LockState::failed));
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
