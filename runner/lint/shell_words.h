// Splits a shell command line into the simple commands it runs, the way sh reads
// them: quotes, escapes, comments, `&&` `||` `;` `|` `&` chains, subshells and
// `$(...)`. Enough to see which programs a container's `sh -c` string starts;
// it expands nothing.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace envgate::lint {

struct Word {
    std::string text;    // with quotes and escapes removed
    std::size_t offset;  // where the word starts in the script
};

using SimpleCommand = std::vector<Word>;

// The simple commands of `script`, in order, reserved words (if, then, do, ...)
// and leading NAME=value assignments removed.
std::vector<SimpleCommand> split_commands(std::string_view script);

}  // namespace envgate::lint
