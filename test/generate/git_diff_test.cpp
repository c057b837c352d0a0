// Given real git repositories built with libgit2 (test_repo.h), then
// diff_changed_paths reports the paths a change touched: renames (both paths),
// deletions, merge commits, and the fallbacks for an all-zeros or unknown base.
#include <algorithm>
#include <boost/test/unit_test.hpp>

#include "runner/generate/git_diff.h"
#include "test/generate/test_repo.h"

namespace envgate {
namespace {

using test::Files;
using test::numbered_lines;
using test::TestRepo;

const char* const k_main = "refs/heads/main";

ChangeSet must_diff(const TestRepo& repo, const std::string& base, const std::string& head,
                    const std::string& branch = "main") {
    DiffRequest r;
    r.repo_dir = repo.dir();
    r.base = base;
    r.head = head;
    r.default_branch = branch;
    auto change = diff_changed_paths(r);
    BOOST_REQUIRE_MESSAGE(change.is_ok(), (change.is_ok() ? "" : change.status().message()));
    return std::move(change).value();
}

using Paths = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(generate_git_diff_suite)

// Given a file moved between two environments' folders (same content, and with one
// line changed), then both the old and the new path count as changed.
BOOST_AUTO_TEST_CASE(rename_counts_old_and_new_paths) {
    TestRepo repo;
    std::string c1 =
        repo.commit({{"envs/a/app.yaml", numbered_lines(30)}, {"README", "x"}}, {}, k_main);
    std::string c2 =
        repo.commit({{"envs/b/app.yaml", numbered_lines(30)}, {"README", "x"}}, {c1}, k_main);
    std::string c3 =
        repo.commit({{"envs/c/app.yaml", numbered_lines(30, 7)}, {"README", "x"}}, {c2}, k_main);
    using Rename = std::pair<std::string, std::string>;
    ChangeSet exact = must_diff(repo, c1, c2);
    BOOST_TEST(exact.paths == (Paths{"envs/a/app.yaml", "envs/b/app.yaml"}),
               boost::test_tools::per_element());
    BOOST_REQUIRE(exact.renamed.size() == 1u);
    BOOST_TEST((exact.renamed[0] == Rename{"envs/a/app.yaml", "envs/b/app.yaml"}));
    ChangeSet similar = must_diff(repo, c2, c3);
    BOOST_TEST(similar.paths == (Paths{"envs/b/app.yaml", "envs/c/app.yaml"}),
               boost::test_tools::per_element());
    BOOST_REQUIRE(similar.renamed.size() == 1u);
    BOOST_TEST((similar.renamed[0] == Rename{"envs/b/app.yaml", "envs/c/app.yaml"}));
}

// Given a large change (more than 1000 files added or deleted), then every path
// still counts, renames of identical content are still reported, and the costly
// similar-content search is skipped (the note says so).
BOOST_AUTO_TEST_CASE(large_change_reports_exact_renames_only) {
    TestRepo repo;
    std::string c1 = repo.commit(
        {{"old/moved.yaml", numbered_lines(30)}, {"old/edited.yaml", numbered_lines(40)}}, {},
        k_main);
    Files next = {{"new/moved.yaml", numbered_lines(30)},
                  {"new/edited.yaml", numbered_lines(40, 7)}};
    for (int i = 0; i < 1000; ++i) {
        next["bulk/d" + std::to_string(i % 10) + "/f" + std::to_string(i)] =
            "file " + std::to_string(i) + "\n";
    }
    std::string c2 = repo.commit(next, {c1}, k_main);
    ChangeSet change = must_diff(repo, c1, c2);
    BOOST_TEST(change.paths.size() == 1004u);
    BOOST_TEST(std::is_sorted(change.paths.begin(), change.paths.end()));
    BOOST_TEST(std::count(change.paths.begin(), change.paths.end(), "old/edited.yaml") == 1);
    BOOST_TEST(std::count(change.paths.begin(), change.paths.end(), "new/edited.yaml") == 1);
    BOOST_REQUIRE(change.renamed.size() == 1u);
    BOOST_TEST(change.renamed[0].first == "old/moved.yaml");
    BOOST_TEST(change.renamed[0].second == "new/moved.yaml");
    BOOST_TEST(change.note.find("only exact renames") != std::string::npos, change.note);
}

// Given a file replaced by a folder of the same name, next to names that sort
// between "a" and "a/" ("a-b", "a.txt"), then the tree walk reports exactly the
// changed paths, sorted.
BOOST_AUTO_TEST_CASE(file_replaced_by_folder_of_the_same_name) {
    TestRepo repo;
    std::string c1 =
        repo.commit({{"a", "1"}, {"a-b/x", "1"}, {"a.txt", "1"}, {"z/y", "1"}}, {}, k_main);
    std::string c2 =
        repo.commit({{"a/x", "new"}, {"a-b/x", "2"}, {"a.txt", "1"}, {"z/y", "1"}}, {c1}, k_main);
    ChangeSet change = must_diff(repo, c1, c2);
    BOOST_TEST(change.paths == (Paths{"a", "a-b/x", "a/x"}), boost::test_tools::per_element());
    BOOST_TEST(change.renamed.empty());
}

// Given a deleted file and a modified one, then both count.
BOOST_AUTO_TEST_CASE(deletions_and_modifications_count) {
    TestRepo repo;
    std::string c1 = repo.commit({{"a/x", "1"}, {"b/y", "1"}, {"c/z", "1"}}, {}, k_main);
    std::string c2 = repo.commit({{"a/x", "2"}, {"c/z", "1"}}, {c1}, k_main);
    ChangeSet change = must_diff(repo, c1, c2);
    BOOST_TEST(change.paths == (Paths{"a/x", "b/y"}), boost::test_tools::per_element());
    BOOST_TEST(!change.all_environments);
    BOOST_TEST(change.base == c1);
    BOOST_TEST(change.head == c2);
}

// Given a merge commit joining a feature branch into main, then diffing from main's
// previous tip shows the feature's paths only, and from the fork point both sides.
BOOST_AUTO_TEST_CASE(merge_commits_diff_by_tree) {
    TestRepo repo;
    std::string c1 = repo.commit({{"common", "0"}}, {}, k_main);
    std::string feature = repo.commit({{"common", "0"}, {"f/x", "1"}}, {c1}, "refs/heads/f");
    std::string c2 = repo.commit({{"common", "0"}, {"m/y", "1"}}, {c1}, k_main);
    std::string merge =
        repo.commit({{"common", "0"}, {"f/x", "1"}, {"m/y", "1"}}, {c2, feature}, k_main);
    BOOST_TEST(must_diff(repo, c2, merge).paths == Paths{"f/x"}, boost::test_tools::per_element());
    BOOST_TEST(must_diff(repo, c1, merge).paths == (Paths{"f/x", "m/y"}),
               boost::test_tools::per_element());
}

// Given an all-zeros base on a branch forked from origin/main (as in a CI clone),
// then the merge base with the default branch is the base, and the note says so.
BOOST_AUTO_TEST_CASE(zero_base_falls_back_to_merge_base) {
    TestRepo repo;
    std::string c1 = repo.commit({{"a", "1"}}, {}, "refs/remotes/origin/main");
    std::string c2 = repo.commit({{"a", "2"}}, {c1}, "refs/remotes/origin/main");
    std::string head = repo.commit({{"a", "2"}, {"env/dev/x", "1"}}, {c2}, "refs/heads/topic");
    for (const std::string& zero : {std::string(40, '0'), std::string()}) {
        ChangeSet change = must_diff(repo, zero, head);
        BOOST_TEST(change.paths == Paths{"env/dev/x"}, boost::test_tools::per_element());
        BOOST_TEST(change.base == c2);
        BOOST_TEST(change.note.find("merge base with main") != std::string::npos, change.note);
    }
}

// Given a base SHA absent from the clone (shallow clone, force push), then the same
// merge-base fallback applies and the note says the base was missing.
BOOST_AUTO_TEST_CASE(unknown_base_falls_back_to_merge_base) {
    TestRepo repo;
    std::string c1 = repo.commit({{"a", "1"}}, {}, k_main);
    std::string head = repo.commit({{"a", "1"}, {"b", "1"}}, {c1}, "refs/heads/topic");
    ChangeSet change = must_diff(repo, "0123456789abcdef0123456789abcdef01234567", head);
    BOOST_TEST(change.paths == Paths{"b"}, boost::test_tools::per_element());
    BOOST_TEST(change.note.find("is not in this clone") != std::string::npos, change.note);
}

// Given a zero base and no default branch (or head on it), then every environment
// counts as changed and the note says why.
BOOST_AUTO_TEST_CASE(zero_base_without_merge_base_means_all_environments) {
    TestRepo repo;
    std::string c1 = repo.commit({{"a", "1"}}, {}, "refs/heads/topic");
    ChangeSet none = must_diff(repo, std::string(40, '0'), c1, "main");
    BOOST_TEST(none.all_environments);
    BOOST_TEST(none.base.empty());
    BOOST_TEST(none.note.find("no merge base with main") != std::string::npos, none.note);

    ChangeSet on_default = must_diff(repo, "", c1, "topic");
    BOOST_TEST(on_default.all_environments);
    BOOST_TEST(on_default.note.find("head is on topic") != std::string::npos, on_default.note);
}

// Given two commits with the same tree, then nothing changed.
BOOST_AUTO_TEST_CASE(empty_change_has_no_paths) {
    TestRepo repo;
    std::string c1 = repo.commit({{"a", "1"}}, {}, k_main);
    std::string c2 = repo.commit({{"a", "1"}}, {c1}, k_main, "empty");
    ChangeSet change = must_diff(repo, c1, c2);
    BOOST_TEST(change.paths.empty());
    BOOST_TEST(!change.all_environments);
}

// Given a head that is not a commit, or a directory that is not a repository, then
// the error is `invalid` and names what was wrong.
BOOST_AUTO_TEST_CASE(bad_head_or_repository_is_invalid) {
    TestRepo repo;
    repo.commit({{"a", "1"}}, {}, k_main);
    DiffRequest r;
    r.repo_dir = repo.dir();
    r.head = "no-such-branch";
    auto bad_head = diff_changed_paths(r);
    BOOST_REQUIRE(!bad_head.is_ok());
    BOOST_TEST(bad_head.status().code() == Code::invalid);
    BOOST_TEST(bad_head.status().message().find("no-such-branch") != std::string::npos);

    r.repo_dir = "/nonexistent/envgate-repo";
    r.head = "HEAD";
    auto bad_repo = diff_changed_paths(r);
    BOOST_REQUIRE(!bad_repo.is_ok());
    BOOST_TEST(bad_repo.status().code() == Code::invalid);
}

BOOST_AUTO_TEST_CASE(zero_sha_detection) {
    BOOST_TEST(is_zero_sha(""));
    BOOST_TEST(is_zero_sha(std::string(40, '0')));
    BOOST_TEST(!is_zero_sha("0000000000000000000000000000000000000001"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace envgate
