// envgate's libgit2 diff, behind RAII wrappers that live only in this file (its
// initialisation is libgit2_runtime.h).
#include "runner/generate/git_diff.h"

#include <git2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "runner/generate/libgit2_runtime.h"

namespace envgate {
namespace {

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

// A file the tree walk found deleted or added.
struct FileChange {
    std::size_t path;  // index into TreeChanges::paths
    git_oid id;        // the blob: the old one when deleted, else the new one
};

struct TreeChanges {
    std::vector<std::string> paths;  // every changed file, sorted (the walk's order)
    std::vector<FileChange> deleted;
    std::vector<FileChange> added;
};

// Walks two trees in step, entering only the subtrees whose ids differ: the cost
// follows the size of the change, not of the repository (libgit2's tree diff
// iterates every entry of both trees). Either tree may be null (all added or all
// deleted below `prefix`).
class TreeWalk {
  public:
    explicit TreeWalk(git_repository* repo) : m_repo(repo) {}

    Status walk(const std::string& prefix, const git_tree* old_tree, const git_tree* new_tree) {
        std::size_t n_old = old_tree != nullptr ? git_tree_entrycount(old_tree) : 0;
        std::size_t n_new = new_tree != nullptr ? git_tree_entrycount(new_tree) : 0;
        std::size_t i = 0;
        std::size_t j = 0;
        while (i < n_old || j < n_new) {
            const git_tree_entry* a = i < n_old ? git_tree_entry_byindex(old_tree, i) : nullptr;
            const git_tree_entry* b = j < n_new ? git_tree_entry_byindex(new_tree, j) : nullptr;
            // Git's order: a tree sorts as if its name ended in '/'.
            int cmp = a == nullptr ? 1 : b == nullptr ? -1 : git_tree_entry_cmp(a, b);
            if (cmp == 0) {
                TRY(both(prefix, a, b));
                ++i;
                ++j;
            } else if (cmp < 0) {
                TRY(one_side(prefix, a, m_changes.deleted, true));
                ++i;
            } else {
                TRY(one_side(prefix, b, m_changes.added, false));
                ++j;
            }
        }
        return Status::ok();
    }

    TreeChanges& changes() { return m_changes; }

  private:
    static bool is_tree(const git_tree_entry* e) {
        return git_tree_entry_type(e) == GIT_OBJECT_TREE;
    }

    Result<TreePtr> subtree(const git_tree_entry* e, const std::string& path) {
        git_tree* raw = nullptr;
        if (git_tree_lookup(&raw, m_repo, git_tree_entry_id(e)) != 0) {
            return Status(Code::io, "reading tree " + path + ": " + last_error());
        }
        return TreePtr(raw);
    }

    // The same name on both sides (both trees, or both not trees).
    Status both(const std::string& prefix, const git_tree_entry* a, const git_tree_entry* b) {
        if (git_oid_equal(git_tree_entry_id(a), git_tree_entry_id(b)) != 0 &&
            git_tree_entry_filemode(a) == git_tree_entry_filemode(b)) {
            return Status::ok();
        }
        std::string path = prefix + git_tree_entry_name(a);
        if (!is_tree(a)) {
            m_changes.paths.push_back(std::move(path));
            return Status::ok();
        }
        TRY_ASSIGN(TreePtr old_sub, subtree(a, path));
        TRY_ASSIGN(TreePtr new_sub, subtree(b, path));
        return walk(path + "/", old_sub.get(), new_sub.get());
    }

    // An entry on one side only: every file below it is deleted (or added).
    Status one_side(const std::string& prefix, const git_tree_entry* e,
                    std::vector<FileChange>& into, bool old_side) {
        std::string path = prefix + git_tree_entry_name(e);
        if (!is_tree(e)) {
            into.push_back({m_changes.paths.size(), *git_tree_entry_id(e)});
            m_changes.paths.push_back(std::move(path));
            return Status::ok();
        }
        TRY_ASSIGN(TreePtr sub, subtree(e, path));
        return old_side ? walk(path + "/", sub.get(), nullptr)
                        : walk(path + "/", nullptr, sub.get());
    }

    git_repository* m_repo;
    TreeChanges m_changes;
};

// Renames only name what moved (both paths count either way), so their cost is
// capped: libgit2's similarity search (which reads the blobs) runs when there are
// at most k_similar_max_files deleted + added files; beyond, only exact renames
// (the same blob id) are reported.
constexpr std::size_t k_similar_max_files = 1000;

void exact_renames(const TreeChanges& changes, ChangeSet& change) {
    std::multimap<std::string, std::size_t> deleted;  // blob id -> old path
    for (const FileChange& d : changes.deleted) {
        deleted.emplace(oid_string(d.id), d.path);
    }
    for (const FileChange& a : changes.added) {
        auto it = deleted.find(oid_string(a.id));
        if (it != deleted.end()) {
            change.renamed.emplace_back(changes.paths[it->second], changes.paths[a.path]);
            deleted.erase(it);
        }
    }
}

// libgit2's rename detection (similar content too) on the diff of the deleted and
// added files only.
Status similar_renames(git_repository* repo, git_tree* base, git_tree* head,
                       const TreeChanges& changes, ChangeSet& change) {
    std::vector<const char*> paths;
    for (const auto* side : {&changes.deleted, &changes.added}) {
        for (const FileChange& f : *side) {
            paths.push_back(changes.paths[f.path].c_str());
        }
    }
    git_diff_options options = GIT_DIFF_OPTIONS_INIT;
    options.flags = GIT_DIFF_DISABLE_PATHSPEC_MATCH;
    options.pathspec.strings = const_cast<char**>(paths.data());
    options.pathspec.count = paths.size();
    git_diff* raw = nullptr;
    if (git_diff_tree_to_tree(&raw, repo, base, head, &options) != 0) {
        return Status(Code::io, "git diff: " + last_error());
    }
    DiffPtr diff(raw);
    git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
    find.flags = GIT_DIFF_FIND_RENAMES;
    if (git_diff_find_similar(diff.get(), &find) != 0) {
        return Status(Code::io, "git diff: detecting renames: " + last_error());
    }
    for (std::size_t i = 0; i < git_diff_num_deltas(diff.get()); ++i) {
        const git_diff_delta* d = git_diff_get_delta(diff.get(), i);
        if (d->status == GIT_DELTA_RENAMED) {
            change.renamed.emplace_back(d->old_file.path, d->new_file.path);
        }
    }
    return Status::ok();
}

// Fills `change.paths` and `change.renamed` from the trees of base..head.
Status tree_diff_paths(git_repository* repo, const git_commit* base, const git_commit* head,
                       ChangeSet& change) {
    TRY_ASSIGN(TreePtr base_tree, tree_of(base));
    TRY_ASSIGN(TreePtr head_tree, tree_of(head));
    TreeWalk walk(repo);
    TRY(walk.walk("", base_tree.get(), head_tree.get()));
    TreeChanges& changes = walk.changes();
    std::size_t candidates = changes.deleted.size() + changes.added.size();
    if (!changes.deleted.empty() && !changes.added.empty()) {
        if (candidates <= k_similar_max_files) {
            TRY(similar_renames(repo, base_tree.get(), head_tree.get(), changes, change));
        } else {
            change.note +=
                fmt::format("; {} files added or deleted: only exact renames detected", candidates);
            exact_renames(changes, change);
        }
    }
    std::vector<std::string>& paths = change.paths;
    paths = std::move(changes.paths);
    if (!std::is_sorted(paths.begin(), paths.end())) {  // sorted unless git's order differs
        std::sort(paths.begin(), paths.end());
    }
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
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
