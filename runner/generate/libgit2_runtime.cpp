#include "runner/generate/libgit2_runtime.h"

#include <dlfcn.h>
#include <git2.h>

#include <atomic>

namespace envgate {
namespace {

std::atomic<bool> g_in_init{false};
std::atomic<int> g_declined{0};

}  // namespace

LibGit2::LibGit2() {
    g_in_init = true;
    git_libgit2_init();
    g_in_init = false;
    // Read-only use: skip re-hashing every object read (git does not either).
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
    // Each tree is read once: caching objects would only cost inserts and frees.
    git_libgit2_opts(GIT_OPT_ENABLE_CACHING, 0);
}

LibGit2::~LibGit2() {
    git_libgit2_shutdown();
}

int ca_bundle_loads_declined() {
    return g_declined;
}

}  // namespace envgate

// mbedTLS's certificate file loader, as the executable defines it: the executable
// exports it (runner/generate/CMakeLists.txt), so the dynamic linker binds
// libgit2's call to this definition before libmbedx509's (ELF interposition).
// During git_libgit2_init it declines (libgit2 then goes on without a CA bundle);
// at any other time it forwards to mbedTLS's own. No effect where libgit2 uses
// another TLS library: nothing calls it then.
extern "C" {
struct mbedtls_x509_crt;

int mbedtls_x509_crt_parse_file(mbedtls_x509_crt* chain, const char* path) {
    // MBEDTLS_ERR_X509_FILE_IO_ERROR: what mbedTLS returns for a file it cannot read.
    constexpr int k_file_io_error = -0x2900;
    if (envgate::g_in_init) {
        ++envgate::g_declined;
        return k_file_io_error;
    }
    using Parse = int (*)(mbedtls_x509_crt*, const char*);
    static const auto real =
        reinterpret_cast<Parse>(dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file"));
    return real != nullptr ? real(chain, path) : k_file_io_error;
}
}
