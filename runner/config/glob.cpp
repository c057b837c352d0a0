#include "runner/config/glob.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

// What "as GitLab matches" means. GitLab's rules:changes clause
// (gitlab-org/gitlab lib/gitlab/ci/build/rules/rule/clause/changes.rb, `match?`)
// calls, for each changed path and glob:
//   File.fnmatch?(glob, path, File::FNM_PATHNAME | File::FNM_DOTMATCH | File::FNM_EXTGLOB)
// Ruby defines that in dir.c: FNM_EXTGLOB first expands `{}` (ruby_brace_expand) and
// the path matches when any expansion does; each expansion is then matched segment by
// segment between '/' (fnmatch with FNM_PATHNAME, where a leading `**/` is retried at
// every later segment), each segment with one backtracking point at the last `*`
// (fnmatch_helper) and classes read by `bracket`. FNM_DOTMATCH turns off every rule
// about leading dots. The functions below follow those steps, quirks included
// (an unclosed '[' fails instead of matching itself, `[]` is empty, a trailing '\'
// matches nothing, `\/` separates segments), so that envgate and GitLab pick the same
// environments; test/generate/glob_ruby_diff.cpp checks it against Ruby itself.

namespace envgate {
namespace {

constexpr std::size_t k_max_alternatives = 1024;

// The length of the UTF-8 character at s[i], or 0 when the bytes there are not one
// (Ruby's rb_enc_precise_mbclen: only a whole, valid character counts).
std::size_t utf8_char_len(std::string_view s, std::size_t i) {
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char b = byte(i);
    std::size_t len = b < 0x80                 ? 1
                      : b >= 0xC2 && b <= 0xDF ? 2
                      : b >= 0xE0 && b <= 0xEF ? 3
                      : b >= 0xF0 && b <= 0xF4 ? 4
                                               : 0;
    if (len == 0 || i + len > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            return 0;
        }
    }
    unsigned char second = len > 1 ? byte(i + 1) : 0x80;
    if ((b == 0xE0 && second < 0xA0) || (b == 0xED && second > 0x9F) ||
        (b == 0xF0 && second < 0x90) || (b == 0xF4 && second > 0x8F)) {
        return 0;  // overlong, a surrogate, or above U+10FFFF
    }
    return len;
}

// How far one character reaches: a valid UTF-8 character, else one byte (Ruby's
// rb_enc_mbclen).
std::size_t char_len(std::string_view s, std::size_t i) {
    std::size_t len = utf8_char_len(s, i);
    return len == 0 ? 1 : len;
}

// The code point at s[i] (a byte that starts no valid character stands for itself).
std::uint32_t code_point(std::string_view s, std::size_t i) {
    std::size_t len = utf8_char_len(s, i);
    auto b = static_cast<unsigned char>(s[i]);
    if (len <= 1) {
        return b;
    }
    std::uint32_t cp = b & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    return cp;
}

// Where the class whose '[' is just before `p` ends (the index past its ']'), or
// nullopt when it never closes; `*matched` (if given) says whether s[at] is in it.
// A ']' right after '[' or '[!' closes the class (so `[]` is empty and `[!]` is
// any character); `\x` is `x`; `a-z` is a range unless the '-' comes before ']'.
std::optional<std::size_t> class_end(std::string_view pattern, std::size_t p, std::string_view s,
                                     std::size_t at, bool* matched) {
    if (p >= pattern.size()) {
        return std::nullopt;
    }
    bool negated = pattern[p] == '!' || pattern[p] == '^';
    p += negated ? 1 : 0;
    bool in = false;
    auto same = [&](std::size_t i, std::size_t len) {
        return matched != nullptr && len <= s.size() - at &&
               pattern.compare(i, len, s, at, len) == 0;
    };
    while (p >= pattern.size() || pattern[p] != ']') {
        std::size_t lo = p < pattern.size() && pattern[p] == '\\' ? p + 1 : p;
        if (lo >= pattern.size()) {
            return std::nullopt;
        }
        std::size_t lo_len = char_len(pattern, lo);
        p = lo + lo_len;
        if (p >= pattern.size()) {
            return std::nullopt;
        }
        if (pattern[p] == '-' && (p + 1 == pattern.size() || pattern[p + 1] != ']')) {
            std::size_t hi = p + 1 < pattern.size() && pattern[p + 1] == '\\' ? p + 2 : p + 1;
            if (hi >= pattern.size()) {
                return std::nullopt;
            }
            std::size_t hi_len = char_len(pattern, hi);
            p = hi + hi_len;
            if (!in && matched != nullptr) {
                std::uint32_t c = code_point(s, at);
                in = same(lo, lo_len) || same(hi, hi_len) ||
                     (code_point(pattern, lo) <= c && c <= code_point(pattern, hi));
            }
        } else if (!in) {
            in = same(lo, lo_len);
        }
    }
    if (matched != nullptr) {
        *matched = in != negated;
    }
    return p + 1;
}

// Matches one segment of `pat` from `p` against one of `path` from `s` (each ends at
// '/' or the end). On a match `p` is left at the pattern segment's end and `s`
// somewhere in the path's segment (a final `*` takes the rest). The one backtracking
// point is the last `*`: on a mismatch it takes one more character.
bool match_segment(std::string_view pat, std::string_view path, std::size_t& p, std::size_t& s) {
    auto pat_end = [&](std::size_t i) { return i >= pat.size() || pat[i] == '/'; };
    auto path_end = [&](std::size_t i) { return i >= path.size() || path[i] == '/'; };
    auto unescape = [&](std::size_t i) { return i < pat.size() && pat[i] == '\\' ? i + 1 : i; };
    std::optional<std::size_t> star_p;
    std::size_t star_s = 0;
    while (true) {
        char pc = p < pat.size() ? pat[p] : '\0';
        if (pc == '*') {
            while (p < pat.size() && pat[p] == '*') {
                ++p;
            }
            if (pat_end(unescape(p))) {
                p = unescape(p);
                return true;
            }
            if (path_end(s)) {
                return false;
            }
            star_p = p;
            star_s = s;
            continue;
        }
        if (pc == '?' || pc == '[') {
            if (path_end(s)) {
                return false;
            }
            bool in = true;
            std::optional<std::size_t> next = p + 1;
            if (pc == '[') {
                next = class_end(pat, p + 1, path, s, &in);
            }
            if (next && in) {
                p = *next;
                s += char_len(path, s);
                continue;
            }
        } else {
            p = unescape(p);
            if (path_end(s)) {
                return pat_end(p);
            }
            std::size_t len = pat_end(p) ? 0 : utf8_char_len(pat, p);
            if (len != 0 && len <= path.size() - s && pat.compare(p, len, path, s, len) == 0) {
                p += len;
                s += len;
                continue;
            }
        }
        if (!star_p) {
            return false;
        }
        p = *star_p;
        star_s += char_len(path, star_s);
        s = star_s;
    }
}

// A brace-free pattern against a path, segment by segment. After a `**/` (one or
// more, at a segment start) a failure retries the rest of the pattern from the next
// path segment on.
bool match_pathname(std::string_view pat, std::string_view path) {
    auto recursion_at = [&](std::size_t i) { return pat.substr(i, 3) == "**/"; };
    std::size_t p = 0;
    std::size_t s = 0;
    std::optional<std::size_t> retry_p;
    std::size_t retry_s = 0;
    while (true) {
        if (recursion_at(p)) {
            while (recursion_at(p)) {
                p += 3;
            }
            retry_p = p;
            retry_s = s;
        }
        if (match_segment(pat, path, p, s)) {
            s = std::min(path.find('/', s), path.size());
            if (p < pat.size() && s < path.size()) {
                ++p;  // both at a '/'
                ++s;
                continue;
            }
            if (p >= pat.size() && s >= path.size()) {
                return true;
            }
        }
        std::size_t slash = retry_p ? path.find('/', retry_s) : std::string_view::npos;
        if (slash == std::string_view::npos) {
            return false;
        }
        p = *retry_p;
        retry_s = slash + 1;
        s = retry_s;
    }
}

// Calls `each` with each brace-free pattern `pattern` expands to, in Ruby's order,
// until it returns true; returns whether it did. The first '{' pairs with the '}'
// that closes it; each ','-separated piece at its level replaces the group and the
// result is expanded again. A pattern whose first '{' is never closed expands to
// nothing; a '}' before any '{' is literal; `\` escapes the character after it.
bool expand_braces(const std::string& pattern,
                   const std::function<bool(const std::string&)>& each) {
    std::size_t open = std::string::npos;
    std::size_t close = std::string::npos;
    int depth = 0;
    for (std::size_t i = 0; i < pattern.size(); i += char_len(pattern, i)) {
        if (pattern[i] == '{' && depth++ == 0) {
            open = i;
        }
        if (pattern[i] == '}' && open != std::string::npos && --depth == 0) {
            close = i;
            break;
        }
        if (pattern[i] == '\\' && ++i == pattern.size()) {
            break;
        }
    }
    if (open == std::string::npos) {
        return each(pattern);
    }
    if (close == std::string::npos) {
        return false;
    }
    std::size_t i = open;
    while (i < close) {
        std::size_t start = ++i;
        int nest = 0;
        while (i < close && !(pattern[i] == ',' && nest == 0)) {
            nest += pattern[i] == '{' ? 1 : pattern[i] == '}' ? -1 : 0;
            if (pattern[i] == '\\' && ++i == close) {
                break;
            }
            i += char_len(pattern, i);
        }
        std::string one =
            pattern.substr(0, open) + pattern.substr(start, i - start) + pattern.substr(close + 1);
        if (expand_braces(one, each)) {
            return true;
        }
    }
    return false;
}

// The column (1-based) of the first '{' left open at the end, or 0: the pattern
// then matches nothing (expand_braces drops it).
std::size_t unclosed_brace(std::string_view pattern) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\') {
            ++i;
        } else if (pattern[i] == '{') {
            open.push_back(i);
        } else if (pattern[i] == '}' && !open.empty()) {
            open.pop_back();
        }
    }
    return open.empty() ? 0 : open.front() + 1;
}

// Why one brace-free alternative cannot be what was meant, or "".
std::string alternative_error(std::string_view alt) {
    if (alt.starts_with('/') || alt.starts_with("./")) {
        return std::string("starts with '") + (alt[0] == '/' ? "/" : "./") +
               "', which no path in the repository does (they read like k8s/app.yaml); "
               "drop it";
    }
    for (std::size_t p = 0; p < alt.size(); ++p) {
        if (alt[p] == '\\') {
            ++p;  // an escaped character, `\[` included
        } else if (alt[p] == '[') {
            auto end = class_end(alt, p + 1, {}, 0, nullptr);
            if (!end) {
                return "'[' at column " + std::to_string(p + 1) +
                       " opens a character class that is never closed with ']' (write \\[ for "
                       "a literal bracket)";
            }
            if (alt.substr(p, 2) == "[]") {
                return "'[]' at column " + std::to_string(p + 1) +
                       " is an empty character class, which matches nothing (a ']' right after "
                       "'[' ends the class; write \\] for a literal bracket)";
            }
            p = *end - 1;
        }
    }
    if (alt.ends_with('/')) {
        return "ends with '/', so it matches no file; write " + std::string(alt) +
               "**/* for every file below that folder";
    }
    if (alt == "**" || alt.ends_with("/**")) {
        std::string dir(alt.substr(0, alt.size() - 2));
        return "matches only the files directly in " + (dir.empty() ? "the top folder" : dir) +
               " (GitLab reads a final ** as *); write " + dir + "**/* for every file below " +
               (dir.empty() ? "it" : "that folder") + ", or " + dir + "* for that level alone";
    }
    return "";
}

// A run of literal characters of a pattern: [begin, end) in the pattern.
struct Run {
    std::size_t begin;
    std::size_t end;
};

// The runs of plain characters that any match holds verbatim. Conservative: an
// escaped character, a character class, an unclosed '[' and the '/' after `**`
// (which `**/` may match as nothing) all end a run without joining one.
std::vector<Run> literal_runs(std::string_view pattern) {
    std::vector<Run> runs;
    std::size_t start = 0;
    auto close = [&](std::size_t at) {
        if (at > start) {
            runs.push_back({start, at});
        }
    };
    std::size_t i = 0;
    while (i < pattern.size()) {
        char c = pattern[i];
        if (c != '*' && c != '?' && c != '[' && c != '\\') {
            ++i;
            continue;
        }
        close(i);
        if (c == '\\') {
            i += 2;
        } else if (c == '[') {
            i = class_end(pattern, i + 1, {}, 0, nullptr).value_or(i + 1);
        } else if (c == '*') {
            std::size_t stars = i;
            while (i < pattern.size() && pattern[i] == '*') {
                ++i;
            }
            if (i - stars > 1 && i < pattern.size() && pattern[i] == '/') {
                ++i;
            }
        } else {
            ++i;
        }
        start = std::min(i, pattern.size());
    }
    close(pattern.size());
    return runs;
}

Glob::Alternative compile(std::string pattern) {
    Glob::Alternative a;
    a.pattern = std::move(pattern);
    std::string_view p = a.pattern;
    std::vector<Run> runs = literal_runs(p);
    if (runs.size() == 1 && runs[0].begin == 0 && runs[0].end == p.size()) {
        a.literal = true;
        a.prefix = a.pattern;
        return a;
    }
    for (const Run& run : runs) {
        std::string_view text = p.substr(run.begin, run.end - run.begin);
        if (run.begin == 0) {
            a.prefix = text;
        } else if (run.end == p.size()) {
            a.suffix = text;
        } else if (text.size() > a.infix.size()) {
            a.infix = text;
        }
    }
    std::size_t slash = p.rfind('/');
    std::string_view head = p.substr(0, slash == std::string::npos ? 0 : slash);
    if (head.find_first_of("[\\") == std::string_view::npos) {  // the last '/' is a real one
        std::string_view last = p.substr(slash == std::string::npos ? 0 : slash + 1);
        a.basename_prefix = last.substr(0, last.find_first_of("*?[\\"));
    }
    return a;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
    return expand_braces(std::string(pattern),
                         [&](const std::string& one) { return match_pathname(one, path); });
}

std::string glob_error(std::string_view pattern) {
    if (pattern.find('\0') != std::string_view::npos) {
        return "contains a NUL character";
    }
    if (std::size_t column = unclosed_brace(pattern); column != 0) {
        return "'{' at column " + std::to_string(column) +
               " is never closed with '}', so the pattern matches nothing (write \\{ for a "
               "literal brace)";
    }
    std::vector<std::string> alternatives;
    bool too_many = expand_braces(std::string(pattern), [&](const std::string& one) {
        alternatives.push_back(one);
        return alternatives.size() > k_max_alternatives;
    });
    if (too_many) {
        return "its braces expand to more than " + std::to_string(k_max_alternatives) +
               " patterns; split it";
    }
    for (const std::string& one : alternatives) {
        if (std::string why = alternative_error(one); !why.empty()) {
            return one == pattern ? why : "its alternative \"" + one + "\" " + why;
        }
    }
    return "";
}

Glob::Glob(std::string_view pattern) {
    expand_braces(std::string(pattern), [&](const std::string& one) {
        m_alternatives.push_back(compile(one));
        return false;
    });
}

bool Glob::Alternative::matches(std::string_view path) const {
    if (literal) {
        return path == pattern;
    }
    if (!path.starts_with(prefix) || path.size() < prefix.size() + suffix.size() ||
        !path.ends_with(suffix)) {
        return false;
    }
    if (!infix.empty() && path.find(infix) == std::string_view::npos) {
        return false;
    }
    return match_pathname(pattern, path);
}

bool Glob::matches(std::string_view path) const {
    return std::any_of(m_alternatives.begin(), m_alternatives.end(),
                       [&](const Alternative& a) { return a.matches(path); });
}

}  // namespace envgate
