// Given envgate.yml texts with gates and steps an app team adds, then load_config keeps
// them with their `after`, run_order puts each right after the one it names (several
// after the same one in file order), and the built-in order stays as it was.
#include <boost/test/unit_test.hpp>

#include <string>

#include "runner/config/config.h"
#include "runner/config/run_order.h"

using namespace envgate;

namespace {

// Gate manifests are looked up next to the config (test/fixtures/config/jobs/).
const std::string k_path = std::string(ENVGATE_FIXTURES) + "/config/envgate.yml";

const std::string k_head =
    "version: 1\n"
    "defaults: { namespace: gitlab }\n"
    "environments:\n"
    "  - name: gstg\n";

std::vector<std::string> order_of(const std::string& yaml) {
    auto r = parse_config(yaml, k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    std::vector<std::string> out;
    for (const RunEntry& e : run_order(*r)) {
        out.push_back(e.name + (e.kind == EntryKind::gate ? "/gate" : "/step") +
                      (e.builtin ? "" : "+"));
    }
    return out;
}

struct OrderCase {
    const char* name;
    std::string yaml;  // after k_head
    std::vector<std::string> want;
};

const OrderCase k_order_cases[] = {
    // Only the built-in gates and steps: spec/gates.md's order, whatever the file's.
    {"builtin_order_is_unchanged",
     "gates:\n"
     "  post-migrations: { job: jobs/post-migrations.yaml }\n"
     "  pre-migrations: { job: jobs/pre-migrations.yaml }\n"
     "steps: { qa: q, deploy: d, diff: x }\n",
     {"diff/step", "pre-migrations/gate", "deploy/step", "post-migrations/gate", "qa/step"}},
    // A gate after deploy, a step after it, a second gate after deploy written later
    // and a step after qa: each right after the one it names, those after the same one
    // in the order the file lists them (across both sections).
    {"added_entries_run_after_the_one_they_name",
     "steps:\n"
     "  deploy: helmfile apply\n"
     "  warm-cache: { run: scripts/warm, after: seed-check }\n"
     "  qa: scripts/qa\n"
     "  smoke: { run: scripts/smoke, after: qa }\n"
     "gates:\n"
     "  seed-check: { job: jobs/pre-migrations.yaml, after: deploy }\n"
     "  pre-migrations: { job: jobs/pre-migrations.yaml }\n"
     "  schema-check: { job: jobs/post-migrations.yaml, after: deploy }\n",
     {"pre-migrations/gate", "deploy/step", "seed-check/gate+", "warm-cache/step+",
      "schema-check/gate+", "qa/step", "smoke/step+"}},
    // After a built-in gate the file does not configure: where that gate would run.
    {"after_an_unconfigured_builtin_keeps_its_place",
     "gates:\n"
     "  seed-check: { job: jobs/pre-migrations.yaml, after: post-migrations }\n"
     "steps: { deploy: d, qa: q }\n",
     {"deploy/step", "seed-check/gate+", "qa/step"}},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(config_steps_suite)

BOOST_AUTO_TEST_CASE(run_order_puts_each_entry_in_its_place) {
    for (const OrderCase& c : k_order_cases) {
        BOOST_TEST_CONTEXT(c.name) {
            BOOST_TEST(order_of(k_head + c.yaml) == c.want, boost::test_tools::per_element());
        }
    }
}

// Given an added gate and step, then their settings read back as written and a
// built-in step also takes the mapping form.
BOOST_AUTO_TEST_CASE(reads_added_settings) {
    auto r = parse_config(k_head +
                              "gates:\n"
                              "  seed-check: { job: jobs/pre-migrations.yaml, after: deploy, "
                              "timeout: 10m }\n"
                              "steps:\n"
                              "  deploy: { run: helmfile apply }\n"
                              "  smoke: { run: \"scripts/smoke $ENVGATE_ENV\", after: qa }\n",
                          k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    const GateSettings& g = r->gates.at("seed-check");
    BOOST_TEST(*g.after == "deploy");
    BOOST_TEST((*g.timeout == std::chrono::minutes(10)));
    BOOST_TEST(g.job.ends_with("jobs/pre-migrations.yaml"));
    BOOST_TEST(r->steps.at("deploy").run == "helmfile apply");
    BOOST_TEST(!r->steps.at("deploy").after);
    BOOST_TEST(r->steps.at("smoke").run == "scripts/smoke $ENVGATE_ENV");
    BOOST_TEST(r->added == (std::vector<std::string>{"seed-check", "smoke"}),
               boost::test_tools::per_element());
}

// Given --gate names, then a built-in or an added gate resolves with its names, and
// anything else is refused with a suggestion.
BOOST_AUTO_TEST_CASE(resolves_gates_by_name) {
    auto r =
        parse_config(k_head +
                         "gates:\n  seed-check: { job: jobs/pre-migrations.yaml, after: deploy }\n"
                         "steps:\n  smoke: { run: x, after: deploy }\n",
                     k_path);
    BOOST_REQUIRE(r.is_ok());
    auto seed = resolve_gate("seed-check", &*r);
    BOOST_REQUIRE(seed.is_ok());
    BOOST_TEST(seed->names().running_reason == "RunningSeedCheck");
    BOOST_TEST(resolve_gate("post-migrations", nullptr)->names().complete_reason ==
               "PostMigrationsComplete");
    auto typo = resolve_gate("seed-chek", &*r);
    BOOST_REQUIRE(!typo.is_ok());
    BOOST_TEST(typo.status().message().find("did you mean \"seed-check\"?") != std::string::npos);
    auto step = resolve_gate("smoke", &*r);  // a step is not a gate
    BOOST_REQUIRE(!step.is_ok());
    BOOST_TEST(step.status().message().find("(pre-migrations, post-migrations, "
                                            "batched-migrations-check, seed-check)") !=
               std::string::npos);
    auto without_config = resolve_gate("seed-check", nullptr);
    BOOST_REQUIRE(!without_config.is_ok());
    BOOST_TEST(without_config.status().message().find("give --config") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
