// Given a glob of envgate.yml `paths` and a changed path, then glob_match says
// whether the path belongs to the environment as GitLab's rules:changes would:
// braces, `**/` across directories, `*` and `?` within one segment, character
// classes, escapes and the odd edges (each want checked with Ruby's File.fnmatch?).
#include "runner/config/glob.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>
#include <vector>

namespace envgate {
namespace {

struct Case {
    const char* pattern;
    const char* path;
    bool want;
};

const Case k_cases[] = {
    // literal
    {"releases/gstg/values.yaml", "releases/gstg/values.yaml", true},
    {"releases/gstg/values.yaml", "releases/gstg/values.yml", false},
    {"releases/gstg", "releases/gstg/values.yaml", false},  // no implicit prefix match
    // the pattern: braces, then **/ across directories
    {"k8s/{staging,common}/**/*.yaml", "k8s/staging/a.yaml", true},
    {"k8s/{staging,common}/**/*.yaml", "k8s/common/x/y/b.yaml", true},
    {"k8s/{staging,common}/**/*.yaml", "k8s/prod/a.yaml", false},
    // a final ** is *: the files directly in the folder only
    {"releases/gstg/**", "releases/gstg/values.yaml", true},
    {"releases/gstg/**", "releases/gstg/a/b/c.yaml", false},
    {"releases/gstg/**/*", "releases/gstg/a/b/c.yaml", true},
    {"releases/gstg/**/*", "releases/gstg", false},
    {"releases/gstg/**/*", "releases/gstg-canary/values.yaml", false},
    {"**", "dir/file", false},
    {"**", "top", true},
    // leading **/: any depth, including none, dot folders too
    {"**/values.yaml", "values.yaml", true},
    {"**/values.yaml", "a/b/values.yaml", true},
    {"**/values.yaml", ".hidden/values.yaml", true},
    {"**/values.yaml", "a/b/my-values.yaml", false},
    // middle /**/: zero or more directories
    {"a/**/b.txt", "a/b.txt", true},
    {"a/**/b.txt", "a/x/y/z/b.txt", true},
    {"a/**/b.txt", "ab.txt", false},
    {"a/**/b.txt", "a/xb.txt", false},
    {"a/**/x/**/b", "a/1/x/2/3/b", true},
    {"a/**/x/**/b", "a/1/y/2/3/b", false},
    // ** not a whole segment behaves as *
    {"a/**b", "a/xxb", true},
    {"a/**b", "a/x/b", false},
    {"a**/b", "abc/b", true},
    // * stays within a segment, matches dot names and the empty string
    {"releases/*/values.yaml", "releases/gstg/values.yaml", true},
    {"releases/*/values.yaml", "releases/a/b/values.yaml", false},
    {"releases/*.yaml", "releases/.yaml", true},
    {"*", ".env", true},
    {"*", "dir/file", false},
    {"g*t*", "gstg-test", true},
    // ? is one character (a UTF-8 one too), never '/'
    {"env?/x", "env1/x", true},
    {"env?/x", "env/x", false},
    {"env?/x", "envé/x", true},
    {"a?b", "a/b", false},
    // character classes
    {"env[12]/x", "env1/x", true},
    {"env[a-c]/x", "envd/x", false},
    {"env[!a-c]/x", "envd/x", true},
    {"env[^a-c]/x", "enva/x", false},
    {"a[/]b", "a/b", false},
    {"[]]x", "]x", false},  // `[]` is an empty class, then "]x"
    {"[!]", "x", true},
    {"x[-a]", "x-", true},
    {"[a\\-c]", "b", false},
    {"unclosed[ab", "unclosed[ab", false},  // an unclosed '[' never matches
    // braces: nested, empty alternatives, escaped, unclosed
    {"{a,{b,c}d}e", "cde", true},
    {"{,a}b", "b", true},
    {"\\{a,b}", "{a,b}", true},
    {"{a\\,b}", "a,b", true},
    {"{a,b", "a", false},
    {"{a,b", "{a,b", false},
    {"a}", "a}", true},
    {"{a/b,c}/d", "a/b/d", true},
    // escapes
    {"a\\*b", "a*b", true},
    {"a\\*b", "axb", false},
    {"a\\/b", "a/b", true},
    {"a\\", "a", true},
    // no root prefixes: git paths have none
    {"/releases/*", "releases/x", false},
    {"./releases/*", "releases/x", false},
    // empty pieces
    {"", "", true},
    {"", "a", false},
    {"releases/gstg/", "releases/gstg/values.yaml", false},
    // many stars stay fast and correct
    {"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    {"**/**/**/**/**/z", "a/b/c/d/e/f/g/h/i/j/y", false},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_glob_suite)

// Given each (pattern, path) case, then glob_match answers as GitLab's rules:changes.
BOOST_AUTO_TEST_CASE(glob_match_answers_as_gitlab_rules_changes) {
    for (const Case& c : k_cases) {
        BOOST_TEST_CONTEXT("pattern '" << c.pattern << "' path '" << c.path << "'") {
            BOOST_TEST(glob_match(c.pattern, c.path) == c.want);
        }
    }
}

// Given every pattern and path of the table, plus globs of the shapes envgate.yml
// uses, then a compiled Glob answers as glob_match, and PathIndex (which tries a
// glob only on the paths its literal prefix, last segment or suffix allow) finds
// exactly the paths glob_match accepts, in any input order.
BOOST_AUTO_TEST_CASE(compiled_globs_and_path_index_agree_with_glob_match) {
    std::vector<std::string> patterns = {"envs/a/**",
                                         "charts/*/values-a.yaml",
                                         "**/a-[0-9]*.tfvars",
                                         "regions/r1/",
                                         "**/values.yaml",
                                         "a/**/b.txt",
                                         "x",
                                         "*.yaml",
                                         "**/b",
                                         "a/b",
                                         "[ab]/x",
                                         "**",
                                         "{envs,charts}/**/*.yaml",
                                         "{a,b/x,tf/r/a-*}"};
    std::vector<std::string> paths = {"envs/a/x.yaml",
                                      "envs/ab/x.yaml",
                                      "envs/a",
                                      "charts/c1/values-a.yaml",
                                      "charts/c1/values-ab.yaml",
                                      "charts/c1/sub/values-a.yaml",
                                      "tf/r/a-1.tfvars",
                                      "tf/r/a-x.tfvars",
                                      "a-2.tfvars",
                                      "regions/r1/k/c.conf",
                                      "regions/r10/c.conf",
                                      "values.yaml",
                                      "b",
                                      "a/b",
                                      "a/x/b.txt",
                                      "x",
                                      "a/x",
                                      "b/x",
                                      "top.yaml"};
    for (const Case& c : k_cases) {
        patterns.emplace_back(c.pattern);
        paths.emplace_back(c.path);
    }
    for (bool sorted : {false, true}) {
        if (sorted) {
            std::sort(paths.begin(), paths.end());
        }
        PathIndex index(paths);
        for (const auto& pattern : patterns) {
            Glob glob(pattern);
            std::vector<std::size_t> want;
            for (std::size_t i = 0; i < paths.size(); ++i) {
                BOOST_TEST_CONTEXT("pattern '" << pattern << "' path '" << paths[i] << "'") {
                    BOOST_TEST(glob.matches(paths[i]) == glob_match(pattern, paths[i]));
                }
                if (glob_match(pattern, paths[i])) {
                    want.push_back(i);
                }
            }
            BOOST_TEST_CONTEXT("pattern '" << pattern << "', sorted " << sorted) {
                BOOST_TEST(index.matching(glob) == want, boost::test_tools::per_element());
            }
        }
    }
}

// Given a pattern GitLab accepts but that cannot be what was meant, then glob_error
// says why and what to write; a pattern that can be meant gets "".
BOOST_AUTO_TEST_CASE(glob_error_names_patterns_that_match_nothing_or_less_than_meant) {
    const std::pair<const char*, const char*> cases[] = {
        {"app/[abc", "'[' at column 5 opens a character class that is never closed"},
        {"app/[]x]", "'[]' at column 5 is an empty character class"},
        {"k8s/{staging,common/*.yaml", "'{' at column 5 is never closed with '}'"},
        {"/k8s/*.yaml", "starts with '/'"},
        {"./k8s/*.yaml", "starts with './'"},
        {"k8s/", "ends with '/', so it matches no file; write k8s/**/* for every file"},
        {"k8s/**",
         "matches only the files directly in k8s/ (GitLab reads a final ** as *); "
         "write k8s/**/* for every file below that folder, or k8s/* for that level"},
        {"**", "matches only the files directly in the top folder"},
        {"{a,b/**}", "its alternative \"b/**\" matches only the files directly in b/"},
        {"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}",
         "its braces expand to more than 1024 patterns"},
    };
    for (const auto& [pattern, want] : cases) {
        BOOST_TEST_CONTEXT("pattern '" << pattern << "'") {
            std::string why = glob_error(pattern);
            BOOST_TEST(why.find(want) != std::string::npos, why);
        }
    }
    for (const char* fine : {"k8s/{staging,common}/**/*.yaml", "k8s/*", "a\\[b", "[!]x", "}{a,b}",
                             "**/*", "release/*"}) {
        BOOST_TEST(glob_error(fine) == "", fine);
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
