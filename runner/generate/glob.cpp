#include "runner/generate/glob.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace envgate {
namespace {

// Matches a character class starting at pattern[p] == '['. Returns the index just
// past the closing ']' and whether `c` is in the class, or nullopt when the class
// is not closed (then '[' is an ordinary character).
struct ClassMatch {
    std::size_t end;
    bool matched;
};

std::optional<ClassMatch> match_class(std::string_view pattern, std::size_t p, char c) {
    std::size_t i = p + 1;
    bool negated = false;
    if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
        negated = true;
        ++i;
    }
    bool matched = false;
    bool first = true;
    while (i < pattern.size() && (first || pattern[i] != ']')) {
        first = false;
        char lo = pattern[i];
        if (lo == '\\' && i + 1 < pattern.size()) {
            lo = pattern[++i];
        }
        char hi = lo;
        if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            hi = pattern[i + 2];
            if (hi == '\\' && i + 3 < pattern.size()) {
                ++i;
                hi = pattern[i + 2];
            }
            i += 2;
        }
        if (lo <= c && c <= hi) {
            matched = true;
        }
        ++i;
    }
    if (i >= pattern.size()) {
        return std::nullopt;
    }
    return ClassMatch{i + 1, matched != negated && c != '/'};
}

// Backtracking matcher with a memo of (pattern index, path index) pairs already
// known to fail, so `**` and `*` runs stay polynomial.
class Matcher {
  public:
    Matcher(std::string_view pattern, std::string_view path)
        : m_pattern(pattern),
          m_path(path),
          m_failed((pattern.size() + 1) * (path.size() + 1), false) {}

    bool match(std::size_t p, std::size_t s) {
        std::size_t key = p * (m_path.size() + 1) + s;
        if (m_failed[key]) {
            return false;
        }
        bool ok = match_uncached(p, s);
        if (!ok) {
            m_failed[key] = true;
        }
        return ok;
    }

  private:
    bool at_segment_start(std::size_t p) const { return p == 0 || m_pattern[p - 1] == '/'; }

    bool match_uncached(std::size_t p, std::size_t s) {
        if (p == m_pattern.size()) {
            return s == m_path.size();
        }
        char pc = m_pattern[p];
        if (pc == '*') {
            return match_star(p, s);
        }
        if (s == m_path.size()) {
            return false;
        }
        char c = m_path[s];
        if (pc == '?') {
            return c != '/' && match(p + 1, s + 1);
        }
        if (pc == '[') {
            auto cls = match_class(m_pattern, p, c);
            if (cls) {
                return cls->matched && match(cls->end, s + 1);
            }
            return c == '[' && match(p + 1, s + 1);
        }
        if (pc == '\\' && p + 1 < m_pattern.size()) {
            return c == m_pattern[p + 1] && match(p + 2, s + 1);
        }
        return c == pc && match(p + 1, s + 1);
    }

    bool match_star(std::size_t p, std::size_t s) {
        bool double_star = p + 1 < m_pattern.size() && m_pattern[p + 1] == '*';
        if (double_star && at_segment_start(p)) {
            std::size_t after = p + 2;
            if (after < m_pattern.size() && m_pattern[after] == '/') {
                return match_any_directories(after + 1, s);  // `**/`
            }
            if (after == m_pattern.size() && p > 0) {
                return s < m_path.size();  // trailing `/**`: something below
            }
            if (after == m_pattern.size()) {
                return true;  // the whole pattern is `**`
            }
        }
        std::size_t next = p + 1;
        while (next < m_pattern.size() && m_pattern[next] == '*') {
            ++next;
        }
        for (std::size_t i = s;; ++i) {
            if (match(next, i)) {
                return true;
            }
            if (i == m_path.size() || m_path[i] == '/') {
                return false;
            }
        }
    }

    // `**/` then the rest at `p`: try the rest at `s` and after every '/' from `s`.
    bool match_any_directories(std::size_t p, std::size_t s) {
        if (match(p, s)) {
            return true;
        }
        for (std::size_t i = s; i < m_path.size(); ++i) {
            if (m_path[i] == '/' && match(p, i + 1)) {
                return true;
            }
        }
        return false;
    }

    std::string_view m_pattern;
    std::string_view m_path;
    std::vector<bool> m_failed;
};

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
    if (pattern.starts_with("./")) {
        pattern.remove_prefix(2);
    }
    while (pattern.starts_with('/')) {
        pattern.remove_prefix(1);
    }
    if (pattern.ends_with('/')) {  // a folder: everything below it
        std::string below = std::string(pattern) + "**";
        return Matcher(below, path).match(0, 0);
    }
    return Matcher(pattern, path).match(0, 0);
}

}  // namespace envgate
