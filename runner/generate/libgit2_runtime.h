// libgit2's global state for envgate's local diffs, initialised without the TLS
// CA bundle: Debian's libgit2 1.5 (mbedTLS) parses all of
// /etc/ssl/certs/ca-certificates.crt in git_libgit2_init, before any option can
// be set, which was about 4 ms of a one-commit `envgate generate`'s 20 ms CPU.
#pragma once

namespace envgate {

// libgit2 initialised for as long as one of these lives (git_libgit2_init and
// shutdown are reference counted). envgate opens local repositories only: the CA
// bundle load that init starts is declined, so libgit2 in this process trusts no
// certificate (a TLS connection would fail, closed); a load asked for later goes
// to mbedTLS as usual.
class LibGit2 {
  public:
    LibGit2();
    ~LibGit2();
    LibGit2(const LibGit2&) = delete;
    LibGit2& operator=(const LibGit2&) = delete;
};

// How many certificate file loads were declined during git_libgit2_init in this
// process (0 when libgit2 was built without mbedTLS, or its init loads none).
int ca_bundle_loads_declined();

}  // namespace envgate
