// emit_text against yaml-cpp itself: for every string, in a block sequence and as a
// map's key and value, the document it writes is byte for byte the one yaml-cpp
// writes on its own, and reads back as the same string.
#include "runner/generate/plain_scalar.h"

#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>

#include <random>
#include <string>
#include <vector>

namespace envgate {
namespace {

struct Case {
    std::string text;
    bool plain;  // want is_plain_in_block
};

// Strings of the kinds the child pipeline holds, and the ones yaml-cpp must quote.
const std::vector<Case> k_cases = {
    {"stage", true},
    {"env-000-diff", true},
    {"envgate-report/junit.xml", true},
    {"envgate lock acquire gstg --config envgate.yml --step diff", true},
    {"envgate gate --env gstg --gate pre --manifest 'jobs/a b.yaml' --config envgate.yml", true},
    {"helmfile -e $ENVGATE_ENV diff", true},
    {"$ENVGATE_ENV", true},
    {"./scripts/smoke", true},
    {"a:b", true},
    {"1h 30m", true},
    {"registry.example.com/tools/envgate:0.1.0", true},
    {"set --; for f in a.yaml; do if [ -f \"$f\" ]; then set -- \"$@\" \"$f\"; fi; done", true},
    {"envgate lock fail gstg --message \"failed in $CI_PIPELINE_URL\"", true},
    {"echo \"envgate: no 'diff' step in the config; nothing to run\"", false},
    {"", false},
    {"~", false},
    {"null", false},
    {"NULL", false},
    {"key: value", false},
    {"ends with colon:", false},
    {"trailing space ", false},
    {" leading space", false},
    {"- dash", false},
    {"--config", false},
    {"*alias", false},
    {"&anchor", false},
    {"!tag", false},
    {"'quoted'", false},
    {"\"quoted\"", false},
    {"[flow]", false},
    {"{flow}", false},
    {"%directive", false},
    {"@at", false},
    {"`tick", false},
    {"|literal", false},
    {">folded", false},
    {"?question", false},
    {"a # comment", false},
    {"a#b", false},
    {"tab\there", false},
    {"two\nlines", false},
    {"caf\xc3\xa9", false},
    {std::string(1025, 'a'), false},
};

// yaml-cpp's own writing of `text`: double-quoted where a YAML 1.1 reader would not
// read it back as a string (what emit_text asks of yaml-cpp then), else its choice.
void yaml_cpp_writes(YAML::Emitter& out, const std::string& text) {
    if (reads_as_non_string(text)) {
        out << YAML::DoubleQuoted;
    }
    out << text;
}

std::string as_seq_item(const std::string& text, bool fast) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key << "k" << YAML::Value << YAML::BeginSeq;
    if (fast) {
        out << Text{text};
    } else {
        yaml_cpp_writes(out, text);
    }
    out << YAML::EndSeq << YAML::EndMap;
    return out.c_str();
}

std::string as_key_and_value(const std::string& text, bool fast) {
    YAML::Emitter out;
    out << YAML::BeginMap << YAML::Key;
    if (fast) {
        out << Text{text} << YAML::Value << Text{text};
    } else {
        yaml_cpp_writes(out, text);
        out << YAML::Value;
        yaml_cpp_writes(out, text);
    }
    out << YAML::EndMap;
    return out.c_str();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_plain_scalar_suite)

// Given each string, then emit_text writes what yaml-cpp writes, and it reads back.
BOOST_AUTO_TEST_CASE(writes_what_yaml_cpp_writes_and_reads_back) {
    for (const auto& c : k_cases) {
        BOOST_TEST_CONTEXT("text: " << c.text.substr(0, 80)) {
            BOOST_TEST(is_plain_in_block(c.text) == c.plain);
            std::string seq = as_seq_item(c.text, true);
            BOOST_TEST(seq == as_seq_item(c.text, false));
            BOOST_TEST(YAML::Load(seq)["k"][0].as<std::string>() == c.text);
            std::string map = as_key_and_value(c.text, true);
            BOOST_TEST(map == as_key_and_value(c.text, false));
            BOOST_TEST(YAML::Load(map)[c.text].as<std::string>() == c.text);
        }
    }
}

// Given 20,000 random strings over the characters YAML treats specially (fixed seed),
// then emit_text writes each as yaml-cpp does: the fast path accepts only strings
// yaml-cpp itself writes plain, wherever the special characters fall.
BOOST_AUTO_TEST_CASE(random_strings_write_what_yaml_cpp_writes) {
    const std::string alphabet = "aZ09_./$ :#-?,[]{}&*!|>'\"%@`~\t\\=";
    std::mt19937 rng(16);
    std::uniform_int_distribution<std::size_t> length(0, 12);
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    int plain = 0;
    for (int n = 0; n < 20000; ++n) {
        std::string text;
        for (std::size_t i = length(rng); i > 0; --i) {
            text += alphabet[pick(rng)];
        }
        plain += is_plain_in_block(text) ? 1 : 0;
        BOOST_TEST_CONTEXT("text: " << text) {
            BOOST_TEST(as_seq_item(text, true) == as_seq_item(text, false));
            BOOST_TEST(as_key_and_value(text, true) == as_key_and_value(text, false));
        }
    }
    BOOST_TEST(plain > 1000);  // the fast path was exercised, not only the fallback
}

// Given a string accepted as plain, then it is written unquoted (the fast path was
// taken: yaml-cpp would otherwise have had the same choice to make).
BOOST_AUTO_TEST_CASE(plain_strings_are_written_unquoted) {
    BOOST_TEST(as_seq_item("helmfile -e $ENVGATE_ENV diff", true) ==
               "k:\n  - helmfile -e $ENVGATE_ENV diff");
}

// Given strings a YAML 1.1 reader (GitLab's) would take for a boolean, a number or a
// date when plain, then they are written double-quoted (yaml-cpp alone writes them
// bare: an environment `on` would reach GitLab as `true`, a version 1.10 as 1.1);
// strings that only look alike stay plain.
BOOST_AUTO_TEST_CASE(strings_a_yaml_1_1_reader_would_convert_are_quoted) {
    for (const char* text :
         {"on", "Off", "yes", "N", "TRUE", "1", "1.10", "-1", "+.5", "0x1f", "0o17", "1_000", "1e3",
          "1:20", ".inf", "-.Inf", ".NaN", "2026-12-01", "2001-12-14t21:59:43.10-05:00"}) {
        BOOST_TEST_CONTEXT("text: " << text) {
            BOOST_TEST(reads_as_non_string(text));
            BOOST_TEST(as_seq_item(text, true) == std::string("k:\n  - \"") + text + "\"");
        }
    }
    for (const char* text : {"one", "onward", "nope", "1h 30m", "v1.10", "env-1", "a1", "x"}) {
        BOOST_TEST_CONTEXT("text: " << text) {
            BOOST_TEST(!reads_as_non_string(text));
            BOOST_TEST(as_seq_item(text, true) == std::string("k:\n  - ") + text);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
