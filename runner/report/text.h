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

// The first line of `text`, at most `max` bytes, with "…" when cut. A long line is cut
// at the last space before `max` (a reader never sees half a word: "Details: kubec…");
// only a single word longer than half of `max` is cut inside it, on a UTF-8 boundary.
std::string first_line(std::string_view text, size_t max = 200);

// `message` without the place where it names `command` (". Details: CMD", ". Logs: CMD",
// " (kubectl describe shows why: CMD)"), for a report that shows `command` on its own
// (a code block, a line of its own): the gates' messages name their command because a
// Kubernetes event or condition has nowhere else to put it. Unchanged when `message`
// does not name `command` that way.
std::string without_command(std::string_view message, std::string_view command);

// `text` cut to `max` bytes with a note saying how much was dropped.
std::string cap_size(std::string_view text, size_t max);

}  // namespace envgate
