// Whole-file reads and atomic writes (temp file in the same directory, fsync,
// rename), the only way envgate writes reports and state to disk.
#pragma once

#include <string>

#include "gates/status.h"

namespace envgate {

// Reads all of `path` ("-" reads standard input). Errors name the path.
Result<std::string> read_file(const std::string& path);

// Writes all of `content` to the open file `fd`, retrying short writes and EINTR.
// Errors (`io`) name `path`, the file `fd` is open on.
Status write_all(int fd, const std::string& content, const std::string& path);

// Replaces `path` with `content` so that a reader sees the old or the new file,
// never a torn one. Creates missing parent directories.
Status write_file_atomic(const std::string& path, const std::string& content);

}  // namespace envgate
