// Given a real repository (libgit2) holding an envgate.yml, then `envgate generate`
// run through the CLI table writes the child pipeline of the affected environments,
// reads CI_* variables for the base, head, default branch and merge-request mode,
// says on stderr how it chose the base, and exits 2 on usage errors. Each child it
// writes is also copied to ENVGATE_GENERATED_DIR, which the `validate_ci` CTest
// checks against the GitLab CI schema.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "runner/base/exit_status.h"
#include "runner/cli.h"
#include "test/fakes/fake_env.h"
#include "test/generate/test_repo.h"

namespace envgate {
namespace {

using test::TestRepo;

const char* const k_config = R"(version: 1
defaults:
  namespace: gitlab
  lock: { store: file, path: .envgate/locks }
environments:
  - name: dev
    paths: [ "envs/dev/**/*" ]
  - name: prod
    after: [ staging ]
    paths: [ "envs/prod/**/*", "envs/shared/**/*" ]
  - name: staging
    after: [ dev ]
    paths: [ "envs/staging/**/*", "envs/shared/**/*" ]
gates:
  pre-migrations: { job: jobs/pre-migrations.yaml }
  post-migrations: { job: jobs/post-migrations.yaml }
steps:
  diff: "helmfile -e $ENVGATE_ENV diff"
  deploy: "helmfile -e $ENVGATE_ENV apply"
  qa: "scripts/qa $ENVGATE_ENV"
)";

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Run {
    int code;
    std::string err;
    std::string child;
};

// A repository with main at `c1` (envs/dev/a) and its config and Job manifests.
struct Fixture {
    TestRepo repo;
    std::string c1;
    std::string config;  // the --config passed

    Fixture() {
        c1 = repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "1"}}, {}, "refs/heads/main");
        config = repo.dir() + "/envgate.yml";
        repo.write_file("envgate.yml", k_config);
        for (const char* job : {"pre-migrations.yaml", "post-migrations.yaml"}) {
            repo.write_file(std::string("jobs/") + job,
                            slurp(std::string(ENVGATE_FIXTURES) + "/config/jobs/" + job));
        }
    }

    // Runs `envgate generate` with `args` and CI variables `vars`; keeps a copy of
    // the child pipeline as ENVGATE_GENERATED_DIR/`name`.
    Run generate(const std::string& name, std::vector<std::string> args,
                 std::map<std::string, std::string> vars = {}) {
        std::string out = repo.dir() + "/" + name;
        std::vector<std::string> argv = {"generate", "--config", config, "--repo",
                                         repo.dir(), "--out",    out};
        argv.insert(argv.end(), args.begin(), args.end());
        std::istringstream in;
        std::ostringstream sout;
        std::ostringstream serr;
        test::FakeEnv env(TimePoint{});
        Context ctx{in, sout, serr, env,
                    [&vars](const std::string& k) -> std::optional<std::string> {
                        auto it = vars.find(k);
                        return it == vars.end() ? std::nullopt : std::optional(it->second);
                    }};
        int code = run_cli(argv, ctx);
        std::string child = std::filesystem::exists(out) ? slurp(out) : "";
        if (!child.empty()) {
            std::filesystem::create_directories(ENVGATE_GENERATED_DIR);
            std::ofstream(std::string(ENVGATE_GENERATED_DIR) + "/" + name) << child;
        }
        return {code, serr.str(), child};
    }
};

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_cli_suite)

// Given a shared path changed on main, then staging and prod (not dev) get locked
// jobs, staging's stages first, and the child names base and head.
BOOST_AUTO_TEST_CASE(deploy_child_in_promotion_order) {
    Fixture f;
    std::string c2 =
        f.repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "2"}}, {f.c1}, "refs/heads/main");
    Run r = f.generate("cli-deploy.yml", {"--base", f.c1, "--head", c2});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(!has(r.child, "dev-diff"));
    BOOST_TEST(has(r.child, "envgate run --env staging --only diff"));
    BOOST_TEST(has(r.child, "envgate run --env prod --only pre-migrations"));
    BOOST_TEST(r.child.find("staging-diff") < r.child.find("prod-diff"));
    BOOST_TEST(has(r.child, "base: " + f.c1));
    BOOST_TEST(has(r.err, "staging: 1 changed path(s), e.g. envs/shared/s"), r.err);
}

// Given CI_PIPELINE_SOURCE=merge_request_event, then diff-only jobs that take no
// lock and check the lock state first.
BOOST_AUTO_TEST_CASE(merge_request_event_makes_diff_only_child) {
    Fixture f;
    std::string head =
        f.repo.commit({{"envs/dev/a", "2"}, {"envs/shared/s", "1"}}, {f.c1}, "refs/heads/topic");
    Run r = f.generate("cli-merge-request.yml", {"--base", f.c1, "--head", head},
                       {{"CI_PIPELINE_SOURCE", "merge_request_event"}});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(!has(r.child, "lock acquire"));
    BOOST_TEST(has(r.child, "envgate status dev"));
    BOOST_TEST(has(r.child, "exit_codes"));
    BOOST_TEST(!has(r.child, "envgate status prod"));
}

// Given a push pipeline on a feature branch (GitLab's variables), then the child only
// diffs, takes no lock, and stderr and the file's header say why; the same push on
// the default branch deploys, and so does a branch envgate.yml lists.
BOOST_AUTO_TEST_CASE(feature_branch_push_makes_diff_only_child) {
    Fixture f;
    std::string head =
        f.repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "2"}}, {f.c1}, "refs/heads/topic");
    std::map<std::string, std::string> vars = {{"GITLAB_CI", "true"},
                                               {"CI_PIPELINE_SOURCE", "push"},
                                               {"CI_COMMIT_BRANCH", "topic"},
                                               {"CI_DEFAULT_BRANCH", "main"}};
    Run r = f.generate("cli-feature-branch.yml", {"--base", f.c1, "--head", head}, vars);
    BOOST_TEST(r.code == k_exit_success, r.err);
    const std::string why = "branch \"topic\" is not the default branch \"main\"";
    BOOST_TEST(has(r.err, "envgate generate: diff only, no lock: " + why), r.err);
    BOOST_TEST(has(r.child, "# diff only, no lock: " + why), r.child);
    BOOST_TEST(!has(r.child, "lock acquire"));
    BOOST_TEST(!has(r.child, "envgate gate"));
    BOOST_TEST(has(r.child, "envgate status staging"));

    vars["CI_COMMIT_BRANCH"] = "main";
    Run on_main = f.generate("cli-default-branch.yml", {"--base", f.c1, "--head", head}, vars);
    BOOST_TEST(on_main.code == k_exit_success, on_main.err);
    BOOST_TEST(has(on_main.child, "envgate run --env staging --only diff"));
    BOOST_TEST(!has(on_main.err, "diff only"), on_main.err);

    f.repo.write_file("envgate.yml",
                      std::string(k_config) + "ci:\n  deploy_branches: [main, \"topic\"]\n");
    vars["CI_COMMIT_BRANCH"] = "topic";
    Run listed = f.generate("cli-listed-branch.yml", {"--base", f.c1, "--head", head}, vars);
    BOOST_TEST(listed.code == k_exit_success, listed.err);
    BOOST_TEST(has(listed.child, "envgate run --env staging --only diff"));
}

// Given CI_COMMIT_BEFORE_SHA all zeros on a new branch, then the merge base with
// CI_DEFAULT_BRANCH is used and stderr says so; head comes from CI_COMMIT_SHA.
BOOST_AUTO_TEST_CASE(zero_before_sha_uses_merge_base_from_ci_variables) {
    Fixture f;
    f.repo.set_ref("refs/heads/trunk", f.c1);
    std::string head =
        f.repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "1"}, {"envs/prod/p", "1"}}, {f.c1},
                      "refs/heads/topic");
    Run r = f.generate("cli-zero-base.yml", {},
                       {{"CI_COMMIT_BEFORE_SHA", std::string(40, '0')},
                        {"CI_COMMIT_SHA", head},
                        {"CI_DEFAULT_BRANCH", "trunk"}});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.err, "using the merge base with trunk, " + f.c1), r.err);
    BOOST_TEST(has(r.child, "prod-diff"));
    BOOST_TEST(!has(r.child, "staging-diff"));
}

// Given no base and no default branch to fork from, then every environment, in
// promotion order, with the run style; stderr says why.
BOOST_AUTO_TEST_CASE(no_merge_base_plans_every_environment) {
    Fixture f;
    Run r =
        f.generate("cli-all.yml", {"--head", f.c1, "--default-branch", "nope", "--jobs", "run"});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.err, "every environment counts as changed"), r.err);
    std::size_t dev = r.child.find("envgate run --env dev");
    std::size_t staging = r.child.find("envgate run --env staging");
    std::size_t prod = r.child.find("envgate run --env prod");
    BOOST_TEST((dev < staging && staging < prod && prod != std::string::npos));
}

// Given a change that no environment's paths match, then a valid no-op child.
BOOST_AUTO_TEST_CASE(unmatched_change_writes_no_op_child) {
    Fixture f;
    std::string c2 = f.repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "1"}, {"docs/x", "1"}},
                                   {f.c1}, "refs/heads/main");
    Run r = f.generate("cli-nothing-changed.yml", {"--base", f.c1, "--head", c2});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.child, "envgate:nothing-changed"));
    BOOST_TEST(has(r.err, "no environment affected"), r.err);
}

// Given --env prod, then only prod even though staging matches too.
BOOST_AUTO_TEST_CASE(env_option_restricts_the_child) {
    Fixture f;
    std::string c2 =
        f.repo.commit({{"envs/dev/a", "1"}, {"envs/shared/s", "3"}}, {f.c1}, "refs/heads/main");
    Run r = f.generate("cli-only-prod.yml", {"--base", f.c1, "--head", c2, "--env", "prod"});
    BOOST_TEST(r.code == k_exit_success, r.err);
    BOOST_TEST(has(r.child, "prod-diff"));
    BOOST_TEST(!has(r.child, "staging-diff"));
}

// Given usage errors (bad --mode, unknown --env, missing head, missing config),
// then exit 2 with a message and no child file.
BOOST_AUTO_TEST_CASE(usage_errors_exit_2) {
    Fixture f;
    struct Case {
        std::vector<std::string> args;
        std::string config;
        const char* message;
    };
    const std::string good = f.config;
    const Case cases[] = {
        {{"--mode", "sometimes", "--head", f.c1}, good, "--mode sometimes"},
        {{"--env", "qa-env", "--head", f.c1}, good, "--env qa-env"},
        {{"--head", "no-such-ref"}, good, "--head no-such-ref"},
        {{"--head", f.c1}, f.repo.dir() + "/missing.yml", "missing.yml"},
    };
    for (const Case& c : cases) {
        f.config = c.config;
        Run r = f.generate("unused.yml", c.args);
        BOOST_TEST_CONTEXT(c.message) {
            BOOST_TEST(r.code == k_exit_usage);
            BOOST_TEST(has(r.err, c.message), r.err);
            BOOST_TEST(r.child.empty());
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
