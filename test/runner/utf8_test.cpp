// Given text that is or is not well-formed UTF-8, then valid_utf8() keeps valid text
// byte for byte and replaces each maximal ill-formed subpart by one U+FFFD (Unicode
// 15, section 3.9, table 3-8), and dump_json() writes such strings instead of throwing.
#include <boost/test/unit_test.hpp>

#include "runner/base/exit_status.h"
#include "runner/base/utf8.h"
#include "runner/cli.h"
#include "test/fakes/captured_run.h"

using namespace envgate;

BOOST_AUTO_TEST_SUITE(utf8_suite)

BOOST_AUTO_TEST_CASE(valid_utf8_replaces_each_maximal_subpart_once) {
    struct Case {
        const char* name;
        std::string input;
        std::string want;
    };
    const Case cases[] = {
        {"ascii", "echo hi", "echo hi"},
        {"multi-byte kept", "é € 𝄞", "é € 𝄞"},
        {"nul kept", std::string("a\0b", 3), std::string("a\0b", 3)},
        {"byte-order mark bytes of UTF-16", "\xff\xfe", "\uFFFD\uFFFD"},
        {"lone continuation", "a\x80z", "a\uFFFDz"},
        {"truncated at the end", "ab\xe2\x82", "ab\uFFFD"},
        {"truncated then ascii", "\xe2\x82z", "\uFFFDz"},
        {"overlong slash", "\xc0\xaf", "\uFFFD\uFFFD"},
        {"surrogate", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
        {"above U+10FFFF", "\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
        {"Unicode's table 3-8", "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",
         "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd"},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            BOOST_TEST(valid_utf8(c.input) == c.want);
            BOOST_TEST(is_valid_utf8(valid_utf8(c.input)));
            BOOST_TEST(is_valid_utf8(c.input) == (c.input == c.want));
        }
    }
}

BOOST_AUTO_TEST_CASE(dump_json_writes_strings_that_are_not_utf8) {
    nlohmann::json j = {{"message", "exit 1: \xff\xfe"}, {"\xfe key", 1}};
    std::string text = dump_json(j);
    BOOST_TEST(is_valid_utf8(text));
    auto back = nlohmann::json::parse(text);
    BOOST_TEST(back["message"] == "exit 1: \uFFFD\uFFFD");
    BOOST_TEST(back.contains("\uFFFD key"));
}

// Given a holder, reason or message on the command line that is not UTF-8, then the
// command is refused as a usage error naming the option, before any lock is read: a
// holder id stored with U+FFFD would not read back as the holder that wrote it.
BOOST_AUTO_TEST_CASE(lock_text_options_that_are_not_utf8_are_refused) {
    const std::vector<std::vector<std::string>> cases = {
        {"lock", "acquire", "e1", "--holder", "grp/app#\xff"},
        {"lock", "fail", "e1", "--message", "exit 1: \xff\xfe"},
        {"unlock", "e1", "--reason", "checked \xfe"},
        {"run", "--env", "e1", "--holder=\xff"},
    };
    for (const auto& args : cases) {
        BOOST_TEST_CONTEXT(args[0] + " " + args[1]) {
            auto r = test::capture_run([&args](Context& ctx) { return run_cli(args, ctx); });
            BOOST_TEST(r.code == k_exit_usage);
            BOOST_TEST(r.err.find("is not valid UTF-8") != std::string::npos, r.err);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
