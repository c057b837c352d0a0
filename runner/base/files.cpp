#include "runner/base/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>

#include "runner/base/secrets.h"

namespace envgate {
namespace {

Status errno_status(const std::string& what, const std::string& path) {
    return Status(Code::io, what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Status write_all(int fd, const std::string& content, const std::string& path) {
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return errno_status("cannot write", path);
        }
        done += static_cast<size_t>(n);
    }
    return Status::ok();
}

Result<std::string> read_file(const std::string& path) {
    if (path == "-") {
        std::ostringstream s;
        s << std::cin.rdbuf();
        return s.str();
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return errno_status("cannot read", path);
    }
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Status write_file_atomic(const std::string& path, const std::string& content,
                         const AtomicWrite& how) {
    std::filesystem::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) {
        std::filesystem::create_directories(target.parent_path(), ec);
        if (ec) {
            return Status(Code::io,
                          "cannot create " + target.parent_path().string() + ": " + ec.message());
        }
    }
    // A fresh name, created here or not at all: never through a symlink or into a file
    // someone placed in the directory beforehand.
    const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
    const std::string hidden = "." + target.filename().string() + ".tmp.";
    std::random_device random;
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
        tmp = (folder / hidden).string() + std::to_string(::getpid()) + "." +
              std::to_string(random());
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) {
            break;
        }
    }
    if (fd < 0) {
        return errno_status("cannot create", tmp);
    }
    // Closed and unlinked on every path out but the rename (and the crash hook's stop),
    // an exception included, so a failed write leaves no temp file behind.
    struct Pending {
        int open_fd;
        std::string temp;
        bool keep = false;
        ~Pending() {
            if (open_fd >= 0) {
                ::close(open_fd);
            }
            if (!keep) {
                ::unlink(temp.c_str());
            }
        }
    } pending{fd, tmp};
    TRY(write_all(fd, mask_secrets(content), tmp));
    if (::fsync(fd) != 0) {
        return errno_status("cannot sync", tmp);
    }
    ::close(pending.open_fd);
    pending.open_fd = -1;
    if (how.before_rename && !how.before_rename()) {
        pending.keep = true;
        return Status(Code::io, "write of " + path + " stopped before the rename");
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return errno_status("cannot rename to", path);
    }
    pending.keep = true;
    if (how.sync_directory) {
        const int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0) {
            return errno_status("cannot open", folder.string());
        }
        Status synced = ::fsync(dir_fd) == 0 ? Status::ok() : errno_status("cannot sync", folder);
        ::close(dir_fd);
        return synced;
    }
    return Status::ok();
}

}  // namespace envgate
