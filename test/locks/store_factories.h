// The stores the conformance suite runs on. A factory makes any number of store
// objects over ONE shared storage (as separate processes would see it). The Lease
// store joins this list with a factory that starts kubesim.
#pragma once

#include <boost/mpl/list.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "locks/file_store.h"
#include "test/fakes/memory_lock_store.h"

namespace envgate::test {

// A fresh temporary directory, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "envgate-locks-XXXXXX").string();
        m_path = ::mkdtemp(pattern.data()) ? pattern : std::string();
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

struct FileStoreFactory {
    static constexpr const char* k_name = "file";
    TempDir dir;
    std::shared_ptr<locks::LockStore> make() {
        return std::make_shared<locks::FileStore>(dir.path() + "/locks");
    }
};

struct MemoryStoreFactory {
    static constexpr const char* k_name = "memory";
    std::shared_ptr<MemoryLockStore> shared = std::make_shared<MemoryLockStore>();
    std::shared_ptr<locks::LockStore> make() { return shared; }
};

using StoreFactories = boost::mpl::list<FileStoreFactory, MemoryStoreFactory>;

}  // namespace envgate::test
