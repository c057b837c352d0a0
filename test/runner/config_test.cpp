// Given envgate.yml texts, then load_config yields the DESIGN.md example with its
// defaults applied, and every broken file fails with file:line:column, the field
// path and a message that says what to write instead.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <string>

#include "runner/cmd_config.h"
#include "runner/config/config.h"
#include "runner/config/config_yaml.h"

using namespace envgate;
using namespace std::chrono;

namespace {

// Gate manifests are looked up next to the config, so tests name a config that sits
// beside test/fixtures/config/jobs/.
const std::string k_dir = std::string(ENVGATE_FIXTURES) + "/config";
const std::string k_path = k_dir + "/envgate.yml";

// A valid head that error cases extend; its lines are 1-4.
const std::string k_head =
    "version: 1\n"
    "defaults:\n"
    "  namespace: gitlab\n"
    "environments:\n";

struct Case {
    const char* name;
    std::string yaml;
    const char* want;  // a substring of the error, with its line:column
};

const Case k_cases[] = {
    {"unknown_key_suggests_the_closest", "defaults:\n  lock:\n    on_faillure: hold\n",
     "envgate.yml:3:5: defaults.lock.on_faillure: unknown key; did you mean \"on_failure\"?"},
    {"unknown_top_level_key", "version: 1\nenviroments: []\n",
     "envgate.yml:2:1: enviroments: unknown key; did you mean \"environments\"?"},
    {"unknown_key_without_a_close_match_lists_allowed", k_head + "  - name: a\n    colour: red\n",
     "envgate.yml:6:5: environments[0].colour: unknown key; expected one of: name, namespace"},
    {"unknown_key_in_environment_lock", k_head + "  - name: a\n    lock: { stor: file }\n",
     "envgate.yml:6:13: environments[0].lock.stor: unknown key; did you mean \"store\"?"},
    {"duplicate_key", "version: 1\nversion: 1\n", "envgate.yml:2:1: version: duplicate key"},
    {"version_other_than_1", "version: 2\n",
     "envgate.yml:1:10: version: 2 is not supported; this envgate reads version 1"},
    {"version_missing", "environments: []\n", "envgate.yml:1:1: version: missing"},
    {"version_not_a_number", "version: one\n",
     "envgate.yml:1:10: version: expected a whole number, got the string \"one\""},
    {"top_level_not_a_mapping", "- version: 1\n",
     "envgate.yml:1:1: expected a mapping with `version: 1`, got a list"},
    {"environments_missing", "version: 1\n", "envgate.yml:1:1: environments: missing"},
    {"environments_not_a_list", "version: 1\nenvironments: { name: a }\n",
     "envgate.yml:2:15: environments: expected a list of at least one environment, got a "
     "mapping"},
    {"environments_empty", "version: 1\nenvironments: []\n",
     "envgate.yml:2:15: environments: expected a list of at least one environment"},
    {"environment_not_a_mapping", k_head + "  - gstg\n",
     "envgate.yml:5:5: environments[0]: expected a mapping with `name`, got the string \"gstg\""},
    {"merge_key", k_head + "  - { name: a, <<: { namespace: b } }\n",
     "envgate.yml:5:16: environments[0].<<: YAML merge keys are not supported"},
    {"name_not_dns1123", k_head + "  - name: Prod_1\n",
     "envgate.yml:5:11: environments[0].name: \"Prod_1\" is not a DNS-1123 label"},
    {"name_too_long", k_head + "  - name: " + std::string(64, 'a') + "\n",
     "envgate.yml:5:11: environments[0].name: \"aaaa"},
    {"name_ending_in_dash", k_head + "  - name: gprd-\n",
     "envgate.yml:5:11: environments[0].name: \"gprd-\" is not a DNS-1123 label"},
    {"name_missing", k_head + "  - namespace: gitlab\n",
     "envgate.yml:5:5: environments[0].name: missing"},
    {"name_not_a_string", k_head + "  - name: [a]\n",
     "envgate.yml:5:11: environments[0].name: expected a string, got a list"},
    {"name_duplicated", k_head + "  - name: gstg\n  - name: gstg\n",
     "envgate.yml:6:11: environments[1].name: \"gstg\" is already the name of environments[0]"},
    {"name_qa_is_reserved", k_head + "  - name: qa\n",
     "envgate.yml:5:11: environments[0].name: \"qa\" is reserved for the global QA lock"},
    {"after_unknown_environment", k_head + "  - name: gstg\n  - name: gprd\n    after: [gstgg]\n",
     "envgate.yml:7:13: environments[1].after[0]: \"gstgg\" is not an environment of this file; "
     "did you mean \"gstg\"?"},
    {"after_cycle",
     k_head + "  - { name: a, after: [c] }\n  - { name: b, after: [a] }\n" +
         "  - { name: c, after: [b] }\n",
     "envgate.yml:6:24: environments[1].after[0]: promotion order has a cycle: a -> c -> b -> a"},
    {"after_itself", k_head + "  - { name: a, after: [a] }\n",
     "envgate.yml:5:24: environments[0].after[0]: promotion order has a cycle: a -> a"},
    {"after_not_a_list", k_head + "  - { name: a, after: b }\n",
     "envgate.yml:5:23: environments[0].after: expected a list of strings, got the string"},
    {"paths_item_not_a_string", k_head + "  - name: a\n    paths: [ { x: 1 } ]\n",
     "envgate.yml:6:14: environments[0].paths[0]: expected a string, got a mapping"},
    {"unlockers_empty_item", "version: 1\ndefaults: { unlockers: [\"\"] }\n",
     "envgate.yml:2:25: defaults.unlockers[0]: must not be empty"},
    {"namespace_missing_everywhere", "version: 1\nenvironments:\n  - name: a\n",
     "envgate.yml:3:5: environments[0].namespace: missing; set it here or in defaults.namespace"},
    {"namespace_not_dns1123", "version: 1\ndefaults: { namespace: GitLab }\n",
     "envgate.yml:2:24: defaults.namespace: \"GitLab\" is not a DNS-1123 label"},
    {"kube_context_empty", k_head + "  - name: a\n    kube_context: \"\"\n",
     "envgate.yml:6:19: environments[0].kube_context: must not be empty"},
    {"store_not_a_known_store", "version: 1\ndefaults:\n  lock: { store: etcd }\n",
     "envgate.yml:3:18: defaults.lock.store: \"etcd\" is not one of: file, kubernetes"},
    {"on_failure_typo_suggests", "version: 1\ndefaults:\n  lock: { on_failure: hodl }\n",
     "defaults.lock.on_failure: \"hodl\" is not one of: hold, release (did you mean \"hold\"?)"},
    {"order_not_a_known_order", k_head + "  - name: a\n    lock: { order: fifo }\n",
     "envgate.yml:6:20: environments[0].lock.order: \"fifo\" is not one of: oldest_first, "
     "newest_first, unordered"},
    {"wait_timeout_not_a_duration", "version: 1\ndefaults:\n  lock: { wait_timeout: 2 hours }\n",
     "envgate.yml:3:25: defaults.lock.wait_timeout: \"2 hours\" is not a duration"},
    {"lease_duration_zero", "version: 1\ndefaults:\n  lock: { lease_duration: 0s }\n",
     "envgate.yml:3:27: defaults.lock.lease_duration: \"0s\" is too short; the minimum is 1s"},
    {"hold_for_negative", "version: 1\ndefaults:\n  lock: { hold_for: -5m }\n",
     "envgate.yml:3:21: defaults.lock.hold_for: \"-5m\" is not a duration"},
    {"lock_not_a_mapping", "version: 1\ndefaults:\n  lock: kubernetes\n",
     "envgate.yml:3:9: defaults.lock: expected a mapping, got the string \"kubernetes\""},
    {"gate_name_typo", "version: 1\ngates:\n  pre-migration: { job: jobs/pre-migrations.yaml }\n",
     "envgate.yml:3:18: gates.pre-migration.after: missing; a gate you add names the step or "
     "gate it runs right after (e.g. `after: deploy`); or did you mean the built-in gate "
     "\"pre-migrations\"?"},
    {"gate_name_unknown", "version: 1\ngates:\n  smoke-test: { job: jobs/pre-migrations.yaml }\n",
     "envgate.yml:3:15: gates.smoke-test.after: missing; a gate you add names the step or gate it "
     "runs right after (e.g. `after: deploy`)"},
    {"added_gate_after_unknown",
     "version: 1\ngates:\n  seed-check: { job: jobs/pre-migrations.yaml, after: deplyo }\n",
     "envgate.yml:3:55: gates.seed-check.after: \"deplyo\" is not a gate or step; did you mean "
     "\"deploy\"?"},
    {"added_gate_after_nothing_close",
     "version: 1\ngates:\n  seed-check: { job: jobs/pre-migrations.yaml, after: zzz }\n",
     "gates.seed-check.after: \"zzz\" is not a gate or step; the gates and steps are: diff, "
     "pre-migrations, deploy, post-migrations, batched-migrations-check, qa, seed-check"},
    {"added_gate_after_itself",
     "version: 1\ngates:\n  seed-check: { job: jobs/pre-migrations.yaml, after: seed-check }\n",
     "envgate.yml:3:55: gates.seed-check.after: \"seed-check\" cannot run after itself"},
    {"added_gate_named_like_a_step",
     "version: 1\ngates:\n  deploy: { job: jobs/pre-migrations.yaml }\n",
     "envgate.yml:3:3: gates.deploy: \"deploy\" is a built-in step: write it under `steps:`"},
    {"added_gate_name_not_a_label",
     "version: 1\ngates:\n  Seed_Check: { job: jobs/pre-migrations.yaml, after: deploy }\n",
     "envgate.yml:3:3: gates.Seed_Check: \"Seed_Check\" is not a valid name for a gate you add: "
     "lowercase letters, digits and '-', starting with a letter, at most 63"},
    {"added_gate_name_starts_with_a_digit",
     "version: 1\ngates:\n  1check: { job: jobs/pre-migrations.yaml, after: deploy }\n",
     "envgate.yml:3:3: gates.1check: \"1check\" is not a valid name for a gate you add"},
    {"builtin_gate_with_after",
     "version: 1\ngates:\n  pre-migrations: { job: jobs/pre-migrations.yaml, after: deploy }\n",
     "envgate.yml:3:59: gates.pre-migrations.after: \"pre-migrations\" is a built-in gate: its "
     "place in the run is fixed; `after` is for the gates and steps you add"},
    {"added_gates_in_a_cycle",
     "version: 1\ngates:\n  a-check: { job: jobs/pre-migrations.yaml, after: b-check }\n"
     "  b-check: { job: jobs/pre-migrations.yaml, after: a-check }\n",
     "envgate.yml:3:52: gates.a-check.after: the `after` of the gates and steps you add form a "
     "cycle (a-check -> b-check -> a-check); one of them must run after a built-in step or gate"},
    {"gate_job_file_missing", "version: 1\ngates:\n  post-migrations: { job: jobs/nope.yaml }\n",
     "envgate.yml:3:27: gates.post-migrations.job: \"jobs/nope.yaml\" is not a file"},
    {"gate_job_is_a_directory", "version: 1\ngates:\n  post-migrations: { job: jobs }\n",
     "envgate.yml:3:27: gates.post-migrations.job: \"jobs\" is not a file"},
    {"gate_job_missing", "version: 1\ngates:\n  post-migrations: { timeout: 1h }\n",
     "envgate.yml:3:20: gates.post-migrations.job: missing"},
    {"gate_timeout_not_a_duration",
     "version: 1\ngates:\n  pre-migrations:\n    job: jobs/pre-migrations.yaml\n"
     "    timeout: soon\n",
     "envgate.yml:5:14: gates.pre-migrations.timeout: \"soon\" is not a duration"},
    {"gate_without_settings", "version: 1\ngates:\n  pre-migrations:\n",
     "envgate.yml:3:3: gates.pre-migrations: expected a mapping with `job`, got nothing"},
    {"name_empty_value_points_at_its_key", k_head + "  - name:\n    namespace: gitlab\n",
     "envgate.yml:5:5: environments[0].name: expected a string, got nothing (null)"},
    {"version_empty_value", "version:\nenvironments: []\n",
     "envgate.yml:1:1: version: expected a whole number, got nothing (null)"},
    {"step_unknown", "version: 1\nsteps:\n  test: make test\n",
     "envgate.yml:3:9: steps.test: expected a mapping `{ run: COMMAND, after: STEP }` (a step "
     "you add names where it runs), got the string \"make test\""},
    {"step_typo_suggests_the_builtin", "version: 1\nsteps:\n  deplyo: make\n",
     "steps.deplyo: expected a mapping `{ run: COMMAND, after: STEP }` (a step you add names "
     "where it runs), got the string \"make\"; or did you mean the built-in step \"deploy\"?"},
    {"step_not_a_command", "version: 1\nsteps:\n  deploy: [helmfile, apply]\n",
     "envgate.yml:3:11: steps.deploy: expected a command (a non-empty string, or `{ run: COMMAND "
     "}`), got a list"},
    {"added_step_without_run", "version: 1\nsteps:\n  smoke: { after: deploy }\n",
     "envgate.yml:3:10: steps.smoke.run: missing; the command to run"},
    {"added_step_named_like_a_gate",
     "version: 1\nsteps:\n  post-migrations: { run: x, after: deploy }\n",
     "envgate.yml:3:3: steps.post-migrations: \"post-migrations\" is a built-in gate: write it "
     "under `gates:`"},
    {"added_step_name_reserved", "version: 1\nsteps:\n  lock: { run: x, after: deploy }\n",
     "envgate.yml:3:3: steps.lock: \"lock\" is reserved (the reports and the generated pipeline "
     "use it)"},
    {"added_step_also_a_gate",
     "version: 1\ngates:\n  seed-check: { job: jobs/pre-migrations.yaml, after: deploy }\n"
     "steps:\n  seed-check: { run: x, after: deploy }\n",
     "envgate.yml:5:3: steps.seed-check: \"seed-check\" is already a gate (gates.seed-check); a "
     "name is a gate or a step, not both"},
    {"builtin_step_with_after", "version: 1\nsteps:\n  deploy: { run: x, after: diff }\n",
     "envgate.yml:3:28: steps.deploy.after: \"deploy\" is a built-in step: its place in the run "
     "is fixed"},
    {"added_step_unknown_key", "version: 1\nsteps:\n  smoke: { run: x, after: qa, when: always }\n",
     "envgate.yml:3:31: steps.smoke.when: unknown key; expected one of: run, after"},
    {"yaml_syntax_error", "version: 1\nenvironments: [\n",
     "envgate.yml:3:1: YAML syntax error: end of sequence flow not found"},
    {"yaml_bad_indentation", "version: 1\ndefaults:\n  namespace: a\n bad: b\n",
     "envgate.yml:4:2: YAML syntax error"},
    {"empty_text", "", "envgate.yml: the file is empty"},
    {"only_comments", "# nothing yet\n", "envgate.yml: the file is empty"},
    {"two_documents", "version: 1\n---\nversion: 1\n",
     "envgate.yml:3:1: only one YAML document is allowed"},
    {"lock_path_not_a_directory",
     "version: 1\ndefaults:\n  lock:\n    path: /dev/null\nenvironments:\n  - name: a\n",
     "envgate.yml:4:11: defaults.lock.path: \"/dev/null\" is not a directory"},
    {"builtin_step_tagged_binary",
     "version: 1\nenvironments:\n  - name: a\nsteps:\n  deploy: !!binary ZWNobyBoaQ==\n",
     "envgate.yml:5:11: steps.deploy: expected a plain string, got a value tagged !!binary"},
    {"added_step_run_with_a_custom_tag",
     "version: 1\nenvironments:\n  - name: a\nsteps:\n  smoke: { run: !shell x, after: qa }\n",
     "steps.smoke.run: expected a plain string, got a value tagged !shell"},
    {"builtin_step_with_a_nul",
     "version: 1\nenvironments:\n  - name: a\nsteps:\n  deploy: \"echo \\0hi\"\n",
     "envgate.yml:5:11: steps.deploy: contains a NUL character (\\0)"},
    {"namespace_with_a_nul", "version: 1\ndefaults:\n  namespace: \"git\\0lab\"\n",
     "defaults.namespace: contains a NUL character"},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(config_suite)

BOOST_AUTO_TEST_CASE(rejects_each_broken_config_with_its_position_and_field) {
    for (const Case& c : k_cases) {
        BOOST_TEST_CONTEXT(c.name) {
            auto r = parse_config(c.yaml, k_path);
            BOOST_REQUIRE(!r.is_ok());
            BOOST_TEST(std::string(code_name(r.status().code())) == code_name(Code::invalid));
            BOOST_TEST(
                r.status().message().find(c.want) != std::string::npos, "got:\n"
                                                                            << r.status().message()
                                                                            << "\nwant substring:\n"
                                                                            << c.want);
        }
    }
}

BOOST_AUTO_TEST_CASE(reports_every_error_one_per_line_in_file_order) {
    // Given three independent mistakes, written so that the cross-check (a duplicate
    // name) is found last but sits first in the file.
    const std::string yaml =
        k_head + "  - name: a\n  - name: a\n    lock: { order: fifo }\n" + "steps:\n  dif: make\n";
    auto r = parse_config(yaml, k_path);
    BOOST_REQUIRE(!r.is_ok());
    const std::string& m = r.status().message();
    BOOST_TEST(std::count(m.begin(), m.end(), '\n') == 2);
    auto dup = m.find("environments[1].name");
    auto order = m.find("environments[1].lock.order");
    auto step = m.find("steps.dif");
    BOOST_TEST((dup < order && order < step && step != std::string::npos));
}

BOOST_AUTO_TEST_CASE(loads_the_design_example_with_defaults_applied) {
    // Given the DESIGN.md example (gprd overrides part of the lock and the unlockers),
    // then each environment carries the defaults plus its own overrides.
    auto r = load_config(k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    const Config& c = *r;
    BOOST_TEST(c.version == 1);
    BOOST_TEST(c.path == k_path);
    BOOST_REQUIRE(c.environments.size() == 2u);

    const Environment* gstg = c.find_environment("gstg");
    BOOST_REQUIRE(gstg);
    BOOST_TEST(gstg->namespace_ == "gitlab");
    BOOST_TEST(gstg->kube_context.value_or("") == "gitlab-org/agents:gstg");
    BOOST_TEST(gstg->paths.size() == 2u);
    BOOST_TEST(gstg->after.empty());
    BOOST_TEST((gstg->lock.store == LockStoreKind::kubernetes));
    BOOST_TEST(gstg->lock.namespace_ == "envgate-locks");
    BOOST_TEST((gstg->lock.on_failure == FailurePolicy::hold));
    BOOST_TEST((gstg->lock.order == QueueOrder::oldest_first));
    BOOST_TEST((gstg->lock.wait_timeout == hours(2)));
    BOOST_TEST((gstg->lock.lease_duration == seconds(60)));
    BOOST_TEST((gstg->lock.hold_for == hours(2)));
    BOOST_TEST((gstg->unlockers == std::vector<std::string>{"@sre-oncall", "alice"}));

    const Environment* gprd = c.find_environment("gprd");
    BOOST_REQUIRE(gprd);
    BOOST_TEST(!gprd->kube_context);
    BOOST_TEST((gprd->after == std::vector<std::string>{"gstg"}));
    BOOST_TEST((gprd->lock.store == LockStoreKind::kubernetes));  // inherited
    BOOST_TEST((gprd->lock.wait_timeout == hours(2)));            // inherited
    BOOST_TEST((gprd->lock.on_failure == FailurePolicy::release));
    BOOST_TEST((gprd->lock.order == QueueOrder::newest_first));
    BOOST_TEST((gprd->lock.lease_duration == seconds(90)));
    BOOST_TEST((gprd->unlockers == std::vector<std::string>{"@sre-oncall"}));

    BOOST_TEST((c.default_lock.store == LockStoreKind::kubernetes));
    BOOST_TEST(c.default_namespace == "gitlab");
    BOOST_TEST(c.steps.at("deploy").run == "helmfile -e $ENVGATE_ENV apply");
    BOOST_TEST(c.steps.size() == 3u);
}

BOOST_AUTO_TEST_CASE(resolves_gate_manifests_next_to_the_config) {
    auto r = load_config(k_path);
    BOOST_REQUIRE(r.is_ok());
    BOOST_REQUIRE(r->gates.size() == 3u);
    const GateSettings& batched = r->gates.at("batched-migrations-check");
    BOOST_TEST(batched.job == k_dir + "/jobs/batched-check.yaml");
    BOOST_TEST(std::filesystem::is_regular_file(batched.job));
    BOOST_TEST((batched.timeout == std::optional<Duration>(hours(6))));
    BOOST_TEST(!r->gates.at("pre-migrations").timeout);
}

BOOST_AUTO_TEST_CASE(resolves_the_file_store_path_against_the_config_directory) {
    // Given a config in a sub-directory with the default and an explicit lock path.
    const std::string yaml = k_head + "  - name: a\n  - name: b\n    lock: { path: /var/locks }\n";
    auto r = parse_config(yaml, "deploy/envgate.yml");
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    BOOST_TEST(r->environments[0].lock.path == "deploy/.envgate/locks");
    BOOST_TEST(r->environments[1].lock.path == "/var/locks");
    auto here = parse_config(yaml, "envgate.yml");
    BOOST_REQUIRE(here.is_ok());
    BOOST_TEST(here->environments[0].lock.path == ".envgate/locks");
}

BOOST_AUTO_TEST_CASE(accepts_bare_seconds_and_compound_durations) {
    const std::string yaml =
        "version: 1\ndefaults:\n  namespace: gitlab\n"
        "  lock: { wait_timeout: 0, lease_duration: 45, hold_for: 1h30m }\n"
        "environments: [ { name: a } ]\n";
    auto r = parse_config(yaml, k_path);
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    BOOST_TEST((r->environments[0].lock.wait_timeout == Duration{0}));
    BOOST_TEST((r->environments[0].lock.lease_duration == seconds(45)));
    BOOST_TEST((r->environments[0].lock.hold_for == minutes(90)));
}

BOOST_AUTO_TEST_CASE(missing_file_is_not_found_and_names_the_file) {
    auto r = load_config(k_dir + "/does-not-exist.yml");
    BOOST_REQUIRE(!r.is_ok());
    BOOST_TEST(std::string(code_name(r.status().code())) == code_name(Code::not_found));
    BOOST_TEST(r.status().message().find("does-not-exist.yml: cannot read") != std::string::npos);
    auto dir = load_config(k_dir);
    BOOST_REQUIRE(!dir.is_ok());
    BOOST_TEST(dir.status().message().find("is a directory") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(rendered_config_reads_back_to_the_same_settings) {
    // Given the example resolved and printed by `config check`, then parsing the
    // print again gives the same effective settings (nothing lost in the print).
    auto first = load_config(k_path);
    BOOST_REQUIRE(first.is_ok());
    const std::string text = render_config(*first);
    auto second = parse_config(text, k_path);
    BOOST_REQUIRE_MESSAGE(second.is_ok(), (second.is_ok() ? "" : second.status().message()));
    BOOST_TEST(render_config(*second) == text);
    BOOST_TEST(text.find("lease_duration: 1m30s") != std::string::npos);
    BOOST_TEST(text.find("on_failure: release") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(suggests_only_close_words) {
    BOOST_TEST(edit_distance("on_faillure", "on_failure") == 1u);
    BOOST_TEST(edit_distance("", "abc") == 3u);
    BOOST_TEST(did_you_mean("namspace", {"name", "namespace"}).value_or("") == "namespace");
    BOOST_TEST(!did_you_mean("colour", {"name", "namespace", "paths"}));
    BOOST_TEST(!did_you_mean("x", {"qa"}));
}

// Given a command written plain, quoted or tagged !!str, then each reads as its text.
BOOST_AUTO_TEST_CASE(plain_quoted_and_str_tagged_commands_read_as_written) {
    for (const char* deploy : {"echo hi", "\"echo hi\"", "'echo hi'", "!!str echo hi"}) {
        BOOST_TEST_CONTEXT(deploy) {
            auto r = parse_config(
                std::string("version: 1\nenvironments:\n  - { name: a, namespace: n }\n"
                            "steps:\n  deploy: ") +
                    deploy + "\n",
                k_path);
            BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
            BOOST_TEST(r->steps.at("deploy").run == "echo hi");
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
