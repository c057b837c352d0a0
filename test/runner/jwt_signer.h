// A stand-in for GitLab's ID token issuer in tests: an RSA key made with OpenSSL, its
// JSON Web Key Set (what GitLab serves at /oauth/discovery/keys) and RS256-signed JWTs
// with the claims a test chooses, as GitLab's CI ID tokens carry them.
#pragma once

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "runner/base/vocab/time.h"

namespace envgate::test {

inline std::string base64url(const std::string& bytes) {
    static const char* k_alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    unsigned int bits = 0;
    int count = 0;
    for (unsigned char c : bytes) {
        bits = (bits << 8) | c;
        count += 8;
        while (count >= 6) {
            count -= 6;
            out += k_alphabet[(bits >> count) & 0x3F];
        }
    }
    if (count > 0) {
        out += k_alphabet[(bits << (6 - count)) & 0x3F];
    }
    return out;
}

class JwtSigner {
  public:
    explicit JwtSigner(std::string kid, unsigned int bits = 2048)
        : m_kid(std::move(kid)), m_key(EVP_RSA_gen(bits), EVP_PKEY_free) {
        if (!m_key) {
            throw std::runtime_error("EVP_RSA_gen failed");
        }
    }

    const std::string& kid() const { return m_kid; }

    // This key as one entry of a JSON Web Key Set.
    nlohmann::json jwk() const {
        return {{"kty", "RSA"},
                {"kid", m_kid},
                {"use", "sig"},
                {"alg", "RS256"},
                {"n", param(OSSL_PKEY_PARAM_RSA_N)},
                {"e", param(OSSL_PKEY_PARAM_RSA_E)}};
    }

    // The JSON Web Key Set of `signers`' keys, as /oauth/discovery/keys answers.
    template <typename... S>
    static std::string jwks(const S&... signers) {
        nlohmann::json keys = nlohmann::json::array();
        (keys.push_back(signers.jwk()), ...);
        return nlohmann::json{{"keys", keys}}.dump();
    }

    // `claims` signed with RS256 under this key's kid (`header` overrides fields).
    std::string sign(const nlohmann::json& claims,
                     const nlohmann::json& header = nlohmann::json::object()) const {
        nlohmann::json h = {{"alg", "RS256"}, {"typ", "JWT"}, {"kid", m_kid}};
        h.update(header);
        const std::string signed_part = base64url(h.dump()) + "." + base64url(claims.dump());
        std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(),
                                                                   EVP_MD_CTX_free);
        size_t size = 0;
        if (EVP_DigestSignInit(md.get(), nullptr, EVP_sha256(), nullptr, m_key.get()) != 1 ||
            EVP_DigestSign(md.get(), nullptr, &size,
                           reinterpret_cast<const unsigned char*>(signed_part.data()),
                           signed_part.size()) != 1) {
            throw std::runtime_error("EVP_DigestSign failed");
        }
        std::string signature(size, '\0');
        if (EVP_DigestSign(md.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                           reinterpret_cast<const unsigned char*>(signed_part.data()),
                           signed_part.size()) != 1) {
            throw std::runtime_error("EVP_DigestSign failed");
        }
        signature.resize(size);
        return signed_part + "." + base64url(signature);
    }

    // The claims of a GitLab CI ID token for `user_login`, issued by `issuer` for
    // `audience`, valid for five minutes from `now` (seconds since the epoch).
    static nlohmann::json gitlab_claims(const std::string& issuer, const std::string& audience,
                                        const std::string& user_login, TimePoint now) {
        const auto t =
            std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
        return {{"namespace_id", "72"},
                {"namespace_path", "gitlab-org"},
                {"project_id", "1302"},
                {"project_path", "gitlab-org/app"},
                {"user_id", "42"},
                {"user_login", user_login},
                {"user_email", user_login + "@example.com"},
                {"pipeline_id", "9001"},
                {"pipeline_source", "web"},
                {"job_id", "77"},
                {"ref", "main"},
                {"ref_type", "branch"},
                {"ref_path", "refs/heads/main"},
                {"ref_protected", "true"},
                {"environment", "gstg"},
                {"environment_protected", "true"},
                {"jti", "2f5d7c52-6c1a-4b8e-9e0e-0d7c5b8d1f3a"},
                {"iss", issuer},
                {"iat", t - 10},
                {"nbf", t - 15},
                {"exp", t + 300},
                {"sub", "project_path:gitlab-org/app:ref_type:branch:ref:main"},
                {"aud", audience}};
    }

  private:
    std::string param(const char* name) const {
        BIGNUM* bn = nullptr;
        if (EVP_PKEY_get_bn_param(m_key.get(), name, &bn) != 1) {
            throw std::runtime_error("EVP_PKEY_get_bn_param failed");
        }
        std::string bytes(static_cast<size_t>(BN_num_bytes(bn)), '\0');
        BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
        BN_free(bn);
        return base64url(bytes);
    }

    std::string m_kid;
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> m_key;
};

}  // namespace envgate::test
