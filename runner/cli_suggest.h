// After a command line that did not parse: "did you mean" for a mistyped command or
// option, from the commands and options the command line defines.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace envgate {

// One line per argument that `app` (after a failed parse) could not place, for the
// deepest command it did recognise: `envgate: unknown command "stauts"; did you mean
// "status"?`, with the guess when a command or option of that command is close. ""
// when every argument was placed (the error is of another kind).
std::string suggest_for_parse_error(const CLI::App& app);

// The deepest command `app` (after a parse, failed or not) recognised: "envgate lock".
std::string parsed_command_path(const CLI::App& app);

// Where to read next after a usage error in the command `path`: "Run 'envgate lock
// --help' for its usage and options.", one line.
std::string help_pointer(const std::string& path);

}  // namespace envgate
