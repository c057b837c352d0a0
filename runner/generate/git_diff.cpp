// All of envgate's libgit2 use, behind RAII wrappers that live only in this file.
#include "runner/generate/git_diff.h"

#include <git2.h>

#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace envgate {
namespace {

// libgit2's global state, initialised for as long as one of these lives.
class LibGit2 {
  public:
    LibGit2() { git_libgit2_init(); }
    ~LibGit2() { git_libgit2_shutdown(); }
    LibGit2(const LibGit2&) = delete;
    LibGit2& operator=(const LibGit2&) = delete;
};

template <typename T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* p) const { Free(p); }
};

using RepoPtr = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using ObjectPtr = std::unique_ptr<git_object, Deleter<git_object, git_object_free>>;
using CommitPtr = std::unique_ptr<git_commit, Deleter<git_commit, git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, Deleter<git_tree, git_tree_free>>;
using DiffPtr = std::unique_ptr<git_diff, Deleter<git_diff, git_diff_free>>;

std::string last_error() {
    const git_error* e = git_error_last();
    return e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error";
}

std::string oid_string(const git_oid& oid) {
    char buf[GIT_OID_HEXSZ + 1];
    git_oid_tostr(buf, sizeof buf, &oid);
    return buf;
}

Result<RepoPtr> open_repo(const std::string& dir) {
    git_repository* raw = nullptr;
    if (git_repository_open_ext(&raw, dir.c_str(), 0, nullptr) != 0) {
        return Status(Code::invalid,
                      fmt::format("{}: not a git repository ({})", dir, last_error()));
    }
    return RepoPtr(raw);
}

// The commit `spec` names (a SHA, a branch, a ref), or nullopt.
std::optional<CommitPtr> find_commit(git_repository* repo, const std::string& spec) {
    git_object* raw = nullptr;
    if (git_revparse_single(&raw, repo, spec.c_str()) != 0) {
        return std::nullopt;
    }
    ObjectPtr obj(raw);
    git_object* peeled = nullptr;
    if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) != 0) {
        return std::nullopt;
    }
    return CommitPtr(reinterpret_cast<git_commit*>(peeled));
}

Result<TreePtr> tree_of(const git_commit* commit) {
    git_tree* raw = nullptr;
    if (git_commit_tree(&raw, commit) != 0) {
        return Status(Code::io, "reading the tree of commit " + oid_string(*git_commit_id(commit)) +
                                    ": " + last_error());
    }
    return TreePtr(raw);
}

// The merge base of `head` with the default branch, looked up as the remote
// branch first (what CI clones have), then the local one.
std::optional<git_oid> merge_base_with(git_repository* repo, const git_commit* head,
                                       const std::string& branch) {
    for (const std::string& spec :
         {"refs/remotes/origin/" + branch, "refs/heads/" + branch, branch}) {
        auto tip = find_commit(repo, spec);
        if (!tip) {
            continue;
        }
        git_oid base;
        if (git_merge_base(&base, repo, git_commit_id(head), git_commit_id(tip->get())) == 0) {
            return base;
        }
    }
    return std::nullopt;
}

// Fills `change.paths` and `change.renamed` from the tree diff of base..head.
Status tree_diff_paths(git_repository* repo, const git_commit* base, const git_commit* head,
                       ChangeSet& change) {
    TRY_ASSIGN(TreePtr base_tree, tree_of(base));
    TRY_ASSIGN(TreePtr head_tree, tree_of(head));
    git_diff* raw = nullptr;
    if (git_diff_tree_to_tree(&raw, repo, base_tree.get(), head_tree.get(), nullptr) != 0) {
        return Status(Code::io, "git diff: " + last_error());
    }
    DiffPtr diff(raw);
    git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
    find.flags = GIT_DIFF_FIND_RENAMES;
    if (git_diff_find_similar(diff.get(), &find) != 0) {
        return Status(Code::io, "git diff: detecting renames: " + last_error());
    }
    std::set<std::string> paths;
    for (std::size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
        const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
        paths.insert(d->old_file.path);
        paths.insert(d->new_file.path);
        if (d->status == GIT_DELTA_RENAMED) {
            change.renamed.emplace_back(d->old_file.path, d->new_file.path);
        }
    }
    change.paths.assign(paths.begin(), paths.end());
    return Status::ok();
}

// The base to diff from when `request.base` is zero or unknown: the merge base
// with the default branch, unless it is head itself (a run on the default branch).
std::optional<CommitPtr> fallback_base(git_repository* repo, const git_commit* head,
                                       const DiffRequest& request, std::string& note) {
    auto mb = merge_base_with(repo, head, request.default_branch);
    if (!mb) {
        note += fmt::format("; no merge base with {}: every environment counts as changed",
                            request.default_branch);
        return std::nullopt;
    }
    if (git_oid_equal(&*mb, git_commit_id(head)) != 0) {
        note += fmt::format("; head is on {} itself: every environment counts as changed",
                            request.default_branch);
        return std::nullopt;
    }
    note +=
        fmt::format("; using the merge base with {}, {}", request.default_branch, oid_string(*mb));
    return find_commit(repo, oid_string(*mb));
}

}  // namespace

bool is_zero_sha(const std::string& sha) {
    return sha.find_first_not_of('0') == std::string::npos;
}

Result<ChangeSet> diff_changed_paths(const DiffRequest& request) {
    LibGit2 lib;
    TRY_ASSIGN(RepoPtr repo, open_repo(request.repo_dir));
    auto head = find_commit(repo.get(), request.head);
    if (!head) {
        return Status(Code::invalid, fmt::format("--head {}: no such commit in {}", request.head,
                                                 request.repo_dir));
    }
    ChangeSet change;
    change.head = oid_string(*git_commit_id(head->get()));
    std::optional<CommitPtr> base;
    if (is_zero_sha(request.base)) {
        change.note = "no base commit (new branch, merge request or manual run)";
    } else {
        base = find_commit(repo.get(), request.base);
        change.note = base ? "base " + request.base + " as given"
                           : "base " + request.base + " is not in this clone";
    }
    if (!base) {
        base = fallback_base(repo.get(), head->get(), request, change.note);
    }
    if (!base) {
        change.all_environments = true;
        return change;
    }
    change.base = oid_string(*git_commit_id(base->get()));
    TRY(tree_diff_paths(repo.get(), base->get(), head->get(), change));
    return change;
}

}  // namespace envgate
