// PathIndex (glob.h): which of many paths each glob matches, trying a glob's
// alternatives only on the paths their literal prefix, last segment or suffix allow.
#include "runner/config/glob.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace envgate {

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

void PathIndex::add_matching(const Glob::Alternative& alt, std::vector<std::size_t>& out) {
    constexpr std::ptrdiff_t k_few = 64;  // not worth looking further
    Range candidates{m_sorted.data(), m_sorted.data() + m_sorted.size()};
    if (!alt.prefix.empty()) {
        candidates = starting_with(alt.prefix);
    }
    if (candidates.second - candidates.first > k_few && !alt.basename_prefix.empty()) {
        Range by_basename = basename_starting_with(alt.basename_prefix);
        if (by_basename.second - by_basename.first < candidates.second - candidates.first) {
            candidates = by_basename;
        }
    }
    auto size = static_cast<std::ptrdiff_t>(m_sorted.size());
    if (candidates.second - candidates.first == size && !alt.suffix.empty()) {
        for (std::size_t i : ending_with(alt.suffix)) {
            if (alt.matches(m_paths[i])) {
                out.push_back(i);
            }
        }
        return;
    }
    for (const std::size_t* it = candidates.first; it != candidates.second; ++it) {
        if (alt.matches(m_paths[*it])) {
            out.push_back(*it);
        }
    }
}

std::vector<std::size_t> PathIndex::matching(const Glob& glob) {
    std::vector<std::size_t> out;
    for (const Glob::Alternative& alt : glob.alternatives()) {
        add_matching(alt, out);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace envgate
