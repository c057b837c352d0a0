// FileStore: the embedded lock store, a directory of `<lock>.json` files. A write
// holds an exclusive flock on `<lock>.json.lock` around read-compare-write, writes
// a temp file, fsyncs it and renames it over the record (then fsyncs the folder),
// so a reader sees the old record or the new one, never half of one, and a crash
// mid-write leaves only a temp file that the next write removes. The queue: a file
// per waiter in `<lock>.queue/` beside the record, written by its waiter alone (under
// the folder's own flock, not fsynced: it is liveness, not state). A waiter blocks in
// wait_for_change on one inotify watch per lock, armed once and kept, of the record's
// folder and the queue's: the rename of a new record or waiter file wakes it.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "locks/lock_store.h"
#include "runner/base/thread_annotations.h"

namespace envgate::locks {

class FileStore : public LockStore {
  public:
    // Fault injection for tests: called after the temp file is durable and before
    // the rename; returning false stops there, as a crash would.
    using BeforeRename = std::function<bool()>;

    explicit FileStore(std::string directory, BeforeRename before_rename = {});
    ~FileStore() override;
    FileStore(const FileStore&) = delete;
    FileStore& operator=(const FileStore&) = delete;

    Result<Versioned> read(const std::string& name) override;
    Result<Versioned> read_record(const std::string& name) override;
    Result<std::string> write_waiter(const std::string& name, const Waiter& waiter,
                                     const std::string& version) override;
    Status remove_waiter(const std::string& name, const std::string& id,
                         const std::string& version = {}) override;
    Result<std::string> write(const std::string& name, const LockRecord& record,
                              const std::string& version) override;
    Result<WaitEnd> wait_for_change(const std::string& name, const std::string& version,
                                    Duration max_wait, const std::function<bool()>& interrupted,
                                    const WaitScope& scope) override;
    Result<std::vector<std::string>> list() override;
    std::string describe() const override;

    // The file of waiter `id` in the queue of lock `name`.
    std::string waiter_path(const std::string& name, const std::string& id) const;

  private:
    struct Watch {
        int fd = -1;
        int record_wd = -1;
        int queue_wd = -1;
    };
    std::string record_path(const std::string& name) const;
    std::string queue_dir(const std::string& name) const;
    // Drains the lock's watch (when armed): what happened so far is in the next read.
    void forget_events(const std::string& name);
    Status write_locked(const std::string& name, const LockRecord& record,
                        const std::string& version, std::string& new_version);
    void remove_torn_temps(const std::string& name) const;

    std::string m_directory;
    BeforeRename m_before_rename;
    // Threads: in the product each thread that acts on a lock has a store of its own (the
    // heartbeat's is separate), but the calls below are safe from several threads:
    // m_mutex guards the watches and the parse cache (the record and waiter files are
    // shared with other processes: renames, not the mutex, keep them whole).
    Mutex m_mutex;
    std::map<std::string, Watch> m_watches GUARDED_BY(m_mutex);  // lock -> its inotify watch
    struct ParsedWaiter {
        unsigned long long inode = 0;
        long long ctime_ns = 0;
        Waiter waiter;
    };
    // lock -> waiter file -> what it held when last read (by inode and change time)
    std::map<std::string, std::map<std::string, ParsedWaiter>> m_parsed GUARDED_BY(m_mutex);
};

}  // namespace envgate::locks
