// Given a GitLab ID token signed with a key OpenSSL made here, its claims shaped as
// GitLab's docs list them (ci/secrets/id_token_authentication: iss, aud, exp, nbf, iat,
// user_login, ref_protected, environment_protected; GitLab writes the booleans as
// strings) and the key set /oauth/discovery/keys would serve, then only a token that
// the pinned server's key signed, for envgate's audience, within its validity, names
// the unlocker; every other token is refused saying which check failed, never
// quoting the token.
#include <boost/test/unit_test.hpp>

#include <functional>
#include <string>
#include <vector>

#include "runner/connect/gitlab_identity.h"
#include "test/runner/jwt_signer.h"

using namespace envgate;
using nlohmann::json;
using test::JwtSigner;

namespace {

const std::string k_issuer = "https://gitlab.example.com";
const TimePoint k_now = *parse_rfc3339("2026-05-01T11:00:00Z");

const JwtSigner& gitlab_key() {
    static const JwtSigner key("gitlab-ci-key");
    return key;
}

const JwtSigner& other_key() {
    static const JwtSigner key("gitlab-ci-key");  // same kid, another key
    return key;
}

IdTokenPolicy policy() {
    return IdTokenPolicy{k_issuer, "envgate", false, false};
}

json claims() {
    return JwtSigner::gitlab_claims(k_issuer, "envgate", "alice", k_now);
}

json with(json j, const std::string& key, json value) {
    j[key] = std::move(value);
    return j;
}

json without(json j, const std::string& key) {
    j.erase(key);
    return j;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gitlab_identity_suite)

BOOST_AUTO_TEST_CASE(a_token_the_pinned_server_signed_names_its_user) {
    const std::string jwks = JwtSigner::jwks(gitlab_key());
    auto c = verify_id_token(gitlab_key().sign(claims()), jwks, policy(), k_now);
    BOOST_REQUIRE_MESSAGE(c.is_ok(), (c.is_ok() ? "" : c.status().message()));
    BOOST_TEST(c->user_login == "alice");
    BOOST_TEST(c->user_id.value_or(0) == 42);
    BOOST_TEST(c->project_path == "gitlab-org/app");
    BOOST_TEST(c->ref == "main");
    BOOST_TEST(c->ref_protected);
    BOOST_TEST(c->environment == "gstg");
    BOOST_TEST(c->environment_protected);

    // An audience list that holds ours, an issuer written with '/', leeway on exp, a
    // key set with other keys first, required protections that hold: accepted.
    auto strict = policy();
    strict.require_protected_ref = true;
    strict.require_protected_environment = true;
    const JwtSigner rotated("gitlab-ci-key-2");
    const std::string two = JwtSigner::jwks(rotated, gitlab_key());
    for (const json& ok : {with(claims(), "aud", json::array({"vault", "envgate"})),
                           with(claims(), "iss", k_issuer + "/"),
                           with(claims(), "exp", claims()["iat"].get<long>() - 20),
                           with(claims(), "ref_protected", true)}) {
        BOOST_TEST_CONTEXT(ok.dump()) {
            auto v = verify_id_token(gitlab_key().sign(ok), two, strict, k_now);
            BOOST_TEST(v.is_ok(), (v.is_ok() ? "" : v.status().message()));
        }
    }
}

BOOST_AUTO_TEST_CASE(every_other_token_is_refused_saying_why) {
    struct Case {
        const char* name;
        std::function<std::string()> token;
        std::string want;
    };
    auto strict = policy();
    strict.require_protected_ref = true;
    strict.require_protected_environment = true;
    const JwtSigner weak("weak", 1024);
    const Case cases[] = {
        {"signed by another key", [] { return other_key().sign(claims()); },
         "its signature does not verify with the GitLab server's key \"gitlab-ci-key\""},
        {"another key under an unknown kid",
         [] {
             return other_key().sign(claims(), {{"kid", "mallory"}});
         },
         "publishes no RSA key (2048 bits or more) named \"mallory\""},
        {"the wrong audience", [] { return gitlab_key().sign(with(claims(), "aud", "vault")); },
         "its audience (aud) is not \"envgate\""},
        {"the wrong issuer",
         [] { return gitlab_key().sign(with(claims(), "iss", "http://127.0.0.1:8080")); },
         "issued by \"http://127.0.0.1:8080\", not by the GitLab server envgate.yml pins"},
        {"expired",
         [] {
             return gitlab_key().sign(with(claims(), "exp", claims()["iat"].get<long>() - 3600));
         },
         "it expired at 2026-05-01T09:59:50Z (now 2026-05-01T11:00:00Z)"},
        {"no expiry", [] { return gitlab_key().sign(without(claims(), "exp")); },
         "it has no expiry (exp)"},
        {"not valid yet", [] { return gitlab_key().sign(with(claims(), "nbf", claims()["exp"])); },
         "nbf is not a time before now"},
        {"issued in the future",
         [] { return gitlab_key().sign(with(claims(), "iat", claims()["exp"])); },
         "iat is not a time before now"},
        {"no user", [] { return gitlab_key().sign(without(claims(), "user_login")); },
         "it names no user (user_login)"},
        {"alg none",
         [] {
             std::string t = gitlab_key().sign(claims(), {{"alg", "none"}});
             return t.substr(0, t.rfind('.') + 1) + "AA";
         },
         "signed with \"none\", not RS256"},
        {"alg HS256",
         [] {
             return gitlab_key().sign(claims(), {{"alg", "HS256"}});
         },
         "signed with \"HS256\", not RS256"},
        {"a payload changed after signing",
         [] {
             std::string t = gitlab_key().sign(claims());
             const auto a = t.find('.');
             const auto b = t.rfind('.');
             return t.substr(0, a + 1) +
                    test::base64url(with(claims(), "user_login", "root").dump()) + t.substr(b);
         },
         "its signature does not verify"},
        {"a key under 2048 bits", [&weak] { return weak.sign(claims()); },
         "publishes no RSA key (2048 bits or more) named \"weak\""},
        {"not a JWT", [] { return std::string("glcbt-64_j0b-t0ken"); },
         "it is not a JSON Web Token"},
        {"four parts", [] { return gitlab_key().sign(claims()) + ".x"; },
         "it is not a JSON Web Token"},
        {"ref not protected",
         [] { return gitlab_key().sign(with(claims(), "ref_protected", "false")); },
         "the job's ref main is not protected (ref_protected)"},
        {"environment not protected",
         [] { return gitlab_key().sign(without(claims(), "environment_protected")); },
         "the job's environment \"gstg\" is not protected (environment_protected)"},
    };
    const std::string jwks = JwtSigner::jwks(gitlab_key(), weak);
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            const std::string token = c.token();
            auto v = verify_id_token(token, jwks, strict, k_now);
            BOOST_REQUIRE(!v.is_ok());
            BOOST_TEST((v.status().code() == Code::failed));
            BOOST_TEST(v.status().message().find(c.want) != std::string::npos,
                       v.status().message());
            BOOST_TEST(v.status().message().find(token) == std::string::npos);
        }
    }
}

BOOST_AUTO_TEST_CASE(a_key_set_that_is_not_one_is_invalid) {
    for (const char* jwks : {"", "<html>", "{}", R"({"keys": {}})"}) {
        auto v = verify_id_token(gitlab_key().sign(claims()), jwks, policy(), k_now);
        BOOST_REQUIRE(!v.is_ok());
        BOOST_TEST((v.status().code() == Code::invalid));
    }
    BOOST_TEST(
        !verify_id_token(gitlab_key().sign(claims()), R"({"keys": []})", policy(), k_now).is_ok());
}

BOOST_AUTO_TEST_CASE(base64url_decodes_only_its_own_alphabet) {
    BOOST_TEST(base64url_decode("aGk").value_or("?") == "hi");
    BOOST_TEST(base64url_decode("aGk=").value_or("?") == "hi");
    BOOST_TEST(base64url_decode("-_8").value_or("?") == "\xfb\xff");
    BOOST_TEST(!base64url_decode("aGk+").has_value());  // '+' is base64, not base64url
    BOOST_TEST(!base64url_decode("a").has_value());
    BOOST_TEST(test::base64url(*base64url_decode("q83vEjRWeJA")) == "q83vEjRWeJA");
}

BOOST_AUTO_TEST_SUITE_END()
