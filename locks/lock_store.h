// LockStore: where lock records live. Every write is a compare-and-swap against
// the version the writer read, so no write loses another writer's update. Stores:
// FileStore (file_store.h) and KubernetesLeaseStore (Lease `envgate-<lock>`,
// version = metadata.resourceVersion, 409 Conflict -> Code::conflict). Waiters block
// in wait_for_change (inotify, a Kubernetes watch) instead of polling.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "locks/lock_record.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate::locks {

// How a wait for a change of a lock ended.
enum class WaitEnd {
    changed,    // the lock changed (or may have: a watch expired); re-read it
    timed_out,  // `max_wait` passed without a change
    unwatched,  // this store cannot wait for changes: the caller sleeps and re-reads
};

// Whose wait it is, so a store may sleep through changes that cannot concern it
// (etcd's lock recipe: a waiter in a FIFO queue watches the one just ahead of it, not
// the whole queue). The default, `narrow` false, wakes on every change.
struct WaitScope {
    bool narrow = false;
    std::string self;         // narrow: the waiter's own id (its own writes do not wake it)
    std::string predecessor;  // narrow: the live waiter just ahead ("" = it is first)
};

// A record and the opaque token that identifies the stored version it came from.
// An empty version means "no record stored yet" (the lock is free). `token` marks
// the point the whole read (lock record and queue) was taken at: wait_for_change
// from it wakes on any later change of either.
struct Versioned {
    LockRecord record;
    std::string version;
    std::string token;
};

class LockStore {
  public:
    virtual ~LockStore() = default;

    // Reads lock `name` and its queue: record.waiters holds every waiter's own record
    // (with its version) and the legacy entries of the lock record. A lock never
    // written reads as free with an empty version. A read from which a waiter decides
    // to take the lock shows at least every waiter that took its number before the
    // lock record's version it returns.
    virtual Result<Versioned> read(const std::string& name) = 0;

    // Reads the lock record alone (legacy queue entries included, own records not):
    // what the holder's operations and unlock need.
    virtual Result<Versioned> read_record(const std::string& name) { return read(name); }

    // Stores `record` as lock `name` if the stored version is still `version`
    // (empty: only if none is stored). Returns the new version, or a Status with
    // Code::conflict when someone wrote in between (re-read and re-decide).
    virtual Result<std::string> write(const std::string& name, const LockRecord& record,
                                      const std::string& version) = 0;

    // The queue. Writes `waiter` as its own record in the queue of lock `name`: creates
    // it (`version` empty; Code::conflict when one exists) or replaces the version read
    // (Code::conflict when it changed, Code::not_found when it was removed). Returns
    // the new version. Only the waiter writes its own record.
    virtual Result<std::string> write_waiter(const std::string& name, const Waiter& waiter,
                                             const std::string& version) = 0;
    // Removes the record of waiter `id` (absent: nothing to do). With `version` (one its
    // record was read at), only that version: when the waiter wrote its record since (it
    // renewed: it is alive), nothing is removed and the answer is Code::conflict. Another
    // process's record is removed only so; a waiter's own, without.
    virtual Status remove_waiter(const std::string& name, const std::string& id,
                                 const std::string& version = {}) = 0;

    // Blocks until lock `name` or its queue changed since `version` (a Versioned's
    // token, or the version of a write made since; empty: none stored), at most
    // `max_wait` (real time), and says how it ended. A store that cannot watch says
    // WaitEnd::unwatched at once. Ends early, as timed_out, soon after `interrupted`
    // (when set) returns true, or a signal arrives. Callers re-read, and decide by what
    // they read, never by the answer alone. A narrow `scope` lets a store skip what
    // cannot concern that waiter: the lock record while someone is ahead of it, the
    // records of waiters behind it, its own writes (not its record's removal).
    virtual Result<WaitEnd> wait_for_change(const std::string& /*name*/,
                                            const std::string& /*version*/, Duration /*max_wait*/,
                                            const std::function<bool()>& /*interrupted*/,
                                            const WaitScope& /*scope*/) {
        return WaitEnd::unwatched;
    }

    // The names of every stored lock, sorted.
    virtual Result<std::vector<std::string>> list() = 0;

    // Where the locks live, for messages ("file store /srv/locks").
    virtual std::string describe() const = 0;
};

}  // namespace envgate::locks
