// Whole-file reads and atomic writes (temp file in the same directory, fsync,
// rename), the only way envgate writes reports and state to disk.
#pragma once

#include <functional>
#include <string>

#include "runner/base/vocab/status.h"

namespace envgate {

// Reads all of `path` ("-" reads standard input). Errors name the path.
Result<std::string> read_file(const std::string& path);

// Writes all of `content` to the open file `fd`, retrying short writes and EINTR.
// Errors (`io`) name `path`, the file `fd` is open on.
Status write_all(int fd, const std::string& content, const std::string& path);

// What a write_file_atomic caller may ask beyond a report file's needs.
struct AtomicWrite {
    // fsync the folder after the rename, so that the new file survives a power loss
    // (a lock record; a report is written again by the next run).
    bool sync_directory = false;
    // Called after the temp file is synced, before the rename; false stops the write
    // there and leaves the temp file as a crash would (the file store's crash tests).
    std::function<bool()> before_rename{};
};

// Replaces `path` with `content` so that a reader sees the old or the new file,
// never a torn one. Creates missing parent directories. The content goes through the
// secret masker. The temp file is `.NAME.tmp.PID.RANDOM` beside `path` (hidden, so that
// a listing of `*.json` or of non-hidden names never sees it; created afresh, never
// through a symlink) and is removed on every path out but the rename.
Status write_file_atomic(const std::string& path, const std::string& content,
                         const AtomicWrite& how = {});

}  // namespace envgate
