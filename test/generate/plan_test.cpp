// Given a config and changed paths, then make_plan picks the environments whose
// globs match, in promotion order (`after`, stable), and render_child_pipeline
// writes the child pipeline of the golden files in test/golden/generate/. Set
// ENVGATE_UPDATE_GOLDEN=1 to rewrite them after a deliberate change.
#include <yaml-cpp/yaml.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/generate/plan.h"
#include "runner/generate/render_child.h"

namespace envgate {
namespace {

Environment env(const std::string& name, std::vector<std::string> paths,
                std::vector<std::string> after = {}) {
    Environment e;
    e.name = name;
    e.paths = std::move(paths);
    e.after = std::move(after);
    return e;
}

// The DESIGN.md example: gstg then gprd, with every gate and step.
Config design_config() {
    Config c;
    c.path = "envgate.yml";
    c.environments = {
        env("gstg", {"releases/gitlab/gstg/**/*", "releases/gitlab/common/**/*"}),
        env("gprd", {"releases/gitlab/gprd/**/*", "releases/gitlab/common/**/*"}, {"gstg"})};
    c.gates["pre-migrations"] = {"jobs/pre-migrations.yaml", std::nullopt, std::nullopt};
    c.gates["post-migrations"] = {"jobs/post-migrations.yaml", std::nullopt, std::nullopt};
    c.gates["batched-migrations-check"] = {"jobs/batched-check.yaml", std::nullopt, std::nullopt};
    c.steps["diff"] = {"helmfile -e $ENVGATE_ENV diff", std::nullopt};
    c.steps["deploy"] = {"helmfile -e $ENVGATE_ENV apply", std::nullopt};
    c.steps["qa"] = {"scripts/qa $ENVGATE_ENV", std::nullopt};
    return c;
}

PlanRequest request(std::vector<std::string> changed) {
    PlanRequest r;
    r.changed_paths = std::move(changed);
    r.config_path = "envgate.yml";
    r.base = "1111111111111111111111111111111111111111";
    r.head = "2222222222222222222222222222222222222222";
    r.note = "base 1111111111111111111111111111111111111111 as given";
    return r;
}

std::vector<std::string> names(const Plan& plan) {
    std::vector<std::string> out;
    for (const auto& e : plan.environments) {
        out.push_back(e.name);
    }
    return out;
}

void check_golden(const std::string& name, const std::string& actual) {
    std::string path = std::string(ENVGATE_GOLDEN) + "/generate/" + name;
    if (std::getenv("ENVGATE_UPDATE_GOLDEN") != nullptr) {
        std::ofstream(path) << actual;
    }
    std::ifstream in(path);
    BOOST_REQUIRE_MESSAGE(in, "missing golden file " + path);
    std::stringstream expected;
    expected << in.rdbuf();
    BOOST_TEST(actual == expected.str(), name + " differs from its golden file " + path);
}

Plan must(Result<Plan> r) {
    BOOST_REQUIRE_MESSAGE(r.is_ok(), (r.is_ok() ? "" : r.status().message()));
    return std::move(r).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_plan_suite)

// Given environments listed against their `after` order, then promotion_order puts
// each after its dependencies and keeps config order among independent ones.
BOOST_AUTO_TEST_CASE(promotion_order_is_topological_and_stable) {
    Config c;
    c.environments = {env("prod", {}, {"staging", "canary"}), env("dev", {}),
                      env("canary", {}, {"staging"}), env("staging", {}, {"dev"}), env("docs", {})};
    auto order = promotion_order(c);
    BOOST_REQUIRE(order.is_ok());
    std::vector<std::string> want = {"dev", "staging", "canary", "prod", "docs"};
    BOOST_TEST(*order == want, boost::test_tools::per_element());
}

// Given a cycle or an unknown name in `after`, then promotion_order is invalid and
// names the environments involved.
BOOST_AUTO_TEST_CASE(promotion_order_rejects_cycles_and_unknown_names) {
    Config cycle;
    cycle.environments = {env("a", {}, {"b"}), env("b", {}, {"a"}), env("c", {})};
    auto r = promotion_order(cycle);
    BOOST_REQUIRE(!r.is_ok());
    BOOST_TEST(r.status().code() == Code::invalid);
    BOOST_TEST(r.status().message().find("cycle among: a, b") != std::string::npos);

    Config unknown;
    unknown.environments = {env("a", {}, {"nope"})};
    auto u = promotion_order(unknown);
    BOOST_REQUIRE(!u.is_ok());
    BOOST_TEST(u.status().message().find("nope") != std::string::npos);
}

// Given one path under releases/gitlab/common/, then both environments match it,
// and they come in promotion order (gstg before gprd).
BOOST_AUTO_TEST_CASE(a_path_matching_several_environments_selects_each) {
    Plan plan = must(make_plan(design_config(), request({"releases/gitlab/common/x.yaml"})));
    std::vector<std::string> want = {"gstg", "gprd"};
    BOOST_TEST(names(plan) == want, boost::test_tools::per_element());
    BOOST_TEST(plan.environments[1].matched_paths.front() == "releases/gitlab/common/x.yaml");
}

// Given changes only under gprd/, or nowhere relevant, then only gprd, or nothing.
BOOST_AUTO_TEST_CASE(only_matching_environments_are_planned) {
    Plan gprd = must(make_plan(design_config(), request({"README.md", "releases/gitlab/gprd/a"})));
    BOOST_TEST(names(gprd) == std::vector<std::string>{"gprd"}, boost::test_tools::per_element());
    Plan none = must(make_plan(design_config(), request({"README.md", "releases/gitlab/x"})));
    BOOST_TEST(none.environments.empty());
}

// Given `only`, then other environments are dropped; an unknown name is invalid.
BOOST_AUTO_TEST_CASE(only_filter_keeps_named_environments) {
    PlanRequest r = request({"releases/gitlab/common/x.yaml"});
    r.only = {"gprd"};
    Plan plan = must(make_plan(design_config(), r));
    BOOST_TEST(names(plan) == std::vector<std::string>{"gprd"}, boost::test_tools::per_element());
    r.only = {"nope"};
    auto bad = make_plan(design_config(), r);
    BOOST_REQUIRE(!bad.is_ok());
    BOOST_TEST(bad.status().code() == Code::invalid);
}

// Given the built-in gates and steps and two the config adds (a gate after deploy, a
// step after qa), then the plan lists every one after diff in run order.
BOOST_AUTO_TEST_CASE(gates_and_steps_follow_the_run_order) {
    Config c = design_config();
    c.gates["seed-check"] = {"jobs/seed-check.yaml", std::nullopt, "deploy"};
    c.steps["smoke"] = {"scripts/smoke", "qa"};
    c.added = {"seed-check", "smoke"};
    Plan plan = must(make_plan(c, request({"releases/gitlab/gstg/a"})));
    std::vector<std::string> got;
    for (const auto& s : plan.sequence) {
        got.push_back(s.name + (s.gate ? "(gate)" : "(step)"));
    }
    std::vector<std::string> want = {"pre-migrations(gate)",
                                     "deploy(step)",
                                     "seed-check(gate)",
                                     "post-migrations(gate)",
                                     "batched-migrations-check(gate)",
                                     "qa(step)",
                                     "smoke(step)"};
    BOOST_TEST(got == want, boost::test_tools::per_element());
}

// Given a gate and a step the config adds, then the split pipeline has a job for each
// in run order, each needing the one before, the step after qa in qa's stage.
BOOST_AUTO_TEST_CASE(renders_split_pipeline_with_added_gate_and_step) {
    Config c = design_config();
    c.environments.resize(1);
    c.gates["seed-check"] = {"jobs/seed-check.yaml", std::nullopt, "deploy"};
    c.steps["smoke"] = {"scripts/smoke $ENVGATE_ENV", "qa"};
    c.added = {"seed-check", "smoke"};
    Plan plan = must(make_plan(c, request({"releases/gitlab/gstg/a"})));
    check_golden("deploy-split-added.yml", render_child_pipeline(plan));
}

// Given a change in both environments, then the split deploy pipeline matches its
// golden file: per environment diff (lock) -> gates and deploy -> qa, release, fail.
BOOST_AUTO_TEST_CASE(renders_split_deploy_pipeline) {
    Plan plan = must(make_plan(design_config(), request({"releases/gitlab/common/x.yaml"})));
    check_golden("deploy-split.yml", render_child_pipeline(plan));
}

// Given the run style, then each environment gets one `envgate run` job.
BOOST_AUTO_TEST_CASE(renders_run_style_pipeline) {
    PlanRequest r = request({"releases/gitlab/common/x.yaml"});
    r.style = JobStyle::run;
    check_golden("deploy-run.yml", render_child_pipeline(must(make_plan(design_config(), r))));
}

// Given a merge-request pipeline, then only diff jobs: no lock taken, a status check
// that warns (and exits 3, allowed) when the environment is held or failed.
BOOST_AUTO_TEST_CASE(renders_merge_request_pipeline) {
    PlanRequest r = request({"releases/gitlab/common/x.yaml"});
    r.mode = PipelineMode::merge_request;
    std::string yaml = render_child_pipeline(must(make_plan(design_config(), r)));
    check_golden("merge-request.yml", yaml);
    BOOST_TEST(yaml.find("lock acquire") == std::string::npos);
    BOOST_TEST(yaml.find("envgate status gstg") != std::string::npos);
}

// Given a pipeline that is no merge request's, then it deploys only from the branches
// envgate.yml lets deploy (the default branch alone when it names none, a list of
// globs, or the protected ones), and elsewhere it only diffs, saying why.
BOOST_AUTO_TEST_CASE(deploys_only_from_the_branches_that_may_deploy) {
    struct Case {
        std::string name;
        std::vector<std::string> deploy_branches;
        bool deploy_protected;
        BranchFacts facts;
        std::string want_why;  // "" when it deploys
    };
    auto on = [](std::optional<std::string> branch, bool protect = false, bool ci = true) {
        return BranchFacts{std::move(branch), "main", protect, ci};
    };
    const std::vector<Case> cases = {
        {"default branch", {}, false, on("main"), ""},
        {"feature branch",
         {},
         false,
         on("feature/x"),
         "branch \"feature/x\" is not the default branch \"main\"; ci.deploy_branches in "
         "envgate.yml names the branches that deploy"},
        {"protected feature branch, default rule",
         {},
         false,
         on("feature/x", true),
         "branch \"feature/x\" is not the default branch \"main\"; ci.deploy_branches in "
         "envgate.yml names the branches that deploy"},
        {"listed release branch", {"main", "release/*"}, false, on("release/16.1"), ""},
        {"release glob stays in one segment",
         {"main", "release/*"},
         false,
         on("release/a/b"),
         "branch \"release/a/b\" matches none of ci.deploy_branches (main, release/*)"},
        {"list without the default branch",
         {"release/*"},
         false,
         on("main"),
         "branch \"main\" matches none of ci.deploy_branches (release/*)"},
        {"protected branch", {}, true, on("stable", true), ""},
        {"unprotected branch",
         {},
         true,
         on("main", false),
         "branch \"main\" is not protected (ci.deploy_branches: protected)"},
        {"tag pipeline",
         {},
         false,
         on(std::nullopt),
         "not a branch pipeline (CI_COMMIT_BRANCH is not set)"},
        {"outside a pipeline", {}, false, on(std::nullopt, false, false), ""},
    };
    for (const auto& c : cases) {
        BOOST_TEST_CONTEXT(c.name) {
            CiSettings ci;
            ci.deploy_branches = c.deploy_branches;
            ci.deploy_protected = c.deploy_protected;
            ModeChoice got = deploy_or_diff(ci, c.facts);
            BOOST_TEST((got.mode ==
                        (c.want_why.empty() ? PipelineMode::deploy : PipelineMode::merge_request)));
            BOOST_TEST(got.why == c.want_why);
        }
    }
}

// Given a branch that may not deploy, then its child pipeline only diffs and its
// header says why (golden file).
BOOST_AUTO_TEST_CASE(renders_diff_only_branch_pipeline) {
    PlanRequest r = request({"releases/gitlab/common/x.yaml"});
    r.mode = PipelineMode::merge_request;
    r.mode_reason = "branch \"feature/x\" is not the default branch \"main\"";
    std::string yaml = render_child_pipeline(must(make_plan(design_config(), r)));
    check_golden("diff-only-branch.yml", yaml);
    BOOST_TEST(yaml.find("# diff only, no lock: branch \"feature/x\" is not the default branch "
                         "\"main\"\n") != std::string::npos);
    BOOST_TEST(yaml.find("lock acquire") == std::string::npos);
}

// Given no environment touched, then a valid pipeline with one no-op job.
BOOST_AUTO_TEST_CASE(renders_nothing_changed_pipeline) {
    check_golden("nothing-changed.yml",
                 render_child_pipeline(must(make_plan(design_config(), request({"README.md"})))));
}

// Given no base and a config without steps, then every environment is planned and
// the jobs say there is no step to run, with shell-quoted unusual config paths.
BOOST_AUTO_TEST_CASE(renders_all_environments_without_steps) {
    Config c;
    c.path = "deploy config.yml";
    c.environments = {env("dev", {"dev/**/*"}), env("prod", {"prod/**/*"}, {"dev"})};
    PlanRequest r = request({});
    r.all_environments = true;
    r.base = "";
    r.config_path = "deploy config.yml";
    r.note =
        "no base commit (new branch, merge request or manual run); no merge base with main: "
        "every environment counts as changed";
    check_golden("all-environments.yml", render_child_pipeline(must(make_plan(c, r))));
}

// Given envgate.yml `ci:` settings, then the child pipeline has them as its
// `default:` (a child does not inherit the parent's), beside the image its trigger job
// forwards (the generate job's) with the empty entrypoint a job's shell needs, and
// each environment job of
// gprd names its deployment tier, while gstg's (not in deployment_tiers) names none.
BOOST_AUTO_TEST_CASE(renders_ci_defaults_and_deployment_tiers) {
    Config c = design_config();
    c.ci.tags = {"kubernetes", "deploy"};
    c.ci.interruptible = false;
    c.ci.timeout = std::chrono::minutes(90);
    c.ci.deployment_tiers["gprd"] = "production";
    PlanRequest r = request({"releases/gitlab/common/x.yaml"});
    r.style = JobStyle::run;
    std::string yaml = render_child_pipeline(must(make_plan(c, r)));
    check_golden("deploy-ci-defaults.yml", yaml);
    BOOST_TEST(yaml.find("default:\n  image:\n    name: $ENVGATE_CHILD_IMAGE\n"
                         "    entrypoint: [\"\"]\n  tags: [kubernetes, deploy]\n  interruptible: "
                         "false\n  timeout: 1h 30m\n") != std::string::npos);
    BOOST_TEST(yaml.find("name: gprd\n    action: start\n    deployment_tier: production") !=
               std::string::npos);
    BOOST_TEST(yaml.find("name: gstg\n    action: start\n  script") != std::string::npos);
}

// Given no `ci:` settings, then `default:` has the forwarded image alone (the
// runner's own tags, no timeout).
BOOST_AUTO_TEST_CASE(renders_only_the_image_default_without_ci_settings) {
    std::string yaml = render_child_pipeline(
        must(make_plan(design_config(), request({"releases/gitlab/common/x.yaml"}))));
    BOOST_TEST(yaml.find("default:\n  image:\n    name: $ENVGATE_CHILD_IMAGE\n    entrypoint: "
                         "[\"\"]\n") != std::string::npos);
    BOOST_TEST(yaml.find("  tags:") == std::string::npos);
    BOOST_TEST(yaml.find("  timeout:") == std::string::npos);
    BOOST_TEST(yaml.find("deployment_tier") == std::string::npos);
}

// Given an environment `on`, one `1.10` and a runner tag `yes`, which a YAML 1.1
// reader (GitLab's) takes for true, 1.1 and true when written bare, then the child
// pipeline quotes them: the environment's name and variable, the job's stage and the
// tag read back as the same strings.
BOOST_AUTO_TEST_CASE(names_a_yaml_1_1_reader_would_convert_are_quoted) {
    Config c = design_config();
    c.environments = {env("on", {"a/**/*"}), env("1.10", {"a/**/*"}, {"on"})};
    c.ci.tags = {"yes", "kubernetes"};
    PlanRequest r = request({"a/x.yaml"});
    r.style = JobStyle::run;
    std::string yaml = render_child_pipeline(must(make_plan(c, r)));
    BOOST_TEST(yaml.find("name: \"on\"") != std::string::npos, yaml);
    BOOST_TEST(yaml.find("ENVGATE_ENV: \"1.10\"") != std::string::npos, yaml);
    BOOST_TEST(yaml.find("tags: [\"yes\", kubernetes]") != std::string::npos, yaml);
    YAML::Node doc = YAML::Load(yaml);
    BOOST_TEST(doc["default"]["tags"][0].as<std::string>() == "yes");
    int environments = 0;
    for (const auto& job : doc) {
        if (job.second.IsMap() && job.second["environment"]) {
            auto name = job.second["environment"]["name"].as<std::string>();
            BOOST_TEST((name == "on" || name == "1.10"), name);
            BOOST_TEST(job.second["variables"]["ENVGATE_ENV"].as<std::string>() == name);
            BOOST_TEST(job.second["environment"]["name"].Tag() == "!");  // quoted: a string
            ++environments;
        }
    }
    BOOST_TEST(environments == 2);
}

BOOST_AUTO_TEST_CASE(shell_quote_quotes_only_when_needed) {
    BOOST_TEST(shell_quote("envgate.yml") == "envgate.yml");
    BOOST_TEST(shell_quote("a b") == "'a b'");
    BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
    BOOST_TEST(shell_quote("") == "''");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
