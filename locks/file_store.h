// FileStore: the embedded lock store, a directory of `<lock>.json` files. A write
// holds an exclusive flock on `<lock>.json.lock` around read-compare-write, writes
// a temp file, fsyncs it and renames it over the record (then fsyncs the folder),
// so a reader sees the old record or the new one, never half of one, and a crash
// mid-write leaves only a temp file that the next write removes. A waiter blocks in
// wait_for_change on inotify: the rename of a new record wakes it.
#pragma once

#include <functional>
#include <string>

#include "locks/lock_store.h"

namespace envgate::locks {

class FileStore : public LockStore {
  public:
    // Fault injection for tests: called after the temp file is durable and before
    // the rename; returning false stops there, as a crash would.
    using BeforeRename = std::function<bool()>;

    explicit FileStore(std::string directory, BeforeRename before_rename = {});

    Result<Versioned> read(const std::string& name) override;
    Result<std::string> write(const std::string& name, const LockRecord& record,
                              const std::string& version) override;
    Result<WaitEnd> wait_for_change(const std::string& name, const std::string& version,
                                    Duration max_wait,
                                    const std::function<bool()>& interrupted) override;
    Result<std::vector<std::string>> list() override;
    std::string describe() const override;

  private:
    std::string record_path(const std::string& name) const;
    Status write_locked(const std::string& name, const LockRecord& record,
                        const std::string& version, std::string& new_version);
    void remove_torn_temps(const std::string& name) const;

    std::string m_directory;
    BeforeRename m_before_rename;
};

}  // namespace envgate::locks
