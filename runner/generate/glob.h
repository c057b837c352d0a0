// Path globs of envgate.yml `paths:` (what the generator matches changed files
// against): `**` spans directories, `*` and `?` stay within one path segment, and
// `[abc]`, `[a-z]`, `[!a]` / `[^a]` are character classes. Pure; no file system.
#pragma once

#include <string_view>

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

}  // namespace envgate
