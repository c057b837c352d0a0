// Path globs of envgate.yml `paths:` (what the generator matches changed files
// against): `**` spans directories, `*` and `?` stay within one path segment, and
// `[abc]`, `[a-z]`, `[!a]` / `[^a]` are character classes. Pure; no file system.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace envgate {

// True when `path` (relative, '/'-separated, as git reports it) matches all of
// `pattern`. Rules, as in .gitignore / git pathspec `:(glob)`:
//   `**/` at the start or after a '/' matches zero or more whole directories;
//   a trailing `/**` matches everything below the directory (not the directory);
//   any other `**` behaves as `*`;
//   `*` matches any run of characters except '/'; `?` one character except '/';
//   `[...]` one character (never '/') from the class, `[!...]`/`[^...]` negated,
//   `a-z` ranges; `\x` matches `x` literally. A leading "/" or "./" in the pattern
//   is ignored; a trailing '/' means everything below that folder (as `/**`). An
//   unclosed '[' is matched literally.
bool glob_match(std::string_view pattern, std::string_view path);

// Why `pattern` is not a glob a person meant, or "" when it is: a '[' that opens a
// class never closed (`app/[abc`), which glob_match would take literally.
std::string glob_error(std::string_view pattern);

// One glob compiled for many paths: the same answers as glob_match, with the
// literal text every match must start with, end with and contain checked first,
// so most non-matching paths cost a string comparison.
class Glob {
  public:
    explicit Glob(std::string_view pattern);

    bool matches(std::string_view path) const;
    // Every path the glob matches starts with prefix() and ends with suffix().
    const std::string& prefix() const { return m_prefix; }
    const std::string& suffix() const { return m_suffix; }
    // Every path the glob matches has a last segment (after its last '/') starting
    // with this ("" when unknown).
    const std::string& basename_prefix() const { return m_basename_prefix; }

  private:
    std::string m_pattern;  // with the leading "/" or "./" removed, a trailing '/' as "/**"
    std::string m_prefix;
    std::string m_suffix;
    std::string m_basename_prefix;
    std::string m_infix;       // the longest literal run between them, "" if none
    bool m_literal = false;    // no metacharacter: the path must equal the pattern
    bool m_below_dir = false;  // `dir/**`: anything below `dir/`
};

// Many globs against one list of paths (the generator: every environment's globs
// against every changed path). A glob is tried only on the paths that start with
// its literal prefix (a range of the paths in sorted order), or whose last segment
// starts with the glob's (a range of the paths sorted by last segment), whichever
// are fewer; else on those that end with its literal suffix (found once per
// suffix). Keeps a reference to `paths`, which must outlive it.
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

    const std::vector<std::string>& m_paths;
    std::vector<std::size_t> m_sorted;                            // indices of m_paths, by path
    std::vector<std::string_view> m_basenames;                    // built on first use
    std::vector<std::size_t> m_sorted_by_basename;                // indices of m_paths, by basename
    std::map<std::string, std::vector<std::size_t>> m_by_suffix;  // memo of ending_with
};

}  // namespace envgate
