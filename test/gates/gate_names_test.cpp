// Given gate names, then the built-in gates keep the GitLab Operator's reasons and
// events (spec/gates.md) and a gate a config adds derives its own from its name.
#include <boost/test/unit_test.hpp>

#include "gates/gate.h"

using namespace envgate::gates;

BOOST_AUTO_TEST_SUITE(gate_names_suite)

BOOST_AUTO_TEST_CASE(builtin_gates_keep_the_operator_names) {
    BOOST_TEST(names(Gate::pre_migrations).failed_reason == "MigrationsJobFailed");
    BOOST_TEST(names(Gate::post_migrations).retry_reason == "RetryingPostMigrations");
    BOOST_TEST(names(Gate::batched_migrations_check).retry_event ==
               "BatchedMigrationsCheckRetrying");
    BOOST_TEST(custom_gate("pre-migrations").names().retry_event == "MigrationsRetrying");
    BOOST_TEST(custom_gate("pre-migrations").is_builtin());
    BOOST_TEST(!gate_from_name("seed-check"));
}

// Given an added gate, then every name derives from CamelCase(name), in the pattern of
// batched-migrations-check.
BOOST_AUTO_TEST_CASE(added_gate_names_derive_from_camel_case) {
    const Gate g = custom_gate("seed-check");
    BOOST_TEST(!g.is_builtin());
    BOOST_TEST(g.name() == "seed-check");
    BOOST_TEST(g.names().running_reason == "RunningSeedCheck");
    BOOST_TEST(g.names().retry_reason == "RetryingSeedCheck");
    BOOST_TEST(g.names().failed_reason == "SeedCheckFailed");
    BOOST_TEST(g.names().complete_reason == "SeedCheckComplete");
    BOOST_TEST(g.names().retry_event == "SeedCheckRetrying");
    BOOST_TEST(g.names().failed_event == "SeedCheckFailed");
    BOOST_TEST(camel_case("s3-sync-v2") == "S3SyncV2");
    BOOST_TEST(camel_case("check") == "Check");
}

BOOST_AUTO_TEST_SUITE_END()
