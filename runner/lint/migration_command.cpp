// The migration tools recognised, by ecosystem, and the wrappers looked through.
// A word only counts in command position (after wrappers) or as a subcommand of the
// program there, so `echo "run migrate later"` or a tool named migrate-ui does not.
#include "runner/lint/migration_command.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string_view>

#include "runner/lint/shell_words.h"

namespace envgate::lint {
namespace {

using Words = std::vector<std::string>;

struct Hit {
    std::size_t word;
    std::string what;
};

const std::set<std::string, std::less<>> k_shells = {"sh", "bash", "ash", "dash", "zsh", "ksh"};

// Programs whose arguments are data, not a command to run.
const std::set<std::string, std::less<>> k_inert = {
    "echo", "printf", "logger",  "test",  "[",    "[[",   "true", "false", "sleep",     "cat",
    "grep", "ls",     "kubectl", "helm",  "curl", "wget", "git",  "exit",  "return",    "export",
    "set",  "trap",   "cd",      "mkdir", "cp",   "mv",   "rm",   "chmod", "chown",     "touch",
    "wait", "read",   "tee",     "find",  "sed",  "awk",  "psql", "mysql", "pg_isready"};

// Subcommands that only look: status, plans, help, creating a new migration file.
const std::set<std::string, std::less<>> k_read_only = {
    "status",  "info",     "--check", "--plan",  "--list",  "-l",       "list",     "diff",
    "resolve", "validate", "create",  "new",     "make",    "generate", "version",  "--help",
    "-h",      "help",     "show",    "history", "current", "heads",    "--dry-run"};

const std::set<std::string, std::less<>> k_sql_migrators = {
    "goose", "dbmate", "sql-migrate", "tern", "migrate", "geni", "node-pg-migrate", "shmig"};
const std::set<std::string, std::less<>> k_up_words = {"up",   "up-by-one", "up-to", "redo",
                                                       "down", "down-to",   "goto",  "migrate"};

std::string basename_of(std::string_view w) {
    std::size_t slash = w.rfind('/');
    std::string base(slash == std::string_view::npos ? w : w.substr(slash + 1));
    std::transform(base.begin(), base.end(), base.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return base;
}

std::string stem_of(const std::string& base) {
    for (std::string_view ext : {".sh", ".bash", ".py", ".rb", ".js", ".ts", ".exe", ".dll"}) {
        if (base.size() > ext.size() && base.ends_with(ext)) {
            return base.substr(0, base.size() - ext.size());
        }
    }
    return base;
}

bool is_option(const std::string& w) {
    return w.size() > 1 && w[0] == '-';
}

// Skips the options of a wrapper; `with_value` lists options that take the next word.
std::size_t skip_options(const Words& w, std::size_t i,
                         std::initializer_list<std::string_view> with_value) {
    while (i < w.size() && is_option(w[i])) {
        bool takes = std::find(with_value.begin(), with_value.end(), w[i]) != with_value.end();
        if (w[i] == "--") {
            return i + 1;
        }
        i += takes ? 2 : 1;
    }
    return i;
}

bool is_assignment(const std::string& w) {
    std::size_t eq = w.find('=');
    return eq != std::string::npos && eq > 0 && !is_option(w);
}

// The index of the program `w` really runs, past exec, env, nice, tini, bundle exec, ...
std::size_t program_index(const Words& w) {
    static const std::regex k_python("python[0-9.]*");
    std::size_t i = 0;
    while (i < w.size()) {
        std::string b = basename_of(w[i]);
        std::size_t next = i;
        if (b == "exec" || b == "nohup" || b == "command" || b == "setsid" || b == "stdbuf") {
            next = skip_options(w, i + 1, {});
        } else if (b == "env") {
            next = skip_options(w, i + 1, {"-u", "--unset", "-C", "--chdir"});
            while (next < w.size() && is_assignment(w[next])) {
                ++next;
            }
        } else if (b == "nice" || b == "ionice") {
            next = skip_options(w, i + 1, {"-n", "-c"});
        } else if (b == "timeout") {
            next = skip_options(w, i + 1, {"-s", "-k", "--signal", "--kill-after"}) + 1;
        } else if (b == "sudo") {
            next = skip_options(w, i + 1, {"-u", "-g"});
        } else if (b == "su-exec" || b == "gosu" || b == "chpst" || b == "setpriv") {
            next = skip_options(w, i + 1, {"-u"}) + (b == "chpst" || b == "setpriv" ? 0 : 1);
        } else if (b == "tini" || b == "dumb-init" || b == "catatonit" || b == "npx" ||
                   b == "pnpx" || b == "bunx") {
            next = skip_options(w, i + 1, {"-p", "--package", "-s"});
        } else if ((b == "bundle" || b == "poetry" || b == "pipenv" || b == "uv" || b == "pdm" ||
                    b == "npm") &&
                   i + 1 < w.size() && (w[i + 1] == "exec" || w[i + 1] == "run") &&
                   !(b == "npm" && w[i + 1] == "run")) {
            next = skip_options(w, i + 2, {});
        } else if (std::regex_match(b, k_python) && i + 2 < w.size() && w[i + 1] == "-m") {
            next = i + 2;
        } else if ((b.starts_with("python") || b == "node" || b == "ts-node" || b == "ruby" ||
                    b == "php" || b == "bun" || b == "deno") &&
                   i + 1 < w.size() && !is_option(w[i + 1])) {
            next = i + 1;
        }
        if (next == i) {
            return i;
        }
        i = next;
    }
    return i;
}

std::optional<Hit> find_word(const Words& w, std::size_t from,
                             const std::set<std::string, std::less<>>& words) {
    for (std::size_t i = from; i < w.size(); ++i) {
        if (words.contains(w[i])) {
            return Hit{i, ""};
        }
    }
    return std::nullopt;
}

bool any_read_only(const Words& w, std::size_t from) {
    return std::any_of(w.begin() + static_cast<std::ptrdiff_t>(std::min(from, w.size())), w.end(),
                       [](const std::string& s) { return k_read_only.contains(s); });
}

// A subcommand or flag that migrates, whatever the program: db:migrate, migrate:latest,
// migration:run, doctrine:migrations:migrate, ecto.migrate, --migrate, ...
bool migrating_word(const Words& w, std::size_t i) {
    static const std::regex k_word(
        "db:migrate(:(up|redo|primary|[a-z_]+))?|db:prepare|"
        "migrate(:(latest|up|run|deploy|fresh|refresh|reset|rollback|prod|production))?|"
        "migrations?:(run|migrate|up|apply)|doctrine:migrations:migrate|ecto\\.migrate|"
        "flyway:migrate|liquibase:update|-{1,2}(auto-?|run-)?migrat(e|ions?)(=(true|1|yes|on))?|"
        "--migrate-on-(start|boot)");
    const std::string& s = w[i];
    if (s == "db:prepare") {
        return true;
    }
    if (s.find("igrat") == std::string::npos || s == "db:migrate:status" ||
        !std::regex_match(s, k_word)) {
        return false;
    }
    return !(s == "migrate" && any_read_only(w, i + 1));
}

// A path to a program that migrates, given as an argument to a launcher
// (`wait-for-deps /scripts/db-migrate`): the name says "migrate" as a verb, and it is
// no option's value (`--config /etc/migrate.yml`, `--migrations-dir ./migrations`).
bool runs_migrator(const Words& w, std::size_t i) {
    static const std::regex k_verb(
        "(run[-_]?)?(db[-_]?)?migrate([-_](db|database|up|all|schema|deploy))?|"
        "run[-_](db[-_])?migrations");
    if (w[i].find('/') == std::string::npos || w[i].find("igrat") == std::string::npos) {
        return false;
    }
    if (i > 0 && is_option(w[i - 1]) && w[i - 1].find('=') == std::string::npos) {
        return false;
    }
    return std::regex_match(stem_of(basename_of(w[i])), k_verb);
}

std::optional<Hit> tool_specific(const Words& w, std::size_t p, const std::string& stem) {
    auto next_is = [&](std::size_t i, std::string_view s) { return i < w.size() && w[i] == s; };
    if (stem == "manage" || stem == "django-admin") {
        if (next_is(p + 1, "migrate") && !any_read_only(w, p + 2)) {
            return Hit{p + 1, "manage.py migrate"};
        }
        return std::nullopt;
    }
    if (stem == "alembic") {
        return find_word(w, p + 1, {"upgrade", "downgrade"});
    }
    // Flask-Migrate, Airflow, Superset: `<app> db upgrade` (Airflow 2.7+: `db migrate`).
    if (next_is(p + 1, "db") && next_is(p + 2, "upgrade")) {
        return Hit{p + 2, basename_of(w[p]) + " db upgrade"};
    }
    if (stem == "liquibase") {
        return find_word(w, p + 1, {"update", "update-count", "update-to-tag", "updateCount"});
    }
    if (stem == "dotnet" && next_is(p + 1, "ef") && next_is(p + 2, "database") &&
        next_is(p + 3, "update")) {
        return Hit{p + 3, "dotnet ef database update"};
    }
    if (stem == "prisma" && next_is(p + 1, "db") && next_is(p + 2, "push")) {
        return Hit{p + 2, "prisma db push"};
    }
    if (stem == "diesel" && next_is(p + 1, "migration") && next_is(p + 2, "run")) {
        return Hit{p + 2, "diesel migration run"};
    }
    if (stem == "efbundle") {
        return Hit{p, "efbundle (an EF Core migration bundle)"};
    }
    if (k_sql_migrators.contains(stem) && !any_read_only(w, p + 1)) {
        if (auto hit = find_word(w, p + 1, k_up_words)) {
            return hit;
        }
        // golang-migrate always names a subcommand; a bare `./migrate` is the
        // project's own migration program.
        if (stem == "migrate") {
            return Hit{p, w[p]};
        }
    }
    return std::nullopt;
}

std::optional<Hit> match_program(const Words& w, std::size_t p) {
    if (p >= w.size()) {
        return std::nullopt;
    }
    std::string stem = stem_of(basename_of(w[p]));
    if (k_inert.contains(stem)) {
        return std::nullopt;
    }
    if (auto hit = tool_specific(w, p, stem)) {
        if (hit->what.empty()) {
            hit->what = basename_of(w[p]) + " " + w[hit->word];
        }
        return hit;
    }
    static const std::regex k_migrator(
        "(run[-_]?)?(db[-_]?)?migrat(e|es|ion|ions|or)([-_](db|database|up|all|schema|deploy))?");
    if (!k_sql_migrators.contains(stem) && std::regex_match(stem, k_migrator) &&
        !any_read_only(w, p + 1)) {
        return Hit{p, w[p]};
    }
    for (std::size_t i = p + 1; i < w.size(); ++i) {
        if (migrating_word(w, i)) {
            return Hit{i, basename_of(w[p]) + " " + w[i]};
        }
        if (runs_migrator(w, i)) {
            return Hit{i, w[i]};  // wait-for-deps /scripts/db-migrate: a program it starts
        }
    }
    return std::nullopt;
}

void scan_script(const std::string& script, std::size_t arg, std::size_t base, int depth,
                 std::vector<MigrationMatch>& out);

// One exec line or simple command: a nested `sh -c`, the program, or what follows `--`.
void scan_words(const Words& w, const std::vector<std::size_t>& where, std::size_t arg_of_word0,
                bool exec_line, int depth, std::vector<MigrationMatch>& out) {
    std::size_t p = program_index(w);
    if (p >= w.size()) {
        return;
    }
    auto locate = [&](std::size_t i) {
        return exec_line ? MigrationMatch{arg_of_word0 + i, 0, ""}
                         : MigrationMatch{arg_of_word0, where[i], ""};
    };
    if (k_shells.contains(basename_of(w[p]))) {
        for (std::size_t i = p + 1; i + 1 < w.size() && is_option(w[i]); ++i) {
            if (w[i].find('c') != std::string::npos && depth < 4) {
                MigrationMatch m = locate(i + 1);
                scan_script(w[i + 1], m.arg, m.offset, depth + 1, out);
                return;
            }
        }
        return;  // sh script.sh: the script is not in the manifest
    }
    if (auto hit = match_program(w, p)) {
        // An exec line points at the argument that makes it a migration; a script at
        // the command that runs it.
        MigrationMatch m = locate(exec_line ? hit->word : p);
        m.what = hit->what;
        out.push_back(std::move(m));
        return;
    }
    auto dashes = std::find(w.begin() + static_cast<std::ptrdiff_t>(p), w.end(), "--");
    if (dashes != w.end() && dashes + 1 != w.end()) {
        std::size_t skip = static_cast<std::size_t>(dashes - w.begin()) + 1;
        Words rest(w.begin() + static_cast<std::ptrdiff_t>(skip), w.end());
        std::vector<std::size_t> rest_where;
        if (!exec_line) {
            rest_where.assign(where.begin() + static_cast<std::ptrdiff_t>(skip), where.end());
        }
        scan_words(rest, rest_where, exec_line ? arg_of_word0 + skip : arg_of_word0, exec_line,
                   depth, out);
    }
}

void scan_script(const std::string& script, std::size_t arg, std::size_t base, int depth,
                 std::vector<MigrationMatch>& out) {
    for (const SimpleCommand& cmd : split_commands(script)) {
        Words w;
        std::vector<std::size_t> where;
        for (const Word& word : cmd) {
            w.push_back(word.text);
            where.push_back(base + word.offset);
        }
        scan_words(w, where, arg, false, depth, out);
    }
}

}  // namespace

std::vector<MigrationMatch> find_migrations(const std::vector<Arg>& argv) {
    Words w;
    for (const Arg& a : argv) {
        w.push_back(a.text);
    }
    std::vector<MigrationMatch> out;
    scan_words(w, {}, 0, true, 0, out);
    for (MigrationMatch& m : out) {
        m.arg = m.arg < argv.size() ? argv[m.arg].index : m.arg;
    }
    return out;
}

std::vector<MigrationMatch> find_migrations_in_script(const std::string& script) {
    std::vector<MigrationMatch> out;
    scan_script(script, 0, 0, 0, out);
    return out;
}

std::optional<std::string> migration_in(const std::vector<std::string>& words) {
    std::vector<Arg> argv;
    for (std::size_t i = 0; i < words.size(); ++i) {
        argv.push_back({words[i], i});
    }
    auto found = find_migrations(argv);
    if (found.empty()) {
        return std::nullopt;
    }
    return found.front().what;
}

}  // namespace envgate::lint
