// The shell splitter and the migration matcher, table-driven: what each ecosystem's
// migration looks like, and the look-alikes that must not match.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "runner/lint/migration_command.h"
#include "runner/lint/shell_words.h"

using namespace envgate::lint;

namespace {

struct Case {
    std::vector<std::string> argv;
    bool migrates;
};

const Case k_cases[] = {
    {{"sh", "-c", "./migrate && ./service"}, true},
    {{"rails", "db:migrate"}, true},
    {{"bundle", "exec", "rake", "db:migrate"}, true},
    {{"python", "manage.py", "migrate", "--noinput"}, true},
    {{"alembic", "-c", "alembic.ini", "upgrade", "head"}, true},
    {{"flyway", "-url=jdbc:x", "migrate"}, true},
    {{"liquibase", "--changelog-file=c.xml", "update"}, true},
    {{"npx", "prisma", "migrate", "deploy"}, true},
    {{"npx", "knex", "migrate:latest"}, true},
    {{"npx", "sequelize-cli", "db:migrate"}, true},
    {{"yarn", "typeorm", "migration:run"}, true},
    {{"php", "artisan", "migrate", "--force"}, true},
    {{"dotnet", "ef", "database", "update"}, true},
    {{"goose", "-dir", "m", "postgres", "dsn", "up"}, true},
    {{"migrate", "-path", "/m", "-database", "pg://x", "up"}, true},
    {{"env", "RAILS_ENV=production", "bin/rails", "db:migrate"}, true},
    {{"exec", "timeout", "300", "./bin/migrate.sh"}, true},
    {{"tini", "--", "sh", "-ec", "set -x; if true; then alembic upgrade head; fi"}, true},
    {{"bash", "-c", "echo start; $(python -m alembic upgrade head) ; exec app"}, true},
    {{"/app/server", "--migrate"}, true},
    {{"wait-for-deps", "/scripts/db-migrate"}, true},
    {{"sh", "-c", "gosu app rails db:migrate && exec puma"}, true},
    {{"mix", "ecto.migrate"}, true},
    {{"php", "bin/console", "doctrine:migrations:migrate"}, true},
    {{"flask", "db", "upgrade"}, true},
    {{"airflow", "db", "migrate"}, true},
    {{"airflow", "db", "check-migrations", "--migration-wait-timeout=60"}, false},
    {{"./efbundle"}, true},
    // Look-alikes.
    {{"sh", "-c", "echo \"run migrate later\" && ./service"}, false},
    {{"echo", "migrate"}, false},
    {{"migrate-ui", "--port", "8080"}, false},
    {{"sh", "-c", "# ./migrate\nexec ./service"}, false},
    {{"kubectl", "rollout", "status", "deployment/web"}, false},
    {{"python", "manage.py", "migrate", "--check"}, false},
    {{"python", "manage.py", "makemigrations", "--check"}, false},
    {{"python", "manage.py", "showmigrations"}, false},
    {{"rails", "db:migrate:status"}, false},
    {{"php", "artisan", "migrate:status"}, false},
    {{"npx", "prisma", "migrate", "status"}, false},
    {{"migrate", "-path", "/m", "-database", "pg://x", "version"}, false},
    {{"goose", "status"}, false},
    {{"node", "server.js", "--migrations-dir", "/app/migrations"}, false},
    {{"/app/server", "--migrate=false"}, false},
    {{"sh", "/scripts/entry.sh"}, false},
    {{"grep", "-r", "db:migrate", "."}, false},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(lint_matcher)

// Given each exec line of the table, then it is (or is not) a migration.
BOOST_AUTO_TEST_CASE(recognises_migrations_and_not_look_alikes) {
    for (const Case& c : k_cases) {
        std::string joined;
        for (const auto& a : c.argv) {
            joined += "[" + a + "]";
        }
        BOOST_TEST_CONTEXT(joined) {
            BOOST_TEST(migration_in(c.argv).has_value() == c.migrates);
        }
    }
}

// Given a shell script, then its simple commands come out with quotes removed,
// comments dropped and chains split.
BOOST_AUTO_TEST_CASE(splits_shell_chains_quotes_and_comments) {
    auto cmds = split_commands("A=1 ./migrate 'x y' && ./svc \"a\\\"b\"; # c\n(sub) | tail");
    BOOST_REQUIRE(cmds.size() == 4u);
    BOOST_TEST(cmds[0].size() == 2u);
    BOOST_TEST(cmds[0][0].text == "./migrate");
    BOOST_TEST(cmds[0][0].offset == 4u);
    BOOST_TEST(cmds[0][1].text == "x y");
    BOOST_TEST(cmds[1][1].text == "a\"b");
    BOOST_TEST(cmds[2][0].text == "sub");
    BOOST_TEST(cmds[3][0].text == "tail");
}

// Given a migration inside `sh -c`, then the match points into that argument.
BOOST_AUTO_TEST_CASE(match_points_into_the_script_argument) {
    auto found = find_migrations({{"sh", 0}, {"-c", 1}, {"echo hi; rails db:migrate", 2}});
    BOOST_REQUIRE(found.size() == 1u);
    BOOST_TEST(found[0].arg == 2u);
    BOOST_TEST(found[0].offset == 9u);
    BOOST_TEST(found[0].what == "rails db:migrate");
}

BOOST_AUTO_TEST_SUITE_END()
