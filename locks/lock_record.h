// The lock record: one per lock (an environment, or the global `qa` lock). Plain
// data that the pure policy (policy.h) reads and rewrites and that every LockStore
// persists; its JSON form is documented in locks/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate::locks {

enum class LockState { free, held, failed };
// What a holder's failure does to the lock (envgate.yml `on_failure`).
enum class OnFailure { hold, release };
// Who goes first among waiters when the lock frees up (envgate.yml `order`).
enum class QueueOrder { oldest_first, newest_first, unordered };

// Who holds or waits: a pipeline in CI (`group/project#1234`), else `local:USER@HOST`.
struct Holder {
    std::string id;
    std::string pipeline_url;
    std::string job_url;
    std::string project;
    std::string user;
    // Ordering key: when the pipeline was created (CI_PIPELINE_CREATED_AT) and its
    // numeric id; both absent outside CI, where arrival time orders instead.
    std::optional<TimePoint> created_at;
    std::optional<std::int64_t> pipeline_id;
};

struct Failure {
    std::string step;
    std::string reason;  // UpperCamelCase, e.g. MigrationsJobFailed, HolderVanished
    std::string message;
    TimePoint at{};
};

// One place in a lock's queue. Each waiter keeps its place in a record of its own (a
// Lease, a file beside the lock's), renewed by that waiter alone; its number `seq` is
// taken once, by one compare-and-swap of the lock record (`queue_seq`), and orders it.
// `legacy`: an entry of the previous format, kept inside the lock record by a waiter of
// an earlier envgate (read, honoured and pruned as before; never written anew).
struct Waiter {
    Waiter() = default;
    Waiter(Holder who_, TimePoint since_, TimePoint last_seen_, Duration ttl_)
        : who(std::move(who_)), since(since_), last_seen(last_seen_), ttl(ttl_) {}

    Holder who;
    TimePoint since{};      // when it took its number (monotonic with `seq` per lock)
    TimePoint last_seen{};  // renewed while it waits; others judge liveness by change
    Duration ttl{};         // no change seen for this long: it is gone
    std::int64_t seq = 0;   // its number; 0 while joining (or a legacy entry)
    bool legacy = false;
    std::string version;  // of its own record (the store's token; not part of the JSON)

    bool joining() const { return !legacy && seq == 0; }
};

// One audit entry. `seq` counts every transition the lock ever made, so a gap in
// the capped history is visible.
struct Transition {
    std::int64_t seq = 0;
    std::string what;  // acquire, takeover, release, fail, vanished, unlock
    std::string who;
    TimePoint at{};
    std::string why;
};

inline constexpr std::size_t k_history_limit = 20;
// Unlocks are kept apart from the history: they are rare, a person's decision, and the
// audit a release engineer asks for months later; other transitions never push them out.
inline constexpr std::size_t k_unlock_limit = 100;

struct LockRecord {
    std::string name;
    LockState state = LockState::free;
    std::optional<Holder> holder;  // set while held or failed
    TimePoint acquired_at{};
    TimePoint renewed_at{};
    Duration lease_duration{};
    std::int64_t lease_transitions = 0;
    std::string step;
    std::optional<Failure> failure;  // set while failed
    // The queue as read: every waiter's own record, plus legacy entries. Only legacy
    // entries are stored inside the lock record; stores write the others apart.
    std::vector<Waiter> waiters;
    std::int64_t queue_seq = 0;       // the last number handed to a waiter
    TimePoint queue_since{};          // the `since` that went with it
    std::vector<Transition> history;  // oldest first, at most k_history_limit
    std::vector<Transition> unlocks;  // every unlock, oldest first, at most k_unlock_limit

    bool held_by(const std::string& id) const { return holder && holder->id == id; }
    const Waiter* find_waiter(const std::string& id) const;
    // Appends to the history, numbering it and dropping the oldest beyond the limit; an
    // unlock is also kept in `unlocks`.
    void record(std::string what, std::string who, TimePoint at, std::string why);
    // Removes `id` from the queue; returns whether it was there.
    bool remove_waiter(const std::string& id);
};

// What a store keeps of `record` in the lock's own record: everything but the waiters
// that live in records of their own (legacy entries stay).
LockRecord stored_form(const LockRecord& record);

// Puts a queue as read in the order people read it: legacy entries (by `since`), then
// numbered waiters by number, then those still joining; stores call it on every read.
void sort_queue(std::vector<Waiter>& waiters);

const char* state_name(LockState state);
std::optional<LockState> parse_state(const std::string& text);
const char* order_name(QueueOrder order);
const char* on_failure_name(OnFailure policy);

// Lock names become file names and Lease names: a DNS-1123 label, else Code::invalid.
Status check_lock_name(const std::string& name);

}  // namespace envgate::locks
