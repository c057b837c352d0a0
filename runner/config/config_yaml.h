// Reading typed fields out of a yaml-cpp tree while collecting precise errors:
// every message is "file:line:column: field.path: what is wrong", with the position
// taken from the node's YAML::Mark (1-based in the message). Used by load_config.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/base/vocab/time.h"

namespace envgate {

// The closest of `candidates` to `word` by edit distance, when close enough to be a
// plausible typo; nullopt otherwise.
std::optional<std::string> did_you_mean(std::string_view word,
                                        const std::vector<std::string>& candidates);

// Levenshtein distance (insertions, deletions, substitutions).
size_t edit_distance(std::string_view a, std::string_view b);

// "a mapping", "a list", "a string", "null": what a node is, for messages.
std::string node_kind(const YAML::Node& node);

class YamlFields {
  public:
    explicit YamlFields(std::string file) : m_file(std::move(file)) {}

    // Records "file:line:col: field: message" at `mark` (or at the file when the
    // mark is unknown).
    void error(const YAML::Mark& mark, const std::string& field, const std::string& message);
    // The errors recorded so far, in the order of their position in the file.
    std::vector<std::string> errors() const;
    bool has_errors() const { return !m_errors.empty(); }
    const std::string& file() const { return m_file; }

    // True when `node` is a mapping (or null, which reads as an empty mapping).
    // Records an error otherwise.
    bool expect_map(const YAML::Node& node, const std::string& field);

    // Records an error for each key of `map` not in `allowed` (with a did-you-mean),
    // for non-scalar keys and for keys that appear twice.
    void check_keys(const YAML::Node& map, const std::string& field,
                    const std::vector<std::string>& allowed);

    // Each returns nullopt (and records an error) when the node has the wrong shape. A
    // string is a scalar without a tag (or `!!str`) and without a NUL character.
    std::optional<std::string> read_string(const YAML::Node& node, const std::string& field);
    std::optional<std::vector<std::string>> read_string_list(const YAML::Node& node,
                                                             const std::string& field);
    // A string that may not be empty: an empty one records `if_empty` as the error.
    std::optional<std::string> read_non_empty(const YAML::Node& node, const std::string& field,
                                              const std::string& if_empty = "must not be empty");
    std::optional<int> read_int(const YAML::Node& node, const std::string& field);
    // `min` is the smallest accepted value; the message names it.
    std::optional<Duration> read_duration(const YAML::Node& node, const std::string& field,
                                          Duration min);

    // One of `names` (the text of each enum value, in order); returns its index.
    std::optional<size_t> read_choice(const YAML::Node& node, const std::string& field,
                                      const std::vector<std::string>& names);

    // Remembers where the key of every null value under `root` is, because yaml-cpp
    // marks an empty value (`key:`) at the token after it, often the next line.
    void index_null_values(const YAML::Node& root);

    // Where to report a problem with `node`: its mark, or for a null value its key's.
    YAML::Mark where(const YAML::Node& node) const;

  private:
    std::string m_file;
    struct Entry {
        YAML::Mark mark;
        std::string text;
    };
    std::vector<Entry> m_errors;
    std::map<int, YAML::Mark> m_null_keys;  // null value's mark.pos -> its key's mark
};

}  // namespace envgate
