// docs/lint.md cannot drift from the registry: its reference section must equal
// what `envgate lint --list-checks` prints.
#include <boost/test/unit_test.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "runner/lint/render.h"

BOOST_AUTO_TEST_SUITE(lint_docs)

// Given docs/lint.md, then the text between its check markers is the registry's.
BOOST_AUTO_TEST_CASE(docs_page_matches_the_registry) {
    std::ifstream in(std::string(ENVGATE_FIXTURES) + "/../../docs/lint.md");
    BOOST_REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    const std::string page = text.str();
    const std::string begin = "<!-- checks:begin (envgate lint --list-checks) -->\n\n";
    const std::string end = "<!-- checks:end -->";
    auto b = page.find(begin);
    auto e = page.find(end);
    BOOST_REQUIRE(b != std::string::npos);
    BOOST_REQUIRE(e != std::string::npos);
    std::string section = page.substr(b + begin.size(), e - b - begin.size());
    BOOST_TEST(section == envgate::lint::render_checks_markdown(),
               "docs/lint.md is out of date; regenerate its checks section with "
               "`envgate lint --list-checks`");
}

BOOST_AUTO_TEST_SUITE_END()
