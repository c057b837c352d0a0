// Real git repositories for the generator's tests, built with libgit2 in a fresh
// temporary directory: each commit is a full snapshot (path -> content) written
// straight to the object database, with a fixed author and time so SHAs repeat.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

struct git_repository;

namespace envgate::test {

using Files = std::map<std::string, std::string>;

class TestRepo {
  public:
    TestRepo();  // git init in a new temporary directory
    ~TestRepo();
    TestRepo(const TestRepo&) = delete;
    TestRepo& operator=(const TestRepo&) = delete;

    const std::string& dir() const { return m_dir; }

    // Commits the snapshot `files` with `parents` (SHAs) and points `ref` (e.g.
    // "refs/heads/main") at the new commit. Returns its SHA.
    std::string commit(const Files& files, const std::vector<std::string>& parents,
                       const std::string& ref, const std::string& message = "change");

    // Points `ref` at `sha` (a branch, or refs/remotes/origin/main as CI clones have).
    void set_ref(const std::string& ref, const std::string& sha);

    // Writes `content` to `path` inside the work tree (configs for the CLI).
    void write_file(const std::string& path, const std::string& content) const;

  private:
    std::string m_dir;
    git_repository* m_repo = nullptr;
};

// Lines "line 1\n" ... "line n\n", with line `changed` replaced: content big enough
// for rename detection to see two versions as similar.
std::string numbered_lines(int n, int changed = 0);

}  // namespace envgate::test
