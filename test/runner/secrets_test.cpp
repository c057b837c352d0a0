// Given secrets from ENVGATE_SECRET_VARS, GitLab's own credentials and a kubeconfig
// key, then the one masking point replaces each wherever it appears (text, JSON keys
// and values, a stream written in pieces), ignores values too short to mask, and a
// manifest that names a secret variable is refused instead of expanded.
#include <boost/test/unit_test.hpp>
#include <map>
#include <sstream>

#include "runner/base/secrets.h"
#include "runner/gating/manifest.h"

using namespace envgate;

namespace {

struct Secrets {
    Secrets() { clear_secrets(); }
    ~Secrets() { clear_secrets(); }
};

Getenv env_of(std::map<std::string, std::string> vars) {
    return [vars](const std::string& k) -> std::optional<std::string> {
        auto it = vars.find(k);
        return it == vars.end() ? std::nullopt : std::optional(it->second);
    };
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(secrets_suite, Secrets)

BOOST_AUTO_TEST_CASE(every_named_and_builtin_secret_is_masked_and_short_values_are_not) {
    add_secrets_from_environment(env_of({{"ENVGATE_SECRET_VARS", "DB_PASSWORD, API_KEY"},
                                         {"DB_PASSWORD", "planted-db-password"},
                                         {"API_KEY", "short"},
                                         {"CI_JOB_TOKEN", "glcbt-planted-job-token"},
                                         {"CI_REGISTRY_PASSWORD", "planted-registry-pw"},
                                         {"CI_COMMIT_SHA", "0123456789abcdef"}}));
    add_secret("-----BEGIN KEY-----\nplanted-key-line-1\nplanted-key-line-2\n-----END KEY-----");
    BOOST_TEST(mask_secrets("a planted-db-password b glcbt-planted-job-token c") ==
               "a [MASKED] b [MASKED] c");
    BOOST_TEST(mask_secrets("planted-registry-pw") == "[MASKED]");
    BOOST_TEST(mask_secrets("key: planted-key-line-2") == "key: [MASKED]");  // one line of it
    BOOST_TEST(mask_secrets("short and 0123456789abcdef") == "short and 0123456789abcdef");
    BOOST_TEST(holds_secret("x planted-db-password"));
    BOOST_TEST(!holds_secret("nothing here"));
}

BOOST_AUTO_TEST_CASE(json_strings_and_keys_are_masked_in_place) {
    add_secret("planted-db-password");
    nlohmann::json j = {{"message", "auth failed for planted-db-password"},
                        {"planted-db-password", 1},
                        {"list", {"planted-db-password", 3}}};
    mask_json_strings(j);
    BOOST_TEST(j.dump().find("planted") == std::string::npos, j.dump());
    BOOST_TEST(j["message"] == "auth failed for [MASKED]");
}

BOOST_AUTO_TEST_CASE(a_stream_written_in_pieces_is_masked_line_by_line) {
    add_secret("planted-db-password");
    std::ostringstream sink;
    {
        MaskingStreambuf buffer(sink.rdbuf());
        std::ostream out(&buffer);
        out << "one planted-db"
            << "-password two\nthree planted-";
        out << "db-password";  // no newline: written at destruction
    }
    BOOST_TEST(sink.str() == "one [MASKED] two\nthree [MASKED]");
}

BOOST_AUTO_TEST_CASE(secret_variables_are_never_expanded_into_a_job) {
    auto env = env_of({{"ENVGATE_SECRET_VARS", "CI_DB_PASSWORD"},
                       {"CI_DB_PASSWORD", "planted-db-password"},
                       {"CI_JOB_TOKEN", "glcbt-planted-job-token"},
                       {"CI_REPOSITORY_URL", "https://gitlab-ci-token:glcbt-planted-job-token@x"},
                       {"CI_COMMIT_SHA", "0123456789abcdef"}});
    add_secrets_from_environment(env);
    for (const char* name : {"CI_JOB_TOKEN", "CI_DB_PASSWORD", "CI_REPOSITORY_URL"}) {
        BOOST_TEST_CONTEXT(name) {
            auto r = expand_variables(std::string("x ${") + name + "}", "job.yaml:3:5: env", env);
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST(r.status().message().find("holds a secret and is never expanded") !=
                       std::string::npos);
            BOOST_TEST(r.status().message().find("planted") == std::string::npos);
        }
    }
    BOOST_TEST(*expand_variables("${CI_COMMIT_SHA}", "x", env) == "0123456789abcdef");
}

// Given one credential a client holds (GitLab's token, the kube bearer token), then the
// one replacing loop masks every occurrence with the caller's mark, leaves text alone
// for an empty secret, and does not loop on a secret found inside the mark itself.
BOOST_AUTO_TEST_CASE(replace_secret_masks_each_occurrence_with_the_mark) {
    BOOST_TEST(replace_secret("a tok b tok", "tok") == "a [MASKED] b [MASKED]");
    BOOST_TEST(replace_secret("abcabc", "abc", k_redacted) == "[redacted][redacted]");
    BOOST_TEST(replace_secret("envgate-gstg", "t", k_redacted) == "envga[redacted]e-gs[redacted]g");
    BOOST_TEST(replace_secret("nothing here", "") == "nothing here");
    BOOST_TEST(replace_secret("MASK", "MASK") == "[MASKED]");
}

BOOST_AUTO_TEST_SUITE_END()
