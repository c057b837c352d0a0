#include "runner/config/config_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "runner/config/config.h"

namespace envgate {

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + cost});
            diag = up;
        }
    }
    return row[b.size()];
}

std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates) {
    // A typo changes a few characters; beyond a third of the word it is another word.
    const size_t limit = std::max<size_t>(2, word.size() / 3);
    std::optional<std::string> best;
    size_t best_distance = limit + 1;
    for (const auto& c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best_distance && d < std::max(word.size(), c.size())) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::string node_kind(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Map:
            return "a mapping";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Scalar:
            return node.Scalar().empty() ? "an empty string"
                                         : fmt::format("the string \"{}\"", node.Scalar());
        case YAML::NodeType::Null:
            return "nothing (null)";
        case YAML::NodeType::Undefined:
            break;
    }
    return "nothing";
}

namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        out += (i == 0 ? "" : ", ") + items[i];
    }
    return out;
}

}  // namespace

void YamlFields::index_null_values(const YAML::Node& root) {
    if (root.IsMap()) {
        for (const auto& kv : root) {
            if (kv.second.IsNull()) {
                m_null_keys.emplace(kv.second.Mark().pos, kv.first.Mark());
            }
            index_null_values(kv.second);
        }
    } else if (root.IsSequence()) {
        for (const auto& item : root) {
            index_null_values(item);
        }
    }
}

YAML::Mark YamlFields::where(const YAML::Node& node) const {
    if (!node.IsDefined()) {
        return YAML::Mark::null_mark();
    }
    if (node.IsNull()) {
        auto it = m_null_keys.find(node.Mark().pos);
        if (it != m_null_keys.end()) {
            return it->second;
        }
    }
    return node.Mark();
}

void YamlFields::error(const YAML::Mark& mark, const std::string& field,
                       const std::string& message) {
    std::string where = m_file;
    if (!mark.is_null()) {
        where += fmt::format(":{}:{}", mark.line + 1, mark.column + 1);
    }
    m_errors.push_back({mark, field.empty() ? fmt::format("{}: {}", where, message)
                                            : fmt::format("{}: {}: {}", where, field, message)});
}

std::vector<std::string> YamlFields::errors() const {
    std::vector<Entry> sorted = m_errors;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
        return std::pair(a.mark.line, a.mark.column) < std::pair(b.mark.line, b.mark.column);
    });
    std::vector<std::string> out;
    for (auto& e : sorted) {
        out.push_back(std::move(e.text));
    }
    return out;
}

bool YamlFields::expect_map(const YAML::Node& node, const std::string& field) {
    if (node.IsMap() || node.IsNull()) {
        return true;
    }
    error(where(node), field, "expected a mapping, got " + node_kind(node));
    return false;
}

void YamlFields::check_keys(const YAML::Node& map, const std::string& field,
                            const std::vector<std::string>& allowed) {
    if (!map.IsMap()) {
        return;
    }
    std::set<std::string> seen;
    for (const auto& kv : map) {
        const YAML::Node& key = kv.first;
        if (!key.IsScalar()) {
            error(key.Mark(), field, "keys must be plain names, got " + node_kind(key));
            continue;
        }
        const std::string& name = key.Scalar();
        std::string path = field.empty() ? name : field + "." + name;
        if (!seen.insert(name).second) {
            error(key.Mark(), path, "duplicate key");
        } else if (name == "<<") {
            error(key.Mark(), path, "YAML merge keys are not supported; use `defaults`");
        } else if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            auto guess = did_you_mean(name, allowed);
            error(key.Mark(), path,
                  guess ? fmt::format("unknown key; did you mean \"{}\"?", *guess)
                        : fmt::format("unknown key; expected one of: {}", join(allowed)));
        }
    }
}

std::optional<std::string> YamlFields::read_non_empty(const YAML::Node& node,
                                                      const std::string& field,
                                                      const std::string& if_empty) {
    std::optional<std::string> s = read_string(node, field);
    if (s && s->empty()) {
        error(where(node), field, if_empty);
        return std::nullopt;
    }
    return s;
}

std::optional<std::string> YamlFields::read_string(const YAML::Node& node,
                                                   const std::string& field) {
    if (!node.IsScalar()) {
        error(where(node), field, "expected a string, got " + node_kind(node));
        return std::nullopt;
    }
    // yaml-cpp tags a plain scalar "?" and a quoted one "!". Any other tag asks for a
    // value envgate would not produce: `!!binary` would run the base64 text as it is.
    const std::string& tag = node.Tag();
    if (tag != "?" && tag != "!" && tag != "tag:yaml.org,2002:str") {
        const std::string core = "tag:yaml.org,2002:";
        const std::string shown = tag.rfind(core, 0) == 0 ? "!!" + tag.substr(core.size()) : tag;
        error(where(node), field,
              fmt::format("expected a plain string, got a value tagged {} (envgate does not "
                          "decode tags: write the text itself, without the tag)",
                          shown));
        return std::nullopt;
    }
    // A NUL ends a string for the shell, the kernel and Kubernetes: the rest would be lost.
    if (node.Scalar().find('\0') != std::string::npos) {
        error(where(node), field,
              "contains a NUL character (\\0), which no command, name or path can carry");
        return std::nullopt;
    }
    return node.Scalar();
}

std::optional<std::vector<std::string>> YamlFields::read_string_list(const YAML::Node& node,
                                                                     const std::string& field) {
    if (!node.IsSequence()) {
        error(where(node), field, "expected a list of strings, got " + node_kind(node));
        return std::nullopt;
    }
    std::vector<std::string> out;
    bool ok = true;
    for (size_t i = 0; i < node.size(); ++i) {
        auto s = read_string(node[i], fmt::format("{}[{}]", field, i));
        if (s && s->empty()) {
            error(where(node[i]), fmt::format("{}[{}]", field, i), "must not be empty");
            s.reset();
        }
        ok = ok && s.has_value();
        if (s) {
            out.push_back(*s);
        }
    }
    return ok ? std::optional(out) : std::nullopt;
}

std::optional<int> YamlFields::read_int(const YAML::Node& node, const std::string& field) {
    if (node.IsScalar()) {
        const std::string& s = node.Scalar();
        int v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc{} && p == s.data() + s.size()) {
            return v;
        }
    }
    error(where(node), field, "expected a whole number, got " + node_kind(node));
    return std::nullopt;
}

std::optional<Duration> YamlFields::read_duration(const YAML::Node& node, const std::string& field,
                                                  Duration min) {
    auto text = read_string(node, field);
    if (!text) {
        return std::nullopt;
    }
    auto d = parse_duration(*text);
    if (!d) {
        error(where(node), field,
              fmt::format("\"{}\" is not a duration (write e.g. 90s, 5m, 2h, 1h30m)", *text));
        return std::nullopt;
    }
    if (*d > k_max_duration) {
        error(where(node), field,
              fmt::format("\"{}\" is too long; the maximum is {}", *text,
                          format_duration(k_max_duration)));
        return std::nullopt;
    }
    if (*d < min) {
        error(where(node), field,
              fmt::format("\"{}\" is too short; the minimum is {}", *text, format_duration(min)));
        return std::nullopt;
    }
    return d;
}

std::optional<size_t> YamlFields::read_choice(const YAML::Node& node, const std::string& field,
                                              const std::vector<std::string>& names) {
    auto text = read_string(node, field);
    if (!text) {
        return std::nullopt;
    }
    auto it = std::find(names.begin(), names.end(), *text);
    if (it != names.end()) {
        return static_cast<size_t>(it - names.begin());
    }
    auto guess = did_you_mean(*text, names);
    error(where(node), field,
          fmt::format("\"{}\" is not one of: {}{}", *text, join(names),
                      guess ? fmt::format(" (did you mean \"{}\"?)", *guess) : ""));
    return std::nullopt;
}

}  // namespace envgate
