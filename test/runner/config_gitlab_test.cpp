// Given envgate.yml texts with a `gitlab:` section, then load_config reads the pinned
// server, its CA file and the ID token settings, `config check` shows them, and every
// mistake fails with file:line:column, the field and what to write: a server the job
// token could leave over plain http, or with credentials in the URL, is refused.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runner/cmd_config.h"
#include "runner/config/config.h"
#include "runner/config/config_gitlab.h"

using namespace envgate;

namespace {

const std::string k_path = "deploy/envgate.yml";

// Lines 1-4; the `gitlab:` section of each case starts on line 5.
const std::string k_head =
    "version: 1\n"
    "defaults: {namespace: app}\n"
    "environments:\n"
    "  - name: gstg\n";

std::string error_of(const std::string& gitlab) {
    auto r = parse_config(k_head + gitlab, k_path);
    return r.is_ok() ? "(no error)" : r.status().message();
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_gitlab_suite)

BOOST_AUTO_TEST_CASE(reads_the_pinned_server_and_the_id_token_settings) {
    auto r = parse_config(k_head +
                              "gitlab:\n"
                              "  url: https://gitlab.example.com/\n"
                              "  ca_file: certs/internal-ca.pem\n"
                              "  id_token:\n"
                              "    variable: UNLOCK_ID_TOKEN\n"
                              "    audience: envgate\n"
                              "    require: [ref_protected, environment_protected]\n",
                          k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    const GitLabServer& g = r->gitlab;
    BOOST_TEST(g.url == "https://gitlab.example.com");  // the form iss and CI_SERVER_URL take
    BOOST_TEST(g.ca_file == "deploy/certs/internal-ca.pem");
    BOOST_REQUIRE(g.id_token.has_value());
    BOOST_TEST(g.id_token->variable == "UNLOCK_ID_TOKEN");
    BOOST_TEST(g.id_token->audience == "envgate");
    BOOST_TEST(g.id_token->require_protected_ref);
    BOOST_TEST(g.id_token->require_protected_environment);
    // `envgate config check` shows them, and its output reads back the same.
    std::string shown = render_config(*r);
    BOOST_TEST(has(shown, "gitlab:\n  url: https://gitlab.example.com\n"), shown);
    BOOST_TEST(has(shown, "require: [ref_protected, environment_protected]"), shown);
    auto again = parse_config(shown, k_path);
    BOOST_REQUIRE_MESSAGE(again.is_ok(), (again.is_ok() ? "" : again.status().message()));
    BOOST_TEST(again->gitlab.id_token->audience == "envgate");
    BOOST_TEST(render_config_json(*r)["gitlab"]["id_token"]["variable"] == "UNLOCK_ID_TOKEN");

    auto plain = parse_config(k_head + "gitlab: {url: 'http://127.0.0.1:8929/gitlab'}\n", k_path);
    BOOST_REQUIRE(plain.is_ok());
    BOOST_TEST(plain->gitlab.url == "http://127.0.0.1:8929/gitlab");
    BOOST_TEST(!plain->gitlab.id_token.has_value());
    BOOST_TEST(plain->gitlab.ca_file.empty());
}

BOOST_AUTO_TEST_CASE(no_gitlab_section_pins_nothing) {
    auto r = parse_config(k_head, k_path);
    BOOST_REQUIRE(r.is_ok());
    BOOST_TEST(r->gitlab.url.empty());
    BOOST_TEST(!has(render_config(*r), "gitlab:"));
}

BOOST_AUTO_TEST_CASE(each_mistake_names_file_line_and_field) {
    const std::pair<std::string, std::string> cases[] = {
        {"gitlab:\n  ur: https://gitlab.example.com\n",
         "deploy/envgate.yml:6:3: gitlab.ur: unknown key; did you mean \"url\"?"},
        {"gitlab:\n  ca_file: x.pem\n", "deploy/envgate.yml:6:3: gitlab.url: missing; write"},
        {"gitlab:\n  url: http://gitlab.example.com\n",
         "deploy/envgate.yml:6:8: gitlab.url: \"http://gitlab.example.com\" is plain http"},
        {"gitlab:\n  url: gitlab.example.com\n",
         "deploy/envgate.yml:6:8: gitlab.url: \"gitlab.example.com\" is not an http(s) URL"},
        {"gitlab:\n  url: https://ci:glpat-x@gitlab.example.com\n",
         "deploy/envgate.yml:6:8: gitlab.url: \"https://ci:glpat-x@gitlab.example.com\": write "
         "the server's address only"},
        {"gitlab:\n  url: https://gitlab.example.com/?x=1\n", "gitlab.url: \""},
        {"gitlab:\n  url: https://\n",
         "deploy/envgate.yml:6:8: gitlab.url: \"https://\" names "
         "no host"},
        {"gitlab:\n  url: [a]\n", "deploy/envgate.yml:6:8: gitlab.url: expected a string"},
        {"gitlab:\n  url: https://g.example.com\n  ca_file: \"\"\n",
         "deploy/envgate.yml:7:12: gitlab.ca_file: must not be empty"},
        {"gitlab:\n  url: https://g.example.com\n  id_token: {variable: ENVGATE_ID_TOKEN}\n",
         "deploy/envgate.yml:7:13: gitlab.id_token.audience: missing; write the `aud:`"},
        {"gitlab:\n  url: https://g.example.com\n  id_token: {audience: e, variable: 1TOKEN}\n",
         "deploy/envgate.yml:7:37: gitlab.id_token.variable: \"1TOKEN\" is not a variable name"},
        {"gitlab:\n  url: https://g.example.com\n  id_token: {audience: e, require: [ref]}\n",
         "deploy/envgate.yml:7:37: gitlab.id_token.require[0]: \"ref\" is not one of "
         "ref_protected, environment_protected"},
        {"gitlab:\n  url: https://g.example.com\n  id_token: {audience: e, aud: f}\n",
         "gitlab.id_token.aud: unknown key"},
        {"gitlab: https://g.example.com\n", "deploy/envgate.yml:5:9: gitlab: expected a mapping"},
    };
    for (const auto& [gitlab, want] : cases) {
        std::string got = error_of(gitlab);
        BOOST_TEST(has(got, want), "for\n" << gitlab << "want: " << want << "\ngot:  " << got);
    }
}

BOOST_AUTO_TEST_CASE(a_url_is_compared_in_one_form) {
    BOOST_TEST(normalized_gitlab_url("https://gitlab.example.com//").value() ==
               "https://gitlab.example.com");
    BOOST_TEST(normalized_gitlab_url("http://localhost:3000").value() == "http://localhost:3000");
    BOOST_TEST(normalized_gitlab_url("http://[::1]:3000/").value() == "http://[::1]:3000");
    BOOST_TEST(!normalized_gitlab_url("http://127.0.0.1.evil.example").is_ok());
    BOOST_TEST(!normalized_gitlab_url("ftp://gitlab.example.com").is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
