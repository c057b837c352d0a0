// The paths a change touched, from the git repository with libgit2: the tree diff
// of base..head with renames detected (old and new path both count) and deletions
// included. An all-zeros or missing base falls back to the merge base with the
// default branch, or to "every environment" when there is none.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runner/base/vocab/status.h"

namespace envgate {

struct DiffRequest {
    std::string repo_dir = ".";
    std::string base;  // a commit-ish; "" or all zeros: none (new branch, MR, manual run)
    std::string head = "HEAD";
    std::string default_branch = "main";
};

struct ChangeSet {
    std::vector<std::string> paths;  // sorted, unique
    // Renames detected (old path, new path); both paths are also in `paths`. Similar
    // content counts on changes of up to 1000 added + deleted files; larger ones
    // report identical content only (`note` says so).
    std::vector<std::pair<std::string, std::string>> renamed;
    bool all_environments = false;  // no usable base: treat everything as changed
    std::string base;               // the commit diffed from, full SHA ("" if none)
    std::string head;               // full SHA
    std::string note;               // how the base was chosen, one line for people
};

// True for "" and for any run of '0' (GitLab's CI_COMMIT_BEFORE_SHA when there is
// no previous commit).
bool is_zero_sha(const std::string& sha);

// Diffs `request.base`..`request.head` in the repository at `request.repo_dir`.
// A head that does not name a commit, or a directory that is not a repository, is
// `invalid`. A base that is zero or absent from the clone falls back as described
// above; `note` says which.
Result<ChangeSet> diff_changed_paths(const DiffRequest& request);

}  // namespace envgate
