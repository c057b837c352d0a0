// A temporary directory for a test's kubeconfigs, certificates and plugin scripts,
// removed with everything in it when the test ends.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <Poco/TemporaryFile.h>

namespace envgate::test {

struct TempDir {
    std::string path = Poco::TemporaryFile::tempName() + "-kubeconfig";
    TempDir() { std::filesystem::create_directories(path); }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    // Writes `text` to `name` (below `path`, folders made as needed); returns its path.
    std::string write(const std::string& name, const std::string& text,
                      bool executable = false) const {
        const std::string file = path + "/" + name;
        std::filesystem::create_directories(std::filesystem::path(file).parent_path());
        std::ofstream(file) << text;
        if (executable) {
            std::filesystem::permissions(file, std::filesystem::perms::owner_all);
        }
        return file;
    }
};

}  // namespace envgate::test
