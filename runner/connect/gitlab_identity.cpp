#include "runner/connect/gitlab_identity.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "runner/base/base64.h"

namespace envgate {
namespace {

using nlohmann::json;

constexpr int k_min_rsa_bits = 2048;

struct Free {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
    void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
    void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
    void operator()(BIGNUM* p) const { BN_free(p); }
    void operator()(OSSL_PARAM_BLD* p) const { OSSL_PARAM_BLD_free(p); }
    void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

Status refused(const std::string& why) {
    return Status(Code::failed, "the ID token is refused: " + why);
}

std::string string_claim(const json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// GitLab writes booleans as strings ("true") in its CI tokens; a JSON true counts too.
bool true_claim(const json& j, const char* key) {
    return j.contains(key) && ((j[key].is_boolean() && j[key].get<bool>()) ||
                               (j[key].is_string() && j[key].get<std::string>() == "true"));
}

// The RSA public key of modulus `n` and exponent `e` (big-endian bytes, as a JSON Web
// Key holds them); nullptr when OpenSSL does not accept them.
Owned<EVP_PKEY> rsa_key(const std::string& n, const std::string& e) {
    Owned<BIGNUM> bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                                 static_cast<int>(n.size()), nullptr));
    Owned<BIGNUM> bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                                 static_cast<int>(e.size()), nullptr));
    Owned<OSSL_PARAM_BLD> build(OSSL_PARAM_BLD_new());
    if (!bn_n || !bn_e || !build ||
        OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
        return nullptr;
    }
    Owned<OSSL_PARAM> params(OSSL_PARAM_BLD_to_param(build.get()));
    Owned<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
    EVP_PKEY* key = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
        return nullptr;
    }
    return Owned<EVP_PKEY>(key);
}

bool verifies(EVP_PKEY* key, const std::string& signed_part, const std::string& signature) {
    Owned<EVP_MD_CTX> md(EVP_MD_CTX_new());
    return md && EVP_DigestVerifyInit(md.get(), nullptr, EVP_sha256(), nullptr, key) == 1 &&
           EVP_DigestVerify(
               md.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
               reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
}

// Checks the signature with the key set's RSA key named `kid` (each RSA key when the
// token names none: only a matching signature passes).
Status check_signature(const std::string& signed_part, const std::string& signature,
                       const std::string& kid, const std::string& jwks) {
    json set = json::parse(jwks, nullptr, false);
    if (!set.is_object() || !set.contains("keys") || !set["keys"].is_array()) {
        return Status(Code::invalid, "the GitLab server's key set is not a JSON Web Key Set");
    }
    bool tried = false;
    for (const json& k : set["keys"]) {
        if (!k.is_object() || string_claim(k, "kty") != "RSA" ||
            (!kid.empty() && string_claim(k, "kid") != kid)) {
            continue;
        }
        auto n = base64url_decode(string_claim(k, "n"));
        auto e = base64url_decode(string_claim(k, "e"));
        Owned<EVP_PKEY> key = n && e ? rsa_key(*n, *e) : nullptr;
        if (!key || EVP_PKEY_get_bits(key.get()) < k_min_rsa_bits) {
            continue;
        }
        tried = true;
        if (verifies(key.get(), signed_part, signature)) {
            return Status::ok();
        }
    }
    return tried ? refused("its signature does not verify with the GitLab server's key " +
                           (kid.empty() ? std::string("set") : "\"" + kid + "\""))
                 : refused("the GitLab server publishes no RSA key (2048 bits or more) named \"" +
                           kid + "\"");
}

// A NumericDate claim (seconds since the epoch) as a time point.
std::optional<TimePoint> time_claim(const json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < 0 ||
        j[key].get<double>() > 1e11) {
        return std::nullopt;
    }
    return TimePoint(std::chrono::seconds(static_cast<std::int64_t>(j[key].get<double>())));
}

Status check_times(const json& claims, const IdTokenPolicy& policy, TimePoint now) {
    auto exp = time_claim(claims, "exp");
    if (!exp) {
        return refused("it has no expiry (exp)");
    }
    if (now > *exp + policy.leeway) {
        return refused("it expired at " + format_rfc3339(*exp) + " (now " + format_rfc3339(now) +
                       ")");
    }
    for (const char* key : {"nbf", "iat"}) {
        if (!claims.contains(key)) {
            continue;
        }
        auto t = time_claim(claims, key);
        if (!t || *t > now + policy.leeway) {
            return refused(std::string(key) + " is not a time before now (" + format_rfc3339(now) +
                           ")");
        }
    }
    return Status::ok();
}

Status check_claims(const json& claims, const IdTokenPolicy& policy) {
    const std::string iss = string_claim(claims, "iss");
    if (iss != policy.issuer && iss != policy.issuer + "/") {
        return refused("it was issued by \"" + iss + "\", not by the GitLab server envgate.yml " +
                       "pins (gitlab.url: " + policy.issuer + ")");
    }
    bool audience = string_claim(claims, "aud") == policy.audience;
    if (claims.contains("aud") && claims["aud"].is_array()) {
        for (const json& a : claims["aud"]) {
            audience = audience || (a.is_string() && a.get<std::string>() == policy.audience);
        }
    }
    if (!audience) {
        return refused("its audience (aud) is not \"" + policy.audience +
                       "\" (gitlab.id_token.audience)");
    }
    if (string_claim(claims, "user_login").empty()) {
        return refused("it names no user (user_login)");
    }
    if (policy.require_protected_ref && !true_claim(claims, "ref_protected")) {
        return refused("the job's ref " + string_claim(claims, "ref") +
                       " is not protected (ref_protected), and envgate.yml requires it");
    }
    if (policy.require_protected_environment && !true_claim(claims, "environment_protected")) {
        return refused("the job's environment \"" + string_claim(claims, "environment") +
                       "\" is not protected (environment_protected), and envgate.yml "
                       "requires it");
    }
    return Status::ok();
}

IdTokenClaims claims_of(const json& j) {
    IdTokenClaims c;
    c.user_login = string_claim(j, "user_login");
    const std::string id = string_claim(j, "user_id");
    if (!id.empty() && id.find_first_not_of("0123456789") == std::string::npos && id.size() < 19) {
        c.user_id = std::stoll(id);
    } else if (j.contains("user_id") && j["user_id"].is_number_integer()) {
        c.user_id = j["user_id"].get<std::int64_t>();
    }
    c.project_path = string_claim(j, "project_path");
    c.ref = string_claim(j, "ref");
    c.ref_protected = true_claim(j, "ref_protected");
    c.environment = string_claim(j, "environment");
    c.environment_protected = true_claim(j, "environment_protected");
    return c;
}

}  // namespace

std::optional<std::string> base64url_decode(const std::string& text) {
    // The URL alphabet without padding (RFC 7515 section 2) back to Base64's, decoded by
    // decode_base64 (Poco's decoder, which refuses any other character).
    std::string in = text;
    while (!in.empty() && in.back() == '=') {
        in.pop_back();
    }
    if (in.size() % 4 == 1 || in.find_first_of("+/= \t\r\n") != std::string::npos) {
        return std::nullopt;
    }
    std::replace(in.begin(), in.end(), '-', '+');
    std::replace(in.begin(), in.end(), '_', '/');
    in.append((4 - in.size() % 4) % 4, '=');
    return decode_base64(in);
}

Result<IdTokenClaims> verify_id_token(const std::string& jwt, const std::string& jwks,
                                      const IdTokenPolicy& policy, TimePoint now) {
    const auto first = jwt.find('.');
    const auto second = first == std::string::npos ? first : jwt.find('.', first + 1);
    if (second == std::string::npos || jwt.find('.', second + 1) != std::string::npos) {
        return refused("it is not a JSON Web Token (header.payload.signature)");
    }
    auto header_text = base64url_decode(jwt.substr(0, first));
    auto payload_text = base64url_decode(jwt.substr(first + 1, second - first - 1));
    auto signature = base64url_decode(jwt.substr(second + 1));
    json header = header_text ? json::parse(*header_text, nullptr, false) : json();
    json claims = payload_text ? json::parse(*payload_text, nullptr, false) : json();
    if (!header.is_object() || !claims.is_object() || !signature || signature->empty()) {
        return refused("it is not a JSON Web Token (header.payload.signature)");
    }
    if (string_claim(header, "alg") != "RS256") {
        return refused("it is signed with \"" + string_claim(header, "alg") +
                       "\", not RS256 as GitLab signs its ID tokens");
    }
    TRY(check_signature(jwt.substr(0, second), *signature, string_claim(header, "kid"), jwks));
    TRY(check_times(claims, policy, now));
    TRY(check_claims(claims, policy));
    return claims_of(claims);
}

}  // namespace envgate
