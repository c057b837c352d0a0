// Writing the child pipeline's strings without yaml-cpp's per-character regular
// expressions: yaml-cpp 0.7 tests every string it emits for plain style with a
// compound regex at each character (about 15 % of a one-commit `envgate generate`)
// and has no manipulator that asks for a plain scalar.
#pragma once

#include <string_view>

#include <yaml-cpp/emitter.h>

namespace envgate {

// Whether `text` may be written as a plain scalar in block context exactly as
// yaml-cpp would write it: a conservative subset of yaml-cpp's own test (printable
// ASCII, no indicator first, no ": ", no "#", no trailing ':' or space, not null,
// at most 1024 bytes), so a string accepted here is one yaml-cpp would also emit
// plain, byte for byte.
bool is_plain_in_block(std::string_view text);

// Whether a YAML 1.1 reader (GitLab's) may take plain `text` for something other than
// a string: a boolean word (`on`, `yes`, `N`, ...), a number (`1.10`, `0x1f`, `1_000`,
// `1:20`, `.inf`) or a timestamp (`2026-12-01`). Conservative: it may say yes for a
// string no reader would convert (quoting it costs nothing).
bool reads_as_non_string(std::string_view text);

// Writes `text` as the next scalar of `out`: double-quoted when
// reads_as_non_string(text) (yaml-cpp would write `on` or `1.10` bare), as it is when
// is_plain_in_block(text), else through yaml-cpp's own choice of style. REQUIRES: `out`
// is in block context (not inside a flow sequence or map) and no string manipulator is
// pending.
void emit_text(YAML::Emitter& out, std::string_view text);

// `out << Text{s}`: emit_text in an emitter chain, with the same REQUIRES.
struct Text {
    std::string_view text;
};

inline YAML::Emitter& operator<<(YAML::Emitter& out, Text t) {
    emit_text(out, t.text);
    return out;
}

}  // namespace envgate
