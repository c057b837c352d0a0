// Text from outside (a step's output, a Job's log, a command in envgate.yml, a reason
// typed on the command line) may hold bytes that are not UTF-8; JSON, XML and the
// Kubernetes API take UTF-8 only. These two functions are where such text is made valid.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace envgate {

// `text` with each ill-formed UTF-8 sequence (its maximal subpart, as Unicode's
// "substitution of maximal subparts" says) replaced by U+FFFD; valid text unchanged.
std::string valid_utf8(std::string_view text);

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// The one way envgate turns JSON into text: like `value.dump(indent)`, but a string
// that is not UTF-8 is written with U+FFFD in place of the bad bytes instead of
// throwing, so no text from outside can stop a lock record, a report or an output.
std::string dump_json(const nlohmann::json& value, int indent = -1);

}  // namespace envgate
