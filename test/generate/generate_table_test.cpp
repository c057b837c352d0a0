// Given a real repository (libgit2) and a table of changes, then the generator's
// pure plan over the git diff selects the right environments in promotion order:
// renames, deletions, glob edges, a path in several environments, an empty change
// and a merge commit, all against one config whose order differs from `after`.
#include <boost/test/unit_test.hpp>

#include "runner/generate/git_diff.h"
#include "runner/generate/plan.h"
#include "test/generate/test_repo.h"

namespace envgate {
namespace {

using test::Files;
using test::TestRepo;
using Names = std::vector<std::string>;

// Listed out of promotion order on purpose: prod after staging after dev.
Config table_config() {
    auto env = [](std::string name, std::vector<std::string> paths,
                  std::vector<std::string> after) {
        Environment e;
        e.name = std::move(name);
        e.paths = std::move(paths);
        e.after = std::move(after);
        return e;
    };
    Config c;
    c.path = "envgate.yml";
    c.environments = {
        env("prod", {"envs/prod/**/*", "common/**/*"}, {"staging"}),
        env("staging", {"envs/staging/**/*", "common/**/*", "charts/**/values.yaml"}, {"dev"}),
        env("dev", {"envs/dev/**/*", "top/*.txt", "regions/eu[12]/**/*", "dev?.cfg"}, {}),
    };
    return c;
}

struct Case {
    const char* name;
    Files base;
    Files head;
    Names want;
};

const Case k_cases[] = {
    {"rename across environments counts both",
     {{"envs/dev/app", "same"}},
     {{"envs/prod/app", "same"}},
     {"dev", "prod"}},
    {"deletion counts", {{"envs/staging/a", "1"}, {"keep", "1"}}, {{"keep", "1"}}, {"staging"}},
    {"modification counts", {{"envs/dev/a", "1"}}, {{"envs/dev/a", "2"}}, {"dev"}},
    {"a common path selects several, in promotion order",
     {{"x", "1"}},
     {{"x", "1"}, {"common/lib.yaml", "1"}},
     {"staging", "prod"}},
    {"** matches zero directories",
     {{"x", "1"}},
     {{"x", "1"}, {"charts/values.yaml", "1"}},
     {"staging"}},
    {"** matches several directories",
     {{"x", "1"}},
     {{"x", "1"}, {"charts/a/b/values.yaml", "1"}},
     {"staging"}},
    {"* does not cross a directory", {{"x", "1"}}, {{"x", "1"}, {"top/deep/f.txt", "1"}}, {}},
    {"* within one directory", {{"x", "1"}}, {{"x", "1"}, {"top/f.txt", "1"}}, {"dev"}},
    {"character class in", {{"x", "1"}}, {{"x", "1"}, {"regions/eu2/cfg", "1"}}, {"dev"}},
    {"character class out", {{"x", "1"}}, {{"x", "1"}, {"regions/eu3/cfg", "1"}}, {}},
    {"? is one character",
     {{"x", "1"}},
     {{"x", "1"}, {"dev1.cfg", "1"}, {"dev10.cfg", "1"}},
     {"dev"}},
    {"prefix of a folder name is not the folder",
     {{"x", "1"}},
     {{"x", "1"}, {"envs/production/a", "1"}},
     {}},
    {"empty change", {{"envs/dev/a", "1"}}, {{"envs/dev/a", "1"}}, {}},
};

Names plan_names(const Config& config, const ChangeSet& change) {
    PlanRequest r;
    r.changed_paths = change.paths;
    r.all_environments = change.all_environments;
    auto plan = make_plan(config, r);
    BOOST_REQUIRE(plan.is_ok());
    Names out;
    for (const auto& e : plan->environments) {
        out.push_back(e.name);
    }
    return out;
}

ChangeSet diff(const TestRepo& repo, const std::string& base, const std::string& head) {
    DiffRequest r;
    r.repo_dir = repo.dir();
    r.base = base;
    r.head = head;
    auto change = diff_changed_paths(r);
    BOOST_REQUIRE(change.is_ok());
    return std::move(change).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_table_suite)

BOOST_AUTO_TEST_CASE(changes_select_environments_in_promotion_order) {
    TestRepo repo;
    Config config = table_config();
    for (const Case& c : k_cases) {
        BOOST_TEST_CONTEXT(c.name) {
            std::string base = repo.commit(c.base, {}, "refs/heads/case-base");
            std::string head = repo.commit(c.head, {base}, "refs/heads/case-head");
            BOOST_TEST(plan_names(config, diff(repo, base, head)) == c.want,
                       boost::test_tools::per_element());
        }
    }
}

// Given main and a feature branch that touched dev, merged into main after main
// touched prod, then the merge against main's previous tip selects dev only.
BOOST_AUTO_TEST_CASE(merge_commit_selects_the_merged_side) {
    TestRepo repo;
    std::string c1 = repo.commit({{"x", "1"}}, {}, "refs/heads/main");
    std::string feature = repo.commit({{"x", "1"}, {"envs/dev/a", "1"}}, {c1}, "refs/heads/f");
    std::string c2 = repo.commit({{"x", "1"}, {"envs/prod/a", "1"}}, {c1}, "refs/heads/main");
    std::string merge = repo.commit({{"x", "1"}, {"envs/dev/a", "1"}, {"envs/prod/a", "1"}},
                                    {c2, feature}, "refs/heads/main");
    BOOST_TEST(plan_names(table_config(), diff(repo, c2, merge)) == Names{"dev"},
               boost::test_tools::per_element());
    BOOST_TEST(plan_names(table_config(), diff(repo, c1, merge)) == (Names{"dev", "prod"}),
               boost::test_tools::per_element());
}

// Given an all-zeros base and no default branch, then every environment, in
// promotion order.
BOOST_AUTO_TEST_CASE(zero_base_without_default_branch_selects_all_in_order) {
    TestRepo repo;
    std::string c1 = repo.commit({{"x", "1"}}, {}, "refs/heads/topic");
    BOOST_TEST(plan_names(table_config(), diff(repo, std::string(40, '0'), c1)) ==
                   (Names{"dev", "staging", "prod"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
