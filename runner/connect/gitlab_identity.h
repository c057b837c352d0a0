// Who runs a CI job, from a GitLab ID token (`id_tokens:` in the job): a JWT signed by
// the GitLab server pinned in envgate.yml. The signature (RS256, checked with OpenSSL)
// against that server's JSON Web Key Set, the issuer, the audience and the validity
// times decide whether the token's `user_login` is believed. Pure: the key set and
// `now` are passed in, so every refusal is tested without a server or a clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate {

// What envgate requires of an ID token.
struct IdTokenPolicy {
    std::string issuer;    // the pinned GitLab URL: `iss` must equal it
    std::string audience;  // `aud` must be, or contain, this
    bool require_protected_ref = false;
    bool require_protected_environment = false;
    Duration leeway = std::chrono::seconds(60);  // clock skew allowed on exp, nbf and iat
};

// The claims envgate uses from a verified token.
struct IdTokenClaims {
    std::string user_login;
    std::optional<std::int64_t> user_id;
    std::string project_path;
    std::string ref;
    bool ref_protected = false;
    std::string environment;  // empty when the job names none
    bool environment_protected = false;
};

// Verifies `jwt` at `now`: its header names alg RS256 (and a `kid` of `jwks`, GitLab's
// answer to /oauth/discovery/keys), its signature verifies with that RSA key (2048 bits
// or more), and its claims meet `policy`; `user_login` must be set. Else `failed`
// (`invalid` for a key set that cannot be read), saying which check refused. The
// token's text never appears in a message.
Result<IdTokenClaims> verify_id_token(const std::string& jwt, const std::string& jwks,
                                      const IdTokenPolicy& policy, TimePoint now);

// `text` decoded from base64url (RFC 4648 section 5, padding optional); nullopt for any
// other character or a length no encoding has.
std::optional<std::string> base64url_decode(const std::string& text);

}  // namespace envgate
