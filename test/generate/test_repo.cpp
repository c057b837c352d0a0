#include "test/generate/test_repo.h"

#include <git2.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace envgate::test {
namespace {

void check(int rc, const char* what) {
    if (rc != 0) {
        const git_error* e = git_error_last();
        throw std::runtime_error(std::string(what) + ": " +
                                 (e != nullptr ? e->message : "libgit2 error"));
    }
}

git_oid parse_oid(const std::string& sha) {
    git_oid oid;
    check(git_oid_fromstr(&oid, sha.c_str()), "parsing a SHA");
    return oid;
}

git_oid write_tree(git_repository* repo, const Files& files) {
    git_index* index = nullptr;
    check(git_index_new(&index), "git_index_new");
    std::unique_ptr<git_index, void (*)(git_index*)> guard(index, git_index_free);
    for (const auto& [path, content] : files) {
        git_index_entry entry{};
        entry.mode = GIT_FILEMODE_BLOB;
        entry.path = path.c_str();
        check(git_blob_create_from_buffer(&entry.id, repo, content.data(), content.size()),
              "writing a blob");
        check(git_index_add(index, &entry), "adding a file");
    }
    git_oid tree;
    check(git_index_write_tree_to(&tree, index, repo), "writing a tree");
    return tree;
}

}  // namespace

TestRepo::TestRepo() {
    git_libgit2_init();
    std::string tmpl = (std::filesystem::temp_directory_path() / "envgate-gen-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    m_dir = tmpl;
    check(git_repository_init(&m_repo, m_dir.c_str(), 0), "git init");
}

TestRepo::~TestRepo() {
    git_repository_free(m_repo);
    git_libgit2_shutdown();
    std::error_code ignored;
    std::filesystem::remove_all(m_dir, ignored);
}

std::string TestRepo::commit(const Files& files, const std::vector<std::string>& parents,
                             const std::string& ref, const std::string& message) {
    git_oid tree_id = write_tree(m_repo, files);
    git_tree* tree = nullptr;
    check(git_tree_lookup(&tree, m_repo, &tree_id), "tree lookup");
    std::unique_ptr<git_tree, void (*)(git_tree*)> tree_guard(tree, git_tree_free);
    std::vector<git_commit*> parent_commits;
    for (const auto& sha : parents) {
        git_oid oid = parse_oid(sha);
        git_commit* c = nullptr;
        check(git_commit_lookup(&c, m_repo, &oid), "parent lookup");
        parent_commits.push_back(c);
    }
    git_signature* sig = nullptr;
    // A fixed time, one minute later per parent count, keeps SHAs reproducible.
    check(git_signature_new(&sig, "envgate test", "test@example.com",
                            1700000000 + 60 * static_cast<long>(parents.size()), 0),
          "signature");
    git_oid id;
    int rc = git_commit_create(&id, m_repo, nullptr, sig, sig, nullptr, message.c_str(), tree,
                               parent_commits.size(),
                               const_cast<const git_commit**>(parent_commits.data()));
    git_signature_free(sig);
    for (git_commit* c : parent_commits) {
        git_commit_free(c);
    }
    check(rc, "git commit");
    char buf[GIT_OID_HEXSZ + 1];
    git_oid_tostr(buf, sizeof buf, &id);
    set_ref(ref, buf);
    return buf;
}

void TestRepo::set_ref(const std::string& ref, const std::string& sha) {
    git_oid oid = parse_oid(sha);
    git_reference* out = nullptr;
    check(git_reference_create(&out, m_repo, ref.c_str(), &oid, 1, "test"), "update ref");
    git_reference_free(out);
}

void TestRepo::write_file(const std::string& path, const std::string& content) const {
    std::filesystem::path p = std::filesystem::path(m_dir) / path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << content;
}

std::string numbered_lines(int n, int changed) {
    std::string out;
    for (int i = 1; i <= n; ++i) {
        out += i == changed ? "changed line\n" : "line " + std::to_string(i) + "\n";
    }
    return out;
}

}  // namespace envgate::test
