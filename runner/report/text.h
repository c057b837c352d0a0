// Small text helpers shared by the renderers: escaping for XML/HTML, removal of
// terminal escapes and characters XML cannot carry, and size caps.
#pragma once

#include <string>
#include <string_view>

namespace envgate {

// Drops ANSI escape sequences and control characters other than \n and \t, and
// replaces bytes that are not UTF-8 with U+FFFD.
std::string strip_control(std::string_view text);

// Escapes & < > " ' for XML or HTML text and attributes (after strip_control).
std::string xml_escape(std::string_view text);

// The first line of `text`, at most `max` bytes (UTF-8 safe), with "…" when cut.
std::string first_line(std::string_view text, size_t max = 200);

// `text` cut to `max` bytes with a note saying how much was dropped.
std::string cap_size(std::string_view text, size_t max);

}  // namespace envgate
