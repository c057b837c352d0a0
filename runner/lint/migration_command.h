// Recognising a database migration in a container's command line: the command and
// args as Kubernetes passes them to exec, `sh -c` scripts split into their simple
// commands, wrappers (exec, env, bundle exec, npx, tini, ...) looked through, then
// the migration tools of each ecosystem matched by their own subcommands.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace envgate::lint {

// An argument of the container's exec line (command, then args).
struct Arg {
    std::string text;
    std::size_t index;  // position in command + args
};

struct MigrationMatch {
    std::size_t arg;     // which exec argument holds it
    std::size_t offset;  // where in that argument (inside a `sh -c` script)
    std::string what;    // the migration as written, e.g. "rails db:migrate"
};

// Every migration the exec line `argv` runs, in order.
std::vector<MigrationMatch> find_migrations(const std::vector<Arg>& argv);

// The same for a shell script (an entrypoint script kept in a ConfigMap); `arg` of
// each match is 0 and `offset` is in `script`.
std::vector<MigrationMatch> find_migrations_in_script(const std::string& script);

// True when `words` (a simple command, wrappers included) runs a migration; the
// description is returned. Exposed for the table-driven tests.
std::optional<std::string> migration_in(const std::vector<std::string>& words);

}  // namespace envgate::lint
