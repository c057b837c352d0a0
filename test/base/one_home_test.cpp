// Given the helpers that are each the one home of a rule several layers need (an HTTP
// status as a Code, base64, a shell word), then each answers as its callers relied on
// when they kept copies of their own: GitLab's and the Kubernetes client's statuses,
// kubeconfig's *-data fields and JWT segments, kubectl and unlock commands.
#include <boost/test/unit_test.hpp>

#include "runner/base/base64.h"
#include "runner/base/http_status.h"
#include "runner/base/vocab/shell_quote.h"
#include "runner/kube/errors.h"

using namespace envgate;

BOOST_AUTO_TEST_SUITE(one_home_suite)

BOOST_AUTO_TEST_CASE(http_status_table_names_auth_absence_and_retryable_statuses) {
    struct Case {
        int status;
        Code want;
    };
    const Case cases[] = {
        {401, Code::unauthorized}, {403, Code::forbidden}, {404, Code::not_found},
        {429, Code::transient},    {500, Code::transient}, {503, Code::transient},
        {400, Code::failed},       {409, Code::failed},    {418, Code::failed},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT("HTTP " << c.status) {
            BOOST_TEST(code_name(code_for_http_status(c.status)) == code_name(c.want));
        }
    }
}

BOOST_AUTO_TEST_CASE(kubernetes_client_adds_its_own_statuses_to_the_table) {
    // given the statuses the Kubernetes API gives a meaning of its own, then the client's
    // word wins; for every other status the shared table answers.
    BOOST_TEST(code_name(kube::code_for_http(400, "")) == code_name(Code::invalid));
    BOOST_TEST(code_name(kube::code_for_http(422, "Invalid")) == code_name(Code::invalid));
    BOOST_TEST(code_name(kube::code_for_http(408, "")) == code_name(Code::transient));
    BOOST_TEST(code_name(kube::code_for_http(409, "AlreadyExists")) ==
               code_name(Code::already_exists));
    BOOST_TEST(code_name(kube::code_for_http(409, "Conflict")) == code_name(Code::conflict));
    BOOST_TEST(code_name(kube::code_for_http(410, "Expired")) == code_name(Code::gone));
    for (int status : {401, 403, 404, 429, 502, 418}) {
        BOOST_TEST_CONTEXT("HTTP " << status) {
            BOOST_TEST(code_name(kube::code_for_http(status, "")) ==
                       code_name(code_for_http_status(status)));
        }
    }
}

BOOST_AUTO_TEST_CASE(decode_base64_reads_padded_text_and_refuses_other_characters) {
    BOOST_TEST(decode_base64("aGVsbG8=").value_or("?") == "hello");
    BOOST_TEST(decode_base64("").value_or("?") == "");
    BOOST_TEST(!decode_base64("a-b_").has_value());  // base64url: turned first by the caller
    BOOST_TEST(!decode_base64("not base64!").has_value());
    // A bad character after more than a short string's worth of bytes: refused, and the
    // bytes decoded so far are freed (the fuzzer once saw them leak).
    std::string long_prefix;
    for (int i = 0; i < 15; ++i) {
        long_prefix += "QUFB";  // "AAA"
    }
    BOOST_TEST(decode_base64(long_prefix).value_or("?") == std::string(45, 'A'));
    BOOST_TEST(!decode_base64(long_prefix + "\xc3\xa9UFB").has_value());
}

BOOST_AUTO_TEST_CASE(quote_for_shell_leaves_bare_words_and_quotes_the_rest) {
    const std::string bare = "abc-";
    BOOST_TEST(quote_for_shell("a-b", bare) == "a-b");
    BOOST_TEST(quote_for_shell("a b", bare) == "'a b'");
    BOOST_TEST(quote_for_shell("abd", bare) == "'abd'");
    BOOST_TEST(quote_for_shell("it's", bare) == "'it'\\''s'");
    BOOST_TEST(quote_for_shell("", bare) == "''");
}

BOOST_AUTO_TEST_SUITE_END()
