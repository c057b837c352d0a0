// Path globs of envgate.yml (`paths:`, `ci.deploy_branches`, `lint.exclude_paths`),
// matched exactly as GitLab matches `rules:changes`: Ruby's File.fnmatch? with
// FNM_PATHNAME | FNM_DOTMATCH | FNM_EXTGLOB. Pure; no file system.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace envgate {

// True when `path` (relative, '/'-separated, as git reports it) matches all of
// `pattern`, with the answer GitLab gives for `rules:changes` (see glob.cpp for
// where that is defined). In short:
//   `{a,b}` is either alternative (nested braces too), expanded before anything else;
//     an unclosed '{' makes the pattern match nothing;
//   `*` matches any run of characters but '/' (empty too); `?` one character but '/';
//   `**/` as a whole segment matches zero or more directories; any other `**` is `*`,
//     so `dir/**` is the files directly in dir/, and `dir/**/*` everything below it;
//   `[...]` one character but '/' from the class, `[!...]`/`[^...]` negated, `a-z`
//     ranges; `[]` is an empty class (matches nothing) and an unclosed '[' never matches;
//   `\x` is `x`; names starting with '.' are matched like any other.
// Characters are UTF-8 code points.
bool glob_match(std::string_view pattern, std::string_view path);

// Why `pattern` cannot be what a person meant, or "" when it can: a '[' or '{' never
// closed, an empty class `[]`, a leading "/" or "./" or a trailing '/' (no repository
// path has them), a trailing `**` (GitLab reads it as `*`, one level only), more than
// 1024 alternatives. GitLab accepts all of these silently and matches nothing (or
// less than was meant).
std::string glob_error(std::string_view pattern);

// One glob compiled for many paths: the same answers as glob_match. Each brace
// alternative keeps the literal text every match must start with, end with and
// contain, checked first, so most non-matching paths cost a string comparison.
class Glob {
  public:
    explicit Glob(std::string_view pattern);

    bool matches(std::string_view path) const;

    // One brace alternative (a pattern without `{}`), and what its matches share.
    struct Alternative {
        std::string pattern;
        std::string prefix;           // every match starts with this
        std::string suffix;           // every match ends with this
        std::string basename_prefix;  // every match's last segment starts with this
        std::string infix;            // the longest literal run between, "" if none
        bool literal = false;         // no metacharacter: the path must equal `pattern`

        bool matches(std::string_view path) const;
    };
    const std::vector<Alternative>& alternatives() const { return m_alternatives; }

  private:
    std::vector<Alternative> m_alternatives;
};

// Many globs against one list of paths (the generator: every environment's globs
// against every changed path). Each alternative of a glob is tried only on the paths
// that start with its literal prefix (a range of the paths in sorted order), or whose
// last segment starts with the alternative's (a range of the paths sorted by last
// segment), whichever are fewer; else on those that end with its literal suffix
// (found once per suffix). Keeps a reference to `paths`, which must outlive it.
class PathIndex {
  public:
    explicit PathIndex(const std::vector<std::string>& paths);

    // The indices into `paths` of the paths `glob` matches, ascending.
    std::vector<std::size_t> matching(const Glob& glob);

  private:
    using Range = std::pair<const std::size_t*, const std::size_t*>;
    Range starting_with(std::string_view prefix) const;
    Range basename_starting_with(std::string_view prefix);
    const std::vector<std::size_t>& ending_with(const std::string& suffix);
    void add_matching(const Glob::Alternative& alt, std::vector<std::size_t>& out);

    const std::vector<std::string>& m_paths;
    std::vector<std::size_t> m_sorted;                            // indices of m_paths, by path
    std::vector<std::string_view> m_basenames;                    // built on first use
    std::vector<std::size_t> m_sorted_by_basename;                // indices of m_paths, by basename
    std::map<std::string, std::vector<std::size_t>> m_by_suffix;  // memo of ending_with
};

}  // namespace envgate
