// The bounded reader: positions, multi-document streams, and every limit turning a
// hostile input into an error naming file and line instead of a crash or an OOM.
#include <boost/test/unit_test.hpp>
#include <deque>
#include <sstream>
#include <string>

#include "runner/lint/lint.h"
#include "runner/lint/yaml_tree.h"

using namespace envgate;
using namespace envgate::lint;

namespace {

std::vector<const Node*> roots(const std::string& text, Status& status,
                               const ReadLimits& limits = {}) {
    static std::deque<Document> keep;  // the nodes live as long as their document
    keep.clear();
    std::vector<const Node*> out;
    status = read_documents(text, "in.yaml", limits, [&](Document& d) {
        keep.push_back(std::move(d));
        out.push_back(keep.back().root);
        return Status::ok();
    });
    return out;
}

// A billion-laughs document: each level has ten aliases of the one above.
std::string yaml_bomb(int levels) {
    std::string s =
        "a0: &a0 "
        "[\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    for (int i = 1; i <= levels; ++i) {
        std::string prev = "*a" + std::to_string(i - 1);
        s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
        for (int j = 0; j < 10; ++j) {
            s += (j ? "," : "") + prev;
        }
        s += "]\n";
    }
    return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(lint_reader)

// Given a stream of three documents, then each is read with 1-based positions.
BOOST_AUTO_TEST_CASE(reads_each_document_of_a_stream_with_positions) {
    std::string text = "a: 1\n---\nkind: Job\nspec:\n  backoffLimit: 2\n---\n- x\n";
    std::vector<Position> kinds;
    int docs = 0;
    Status s = read_documents(text, "in.yaml", {}, [&](Document& d) {
        ++docs;
        if (const Node* spec = d.root->get("spec")) {
            kinds.push_back(spec->get("backoffLimit")->pos);
        }
        return Status::ok();
    });
    BOOST_TEST(s.is_ok());
    BOOST_TEST(docs == 3);
    BOOST_REQUIRE(kinds.size() == 1u);
    BOOST_TEST(kinds[0].line == 5);
    BOOST_TEST(kinds[0].column == 17);
}

// Given a YAML syntax error, then the error names the file and the line.
BOOST_AUTO_TEST_CASE(syntax_error_names_file_and_line) {
    Status s;
    roots("kind: Deployment\nspec:\n  replicas: [1, 2\n", s);
    BOOST_TEST(!s.is_ok());
    BOOST_TEST(s.message().starts_with("in.yaml:"), s.message());
    BOOST_TEST(s.message().find("not valid YAML") != std::string::npos, s.message());
}

// Given a billion-laughs bomb, then the alias budget stops it with a clear error.
BOOST_AUTO_TEST_CASE(yaml_bomb_is_refused_by_the_alias_budget) {
    Status s;
    roots(yaml_bomb(9), s);
    BOOST_TEST(!s.is_ok());
    BOOST_TEST(s.message().find("aliases are expanded") != std::string::npos, s.message());
    BOOST_TEST(s.message().starts_with("in.yaml:"), s.message());
}

// Given aliases that stay small, then they are read (shared, not refused).
BOOST_AUTO_TEST_CASE(small_aliases_are_read) {
    Status s;
    auto r = roots("base: &b {image: x}\nother: *b\n", s);
    BOOST_TEST(s.is_ok(), s.message());
    BOOST_REQUIRE(r.size() == 1u);
    BOOST_TEST(r[0]->get("other")->get("image")->text() == "x");
}

// Given nesting deeper than the limit (block and flow), then a depth error.
BOOST_AUTO_TEST_CASE(deep_nesting_is_refused) {
    Status s;
    roots(std::string(100000, '[') + std::string(100000, ']'), s);
    BOOST_TEST(s.message().find("nested deeper than 100") != std::string::npos, s.message());
    std::string block;
    for (int i = 0; i < 200; ++i) {
        block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
    }
    roots(block, s);
    BOOST_TEST(s.message().find("nested deeper") != std::string::npos, s.message());
}

// Given a document larger than the document limit, then it is refused by size.
BOOST_AUTO_TEST_CASE(huge_document_is_refused) {
    ReadLimits limits;
    limits.max_document_bytes = 1 << 20;
    std::string text = "items:\n";
    while (text.size() < (2u << 20)) {
        text += "  - abcdefghijklmnopqrstuvwxyz0123456789\n";
    }
    Status s;
    roots(text, s, limits);
    BOOST_TEST(s.message().find("document larger than 1 MiB") != std::string::npos, s.message());
}

// Given input over the source limit (a file or stdin), then it is refused unread.
BOOST_AUTO_TEST_CASE(source_over_the_limit_is_refused) {
    ReadLimits limits;
    limits.max_source_bytes = 1000;
    std::istringstream in(std::string(5000, 'a'));
    auto r = read_source(in, "-", limits);
    BOOST_TEST(!r.is_ok());
    BOOST_TEST(r.status().message() == "-: larger than 0 MiB; split the input");
    Status s;
    roots(std::string(5000, 'a'), s, limits);
    BOOST_TEST(!s.is_ok());
}

// Given binary garbage, then an error, not a crash.
BOOST_AUTO_TEST_CASE(binary_garbage_is_an_error) {
    std::string junk;
    for (int i = 0; i < 4096; ++i) {
        junk.push_back(static_cast<char>((i * 7919) % 256));
    }
    Status s;
    roots(junk, s);
    BOOST_TEST(!s.is_ok());
    roots("\x89PNG\r\n\x1a\n{{{{", s);
    BOOST_TEST(!s.is_ok());
}

// Given a document starting with a flow comma (found by lint_fuzz), yaml-cpp 0.7
// returns empty documents forever; then the reader stops with an error.
BOOST_AUTO_TEST_CASE(parser_going_round_in_circles_is_an_error) {
    for (const char* text : {",a: b\n", "---\n,apiVersion: apps/v1\nkind: Deployment\n"}) {
        Status s;
        roots(text, s);
        BOOST_TEST(
            s.message() == "in.yaml: not valid YAML or JSON: the parser stopped making progress",
            s.message());
    }
}

// Given a workload field of the wrong type, then the error names file:line:col: field.
BOOST_AUTO_TEST_CASE(wrong_field_type_names_the_field) {
    Linter linter({}, {});
    Status s =
        linter.add("d.yaml", "kind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: many\n");
    BOOST_TEST(s.message() == "d.yaml:4:13: spec.replicas: expected an integer");
}

// Given a literal block script, then a position inside it is its own line and column.
BOOST_AUTO_TEST_CASE(literal_block_positions_are_exact) {
    Status s;
    auto r = roots("args:\n  - |\n    echo a\n    ./migrate\n", s);
    BOOST_REQUIRE(r.size() == 1u);
    const Node* script = r[0]->get("args")->items[0];
    BOOST_TEST(script->literal_block);
    BOOST_TEST(script->block_column == 5);
    Text t{script->value, {"f", script->pos}, true, script->block_column};
    Location at = t.at(script->value.find("./migrate"));
    BOOST_TEST(at.pos.line == 4);
    BOOST_TEST(at.pos.column == 5);
}

BOOST_AUTO_TEST_SUITE_END()
