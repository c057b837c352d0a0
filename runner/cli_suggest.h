// After a command line that did not parse: "did you mean" for a mistyped command or
// option, from the commands and options the command line defines.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace envgate {

// One line per argument that `app` (after a failed parse) could not place and that is
// close to a command or option of the deepest command it did recognise:
// `envgate: unknown command "stauts"; did you mean "status"?`. "" when none is close.
std::string suggest_for_parse_error(const CLI::App& app);

}  // namespace envgate
