// Given a glob of envgate.yml `paths` and a changed path, then glob_match says
// whether the path belongs to the environment: `**` across directories, `*` and
// `?` within one segment, character classes, escapes and the odd edges.
#include "runner/generate/glob.h"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <string>
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
    // trailing /**: everything below, at any depth, but not the directory itself
    {"releases/gstg/**", "releases/gstg/values.yaml", true},
    {"releases/gstg/**", "releases/gstg/a/b/c.yaml", true},
    {"releases/gstg/**", "releases/gstg", false},
    {"releases/gstg/**", "releases/gstg-canary/values.yaml", false},
    {"releases/gstg/**", "other/releases/gstg/x", false},
    // leading **/: any depth, including none
    {"**/values.yaml", "values.yaml", true},
    {"**/values.yaml", "a/b/values.yaml", true},
    {"**/values.yaml", "a/b/my-values.yaml", false},
    // middle /**/: zero or more directories
    {"a/**/b.txt", "a/b.txt", true},
    {"a/**/b.txt", "a/x/b.txt", true},
    {"a/**/b.txt", "a/x/y/z/b.txt", true},
    {"a/**/b.txt", "ab.txt", false},
    {"a/**/b.txt", "a/xb.txt", false},
    {"a/**/x/**/b", "a/1/x/2/3/b", true},
    {"a/**/x/**/b", "a/1/y/2/3/b", false},
    // ** not a whole segment behaves as *
    {"a/**b", "a/xxb", true},
    {"a/**b", "a/x/b", false},
    {"a**/b", "abc/b", true},
    // * stays within a segment
    {"releases/*/values.yaml", "releases/gstg/values.yaml", true},
    {"releases/*/values.yaml", "releases/a/b/values.yaml", false},
    {"releases/*.yaml", "releases/.yaml", true},
    {"*", "top.txt", true},
    {"*", "dir/file", false},
    {"**", "dir/file", true},
    {"*.yaml", "values.yaml", true},
    {"g*t*", "gstg-test", true},
    // ? is one character, never '/'
    {"env?/x", "env1/x", true},
    {"env?/x", "env/x", false},
    {"env?/x", "env12/x", false},
    {"a?b", "a/b", false},
    // character classes
    {"env[12]/x", "env1/x", true},
    {"env[12]/x", "env3/x", false},
    {"env[a-c]/x", "envb/x", true},
    {"env[a-c]/x", "envd/x", false},
    {"env[!a-c]/x", "envd/x", true},
    {"env[^a-c]/x", "enva/x", false},
    {"a[/]b", "a/b", false},
    {"[]]x", "]x", true},
    {"x[-a]", "x-", true},
    {"unclosed[ab", "unclosed[ab", true},
    {"unclosed[ab", "unclosedab", false},
    // escapes
    {"a\\*b", "a*b", true},
    {"a\\*b", "axb", false},
    {"a\\?", "a?", true},
    // pattern prefixes that mean the repository root
    {"/releases/**", "releases/x", true},
    {"./releases/**", "releases/x", true},
    // empty pieces
    {"", "", true},
    {"", "a", false},
    // a trailing '/' is the folder's content
    {"releases/gstg/", "releases/gstg/values.yaml", true},
    {"releases/gstg/", "releases/gstg/a/b", true},
    {"releases/gstg/", "releases/gstg", false},
    {"releases/gstg/", "releases/gstg-canary/x", false},
    // many stars stay fast and correct
    {"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    {"**/**/**/**/**/z", "a/b/c/d/e/f/g/h/i/j/y", false},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_glob_suite)

// Given each (pattern, path) case, then glob_match answers as in .gitignore globs.
BOOST_AUTO_TEST_CASE(glob_match_follows_gitignore_rules) {
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
                                         "**"};
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

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
