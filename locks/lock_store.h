// LockStore: where lock records live. Every write is a compare-and-swap against
// the version the writer read, so no write loses another writer's update. Stores:
// FileStore (file_store.h) and KubernetesLeaseStore (Lease `envgate-<lock>`,
// version = metadata.resourceVersion, 409 Conflict -> Code::conflict). Waiters block
// in wait_for_change (inotify, a Kubernetes watch) instead of polling.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gates/status.h"
#include "gates/time.h"
#include "locks/lock_record.h"

namespace envgate::locks {

// How a wait for a change of a lock ended.
enum class WaitEnd {
    changed,    // the lock changed (or may have: a watch expired); re-read it
    timed_out,  // `max_wait` passed without a change
    unwatched,  // this store cannot wait for changes: the caller sleeps and re-reads
};

// A record and the opaque token that identifies the stored version it came from.
// An empty version means "no record stored yet" (the lock is free).
struct Versioned {
    LockRecord record;
    std::string version;
};

class LockStore {
  public:
    virtual ~LockStore() = default;

    // Reads lock `name`. A lock never written reads as free with an empty version.
    virtual Result<Versioned> read(const std::string& name) = 0;

    // Stores `record` as lock `name` if the stored version is still `version`
    // (empty: only if none is stored). Returns the new version, or a Status with
    // Code::conflict when someone wrote in between (re-read and re-decide).
    virtual Result<std::string> write(const std::string& name, const LockRecord& record,
                                      const std::string& version) = 0;

    // Blocks until lock `name` is no longer at `version` (empty: none stored), at most
    // `max_wait` (real time), and says how it ended. A store that cannot watch says
    // WaitEnd::unwatched at once. Ends early, as timed_out, soon after `interrupted`
    // (when set) returns true, or a signal arrives. Callers re-read, and decide by what
    // they read, never by the answer alone.
    virtual Result<WaitEnd> wait_for_change(const std::string& /*name*/,
                                            const std::string& /*version*/, Duration /*max_wait*/,
                                            const std::function<bool()>& /*interrupted*/) {
        return WaitEnd::unwatched;
    }

    // The names of every stored lock, sorted.
    virtual Result<std::vector<std::string>> list() = 0;

    // Where the locks live, for messages ("file store /srv/locks").
    virtual std::string describe() const = 0;
};

}  // namespace envgate::locks
