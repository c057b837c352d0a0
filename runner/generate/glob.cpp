#include "runner/generate/glob.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

// The pattern as the matcher reads it: no leading "./" or "/", and a trailing '/'
// spelled "/**" (everything below the folder).
std::string normalized(std::string_view pattern) {
    if (pattern.starts_with("./")) {
        pattern.remove_prefix(2);
    }
    while (pattern.starts_with('/')) {
        pattern.remove_prefix(1);
    }
    std::string out(pattern);
    if (out.ends_with('/')) {
        out += "**";
    }
    return out;
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
            auto cls = match_class(pattern, i, 'a');
            i = cls ? cls->end : i + 1;
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

}  // namespace

std::string glob_error(std::string_view pattern) {
    for (std::size_t p = 0; p < pattern.size(); ++p) {
        if (pattern[p] == '\\') {
            ++p;  // an escaped character, `\[` included
        } else if (pattern[p] == '[') {
            auto cls = match_class(pattern, p, '\0');
            if (!cls) {
                return "'[' at column " + std::to_string(p + 1) +
                       " opens a character class that is never closed with ']' (write \\[ for "
                       "a literal bracket)";
            }
            p = cls->end - 1;
        }
    }
    return "";
}

bool glob_match(std::string_view pattern, std::string_view path) {
    std::string p = normalized(pattern);
    return Matcher(p, path).match(0, 0);
}

Glob::Glob(std::string_view pattern) : m_pattern(normalized(pattern)) {
    std::vector<Run> runs = literal_runs(m_pattern);
    if (runs.size() == 1 && runs[0].begin == 0 && runs[0].end == m_pattern.size()) {
        m_literal = true;
        m_prefix = m_pattern;
        return;
    }
    std::string_view p = m_pattern;
    for (const Run& run : runs) {
        std::string_view text = p.substr(run.begin, run.end - run.begin);
        if (run.begin == 0) {
            m_prefix = text;
        } else if (run.end == p.size()) {
            m_suffix = text;
        } else if (text.size() > m_infix.size()) {
            m_infix = text;
        }
    }
    std::size_t slash = m_pattern.rfind('/');
    std::string_view head = p.substr(0, slash == std::string::npos ? 0 : slash);
    if (head.find_first_of("[\\") == std::string_view::npos) {  // the last '/' is a real one
        std::string_view last = p.substr(slash == std::string::npos ? 0 : slash + 1);
        m_basename_prefix = last.substr(0, last.find_first_of("*?[\\"));
    }
    m_below_dir = m_prefix.ends_with('/') && m_pattern.size() == m_prefix.size() + 2 &&
                  m_pattern.ends_with("**");
}

bool Glob::matches(std::string_view path) const {
    if (m_literal) {
        return path == m_pattern;
    }
    if (!path.starts_with(m_prefix)) {
        return false;
    }
    if (m_below_dir) {
        return path.size() > m_prefix.size();
    }
    if (path.size() < m_prefix.size() + m_suffix.size() || !path.ends_with(m_suffix)) {
        return false;
    }
    if (!m_infix.empty() && path.find(m_infix) == std::string_view::npos) {
        return false;
    }
    return Matcher(m_pattern, path).match(0, 0);
}

PathIndex::PathIndex(const std::vector<std::string>& paths) : m_paths(paths) {
    m_sorted.resize(paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
        m_sorted[i] = i;
    }
    if (!std::is_sorted(paths.begin(), paths.end())) {  // the diff's paths come sorted
        std::sort(m_sorted.begin(), m_sorted.end(),
                  [&](std::size_t a, std::size_t b) { return paths[a] < paths[b]; });
    }
}

const std::vector<std::size_t>& PathIndex::ending_with(const std::string& suffix) {
    auto it = m_by_suffix.find(suffix);
    if (it == m_by_suffix.end()) {
        std::vector<std::size_t> found;
        for (std::size_t i = 0; i < m_paths.size(); ++i) {
            if (m_paths[i].ends_with(suffix)) {
                found.push_back(i);
            }
        }
        it = m_by_suffix.emplace(suffix, std::move(found)).first;
    }
    return it->second;
}

namespace {

// The range of `order` (indices sorted by `key`) whose keys start with `prefix`.
template <typename Key>
std::pair<const std::size_t*, const std::size_t*> prefix_range(
    const std::vector<std::size_t>& order, std::string_view prefix, Key key) {
    const std::size_t* first = order.data();
    const std::size_t* last = first + order.size();
    auto from = std::lower_bound(first, last, prefix,
                                 [&](std::size_t i, std::string_view p) { return key(i) < p; });
    auto to = std::upper_bound(from, last, prefix, [&](std::string_view p, std::size_t i) {
        return p < key(i).substr(0, p.size());
    });
    return {from, to};
}

}  // namespace

PathIndex::Range PathIndex::starting_with(std::string_view prefix) const {
    return prefix_range(m_sorted, prefix,
                        [&](std::size_t i) { return std::string_view(m_paths[i]); });
}

PathIndex::Range PathIndex::basename_starting_with(std::string_view prefix) {
    if (m_basenames.size() != m_paths.size()) {
        // Sorted on the first 8 bytes as one integer first: the same order as by
        // the whole name (names hold no NUL), with far fewer string comparisons.
        struct Entry {
            std::uint64_t key;
            std::string_view name;
            std::size_t index;
        };
        std::vector<Entry> entries;
        entries.reserve(m_paths.size());
        for (std::size_t i = 0; i < m_paths.size(); ++i) {
            std::string_view name = std::string_view(m_paths[i]).substr(m_paths[i].rfind('/') + 1);
            std::uint64_t key = 0;
            for (std::size_t b = 0; b < 8; ++b) {
                key = (key << 8) | (b < name.size() ? static_cast<unsigned char>(name[b]) : 0U);
            }
            entries.push_back({key, name, i});
        }
        std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
            return a.key != b.key ? a.key < b.key : a.name < b.name;
        });
        m_basenames.resize(m_paths.size());
        m_sorted_by_basename.clear();
        for (const Entry& e : entries) {
            m_basenames[e.index] = e.name;
            m_sorted_by_basename.push_back(e.index);
        }
    }
    return prefix_range(m_sorted_by_basename, prefix,
                        [&](std::size_t i) { return m_basenames[i]; });
}

std::vector<std::size_t> PathIndex::matching(const Glob& glob) {
    constexpr std::ptrdiff_t k_few = 64;  // not worth looking further
    Range candidates{m_sorted.data(), m_sorted.data() + m_sorted.size()};
    if (!glob.prefix().empty()) {
        candidates = starting_with(glob.prefix());
    }
    if (candidates.second - candidates.first > k_few && !glob.basename_prefix().empty()) {
        Range by_basename = basename_starting_with(glob.basename_prefix());
        if (by_basename.second - by_basename.first < candidates.second - candidates.first) {
            candidates = by_basename;
        }
    }
    std::vector<std::size_t> out;
    auto size = static_cast<std::ptrdiff_t>(m_sorted.size());
    if (candidates.second - candidates.first == size && !glob.suffix().empty()) {
        for (std::size_t i : ending_with(glob.suffix())) {
            if (glob.matches(m_paths[i])) {
                out.push_back(i);
            }
        }
        return out;
    }
    for (const std::size_t* it = candidates.first; it != candidates.second; ++it) {
        if (glob.matches(m_paths[*it])) {
            out.push_back(*it);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace envgate
