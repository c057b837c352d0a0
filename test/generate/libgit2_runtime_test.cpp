// Given Debian's libgit2 (mbedTLS) and its CA bundle, then LibGit2 initialises
// libgit2 without parsing the bundle, and a certificate load asked for afterwards
// still reaches mbedTLS.
#include "runner/generate/libgit2_runtime.h"

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>

namespace envgate {
namespace {

// GIT_DEFAULT_CERT_LOCATION of Debian's libgit2 build (from the ca-certificates package).
const char* const k_bundle = "/etc/ssl/certs/ca-certificates.crt";

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_libgit2_runtime_suite)

// Given no other libgit2 user alive, then each init declines the one bundle load.
BOOST_AUTO_TEST_CASE(init_declines_the_ca_bundle_load) {
    BOOST_REQUIRE_MESSAGE(std::filesystem::is_regular_file(k_bundle),
                          k_bundle << " is missing: install ca-certificates");
    int before = ca_bundle_loads_declined();
    { LibGit2 first; }
    { LibGit2 second; }
    BOOST_TEST(ca_bundle_loads_declined() == before + 2);
}

// Given a load outside git_libgit2_init, then mbedTLS parses the file as usual.
BOOST_AUTO_TEST_CASE(later_loads_reach_mbedtls) {
    LibGit2 lib;
    int before = ca_bundle_loads_declined();
    mbedtls_x509_crt chain;
    mbedtls_x509_crt_init(&chain);
    int rc = mbedtls_x509_crt_parse_file(&chain, k_bundle);
    BOOST_TEST(rc >= 0);  // > 0: certificates mbedTLS could not use, skipped
    BOOST_TEST(chain.raw.len > 0u);
    BOOST_TEST(chain.next != nullptr);
    mbedtls_x509_crt_free(&chain);
    // mbedTLS's own file reader answers a missing file (a declined load is X509's error).
    BOOST_TEST(mbedtls_x509_crt_parse_file(&chain, "/nonexistent/ca.crt") ==
               MBEDTLS_ERR_PK_FILE_IO_ERROR);
    BOOST_TEST(ca_bundle_loads_declined() == before);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
