// Quoting a word for a POSIX shell, for the commands envgate prints for people to paste
// (kubectl logs, envgate unlock, the child pipeline's scripts). One quoting rule; each
// caller names the characters it leaves bare.
#pragma once

#include <string>
#include <string_view>

namespace envgate {

// `text` as one shell word: unchanged when it is not empty and every character is in
// `bare`; otherwise single-quoted, each ' inside written as '\''.
std::string quote_for_shell(std::string_view text, std::string_view bare);

}  // namespace envgate
