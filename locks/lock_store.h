// LockStore: where lock records live. Every write is a compare-and-swap against
// the version the writer read, so no write loses another writer's update. Stores:
// FileStore (file_store.h) and, later, KubernetesLeaseStore (Lease `envgate-<lock>`,
// version = metadata.resourceVersion, 409 Conflict -> Code::conflict).
#pragma once

#include <string>
#include <vector>

#include "gates/status.h"
#include "locks/lock_record.h"

namespace envgate::locks {

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

    // The names of every stored lock, sorted.
    virtual Result<std::vector<std::string>> list() = 0;

    // Where the locks live, for messages ("file store /srv/locks").
    virtual std::string describe() const = 0;
};

}  // namespace envgate::locks
