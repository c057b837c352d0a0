// The lock policy, PURE: a record, a request, `now` and what this process has
// observed go in; the next record to write (if any) and what it means come out.
// No clock, no store, no I/O: runner code and LockManager act on the Decision.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "locks/lock_record.h"

namespace envgate::locks {

// When THIS process first saw a value (the holder's renew time, a waiter's
// last-seen stamp) in its current form. Staleness is "unchanged for a whole TTL on
// our clock" (client-go's rule), never a comparison of another host's clock with ours.
struct Seen {
    std::string value;
    TimePoint observed_at{};
};
using Observations = std::map<std::string, Seen>;

// Updates `before` with what `record` shows at `now`; forgets parties that left.
Observations observe(const Observations& before, const LockRecord& record, TimePoint now);

enum class Op { acquire, leave_queue, renew, release, fail, unlock, verify };
enum class Wait { yes, no };

struct Request {
    Op op = Op::acquire;
    Holder who;                 // the requester (acquire, renew, release, fail, verify)
    std::string step;           // acquire / renew: the step it is in (kept when empty)
    Duration lease_duration{};  // acquire / renew: lease written to the record
    Duration waiter_ttl{};      // acquire: how long our queue entry lives without refresh
    OnFailure on_failure = OnFailure::hold;
    QueueOrder order = QueueOrder::oldest_first;
    Wait wait = Wait::yes;                     // acquire: Wait::no refuses instead of queueing
    Failure failure;                           // fail: step, reason, message (`at` is set to now)
    std::string actor;                         // unlock: who (GitLab login or OS user)
    std::string reason;                        // unlock: why (required)
    std::optional<std::string> expect_holder;  // unlock: refuse if someone else holds
};

enum class Outcome {
    acquired,         // free -> held by us
    reentered,        // already ours: renewed, step updated
    took_over,        // stale holder, policy release: ours now (lease_transitions + 1)
    marked_vanished,  // stale holder, policy hold: failed with HolderVanished
    queued,           // we wait; `write` adds or refreshes our queue entry
    waiting,          // we wait; nothing to write
    renewed,
    released,
    failed,
    unlocked,
    left_queue,
    verified,
    nothing_to_do,
    refused,
};

enum class Refusal {
    none,
    held_by_other,    // acquire --no-wait on a held lock (or behind waiters)
    lock_failed,      // the lock is failed: only a manual unlock frees it
    not_holder,       // release / fail / renew / verify by someone who does not hold it
    holder_changed,   // unlock --expect-holder, and the holder is another
    superseded,       // newest_first: a newer pipeline won; this older one gives up
    reason_required,  // unlock without a reason
};

// What the requester does to its own queue record, after the lock record's write (if
// any) succeeded. Joining is: `join` (a record without a number, which holds every
// waiter back from taking the lock until it has one), then `number` (the lock record's
// compare-and-swap that hands out `queue_seq`, then the record gets the number).
enum class QueueAct {
    none,
    join,    // create our record, without a number yet
    number,  // the write takes a number: store `entry` (with it) over our record
    renew,   // our record is a third of its TTL old: store `entry` (last_seen = now)
    leave,   // remove our record (we hold the lock, or give up)
};

// A waiter seen unchanged for its TTL, and the version of its record that was judged:
// only that version is removed (a waiter that renewed since is alive after all).
struct DeadWaiter {
    std::string id;
    std::string version;
    bool operator==(const DeadWaiter&) const = default;
};

struct Decision {
    Outcome outcome = Outcome::nothing_to_do;
    Refusal refusal = Refusal::none;
    std::optional<LockRecord> write;  // compare-and-swap this, then act on `outcome`
    QueueAct queue = QueueAct::none;  // then this, on our own queue record
    Waiter entry;                     // join / number / renew: what our record says
    // Waiters whose own records we saw unchanged for their TTL: skipped, and removed by
    // whoever takes the lock past them, if still at the version read.
    std::vector<DeadWaiter> dead;
    int position = 0;  // acquire while waiting: 1-based place in the queue
    int queue_length = 0;
    std::string message;  // one line for people
};

// REQUIRES: `seen` == observe(previous, record, now) for this `record`.
Decision decide(const LockRecord& record, const Request& request, TimePoint now,
                const Observations& seen);

const char* outcome_name(Outcome outcome);
const char* refusal_name(Refusal refusal);

// Whether `text` shows nothing: only Unicode white space (ASCII, no-break, en/em,
// ideographic, line separators, ...) and invisible format characters (zero-width
// space and joiners, BOM). Bytes that are not UTF-8 count as something shown.
bool is_blank_text(std::string_view text);

// Whether the latest transition of `record` is a manual unlock that freed it from
// `holder_id` (held, or failed, by it): that holder may take it again to retry its job.
bool unlocked_from(const LockRecord& record, const std::string& holder_id);

}  // namespace envgate::locks
