#include "locks/lock_manager.h"

#include <algorithm>
#include <ostream>

#include "locks/describe.h"

namespace envgate::locks {
namespace {

bool holds(Outcome o) {
    return o == Outcome::acquired || o == Outcome::reentered || o == Outcome::took_over;
}

std::string queue_text(const Decision& d, QueueOrder order) {
    if (d.position == 0) {
        return "not queued";
    }
    return "position " + std::to_string(d.position) + " of " + std::to_string(d.queue_length) +
           " in the queue (" + order_name(order) + ")";
}

// The keys policy.cpp's observe() files what it saw under.
const std::string k_holder_seen = "holder";
std::string waiter_seen(const std::string& id) {
    return "waiter:" + id;
}

// `t` when it is still ahead of `now`, else `later` (a rule already due was applied
// by the decision just made, or does not apply).
TimePoint ahead(TimePoint t, TimePoint now, TimePoint later) {
    return t > now ? std::min(t, later) : later;
}

// What acquire and renew both ask for: `who`, in `spec`'s step, for its lease.
Request holder_request(Op op, const LockSpec& spec, const Holder& who) {
    Request rq;
    rq.op = op;
    rq.who = who;
    rq.step = spec.step;
    rq.lease_duration = spec.lease_duration;
    return rq;
}

}  // namespace

LockManager::LockManager(LockStore& store, Clock& clock, std::ostream& log,
                         std::function<int()> pending_signal, ManagerOptions options)
    : m_store(store),
      m_clock(clock),
      m_log(log),
      m_pending_signal(std::move(pending_signal)),
      m_options(options) {}

Result<Decision> LockManager::decide_and_write(const std::string& name, const Request& request,
                                               LockRecord& record, std::string* version) {
    for (int attempt = 0; attempt < m_options.max_conflicts; ++attempt) {
        // Only acquire decides by the queue; the holder's operations and unlock read the
        // lock record alone.
        TRY_ASSIGN(Versioned current,
                   request.op == Op::acquire ? m_store.read(name) : m_store.read_record(name));
        TimePoint now = m_clock.now();
        Observations& seen = m_seen[name];
        seen = observe(seen, current.record, now);
        Decision d = decide(current.record, request, now, seen);
        if (!d.write) {
            record = current.record;
            if (version != nullptr) {
                *version = current.token.empty() ? current.version : current.token;
            }
            return d;
        }
        d.write->name = name;
        auto written = m_store.write(name, *d.write, current.version);
        if (written.is_ok()) {
            record = *d.write;
            if (version != nullptr) {
                *version = *written;
            }
            return d;
        }
        if (written.status().code() != Code::conflict) {
            return written.status().with_context("lock " + name);
        }
    }
    return Status(Code::transient, "lock " + name + ": " + std::to_string(m_options.max_conflicts) +
                                       " conflicting writes in a row");
}

// Acts on the decision's queue part, after its lock write (if any) succeeded. Returns
// false when our record changed under us (a conflict, or it was removed as dead): the
// caller re-reads and re-decides.
Result<bool> LockManager::act_on_queue(const std::string& name, const Decision& d,
                                       LockRecord& record) {
    if (d.queue == QueueAct::none || d.queue == QueueAct::leave) {
        return true;  // leaving comes with holding or giving up: acquire() does it
    }
    Waiter entry = d.entry;
    auto written = m_store.write_waiter(name, entry,
                                        d.queue == QueueAct::join ? std::string() : entry.version);
    if (!written.is_ok()) {
        Code code = written.status().code();
        if (code == Code::conflict || code == Code::not_found) {
            return false;
        }
        return written.status().with_context("lock " + name + ": queue entry");
    }
    entry.version = *written;
    for (auto& w : record.waiters) {
        if (w.who.id == entry.who.id && !w.legacy) {
            w = entry;
            return true;
        }
    }
    record.waiters.push_back(entry);
    return true;
}

// Removes the records of waiters seen dead, that the lock was taken past, each only at
// the version judged (best effort: a record left behind is skipped again by the next
// reader). A waiter that renewed in between is alive after all: its record stays, and
// the next read sees it renewed, so nobody judges it dead again before a whole TTL.
void LockManager::remove_dead(const std::string& name, const Decision& d) {
    for (const DeadWaiter& dead : d.dead) {
        Status removed = m_store.remove_waiter(name, dead.id, dead.version);
        if (removed.code() == Code::conflict) {
            m_log << "lock " << name << ": " << dead.id
                  << " renewed its place in the queue after it was seen stale; it keeps it\n";
        } else if (!removed.is_ok()) {
            m_log << "lock " << name << ": could not remove the queue entry of " << dead.id
                  << ", seen dead: " << removed.message() << "\n";
        }
    }
}

// One decide-and-write, then, for acquire, what it means for our queue record: the
// join, the number, the renewal; once we hold the lock, our record and those of the
// waiters we took it past (seen dead) are removed. `again` (when set) says the decision
// was one step of joining, or our record changed under us: re-read at once.
Result<Decision> LockManager::step(const std::string& name, const Request& request,
                                   LockRecord& record, std::string* version, bool* again) {
    if (again != nullptr) {
        *again = false;
    }
    TRY_ASSIGN(Decision d, decide_and_write(name, request, record, version));
    if (request.op != Op::acquire) {
        return d;
    }
    if (holds(d.outcome)) {
        remove_dead(name, d);
        if (d.queue == QueueAct::leave) {
            Status left = m_store.remove_waiter(name, request.who.id);
            if (!left.is_ok()) {  // we hold the lock: our leftover entry is skipped
                m_log << "lock " << name << ": could not remove our queue entry: " << left.message()
                      << "\n";
            }
        }
        return d;
    }
    if (d.outcome == Outcome::refused) {
        return d;
    }
    TRY_ASSIGN(bool kept, act_on_queue(name, d, record));
    if (again != nullptr) {
        *again = !kept || d.queue == QueueAct::join || d.queue == QueueAct::number;
    }
    return d;
}

Result<Decision> LockManager::apply(const std::string& name, const Request& request,
                                    LockRecord* record) {
    LockRecord scratch;
    TRY_ASSIGN(Decision d, step(name, request, scratch, nullptr, nullptr));
    if (record != nullptr) {
        *record = std::move(scratch);
    }
    return d;
}

Result<AcquireResult> LockManager::acquire(const LockSpec& spec, const Holder& who) {
    Request rq = holder_request(Op::acquire, spec, who);
    rq.waiter_ttl = spec.waiter_ttl;
    rq.on_failure = spec.on_failure;
    rq.order = spec.order;
    rq.wait = spec.wait;
    TimePoint started = m_clock.now();
    TimePoint deadline = started + spec.wait_timeout;
    m_last_report = {};
    m_watch_failure_reported = false;
    m_failure_reported.clear();
    LockRecord record;
    for (;;) {
        if (int signal = m_pending_signal ? m_pending_signal() : 0) {
            return give_up(spec, who, AcquireEnd::cancelled, Decision{}, record, signal);
        }
        std::string version;
        bool again = false;
        TRY_ASSIGN(Decision d, step(spec.name, rq, record, &version, &again));
        if (holds(d.outcome)) {
            return AcquireResult{AcquireEnd::acquired, d, record, 0};
        }
        if (d.outcome == Outcome::marked_vanished) {
            m_log << "lock " << spec.name << ": " << d.message
                  << "; marked failed (HolderVanished, policy hold). It stays failed until "
                     "someone runs:\n  "
                  << unlock_command(record) << "\n";
            continue;
        }
        if (d.outcome == Outcome::refused) {
            return give_up(spec, who, AcquireEnd::refused, d, record, 0);
        }
        if (again) {
            continue;  // joining: take the number at once (no wait between the two steps)
        }
        TimePoint now = m_clock.now();
        if (now >= deadline) {
            return give_up(spec, who, AcquireEnd::timed_out, d, record, 0);
        }
        report_wait(spec, d, record, started);
        wait_for_change(spec, who, record, version, deadline, wait_scope(spec, who, record, d));
    }
}

// The first instant after now at which a rule of the policy may act without a write
// by anyone: the holder or a queue entry seen unchanged for its TTL, our queue entry
// due for its refresh (ttl/3), the next "still waiting" line, the wait timeout.
TimePoint LockManager::next_due(const LockSpec& spec, const LockRecord& r, const Holder& who,
                                TimePoint deadline) {
    TimePoint now = m_clock.now();
    TimePoint due = deadline;
    if (m_last_report != TimePoint{}) {
        due = ahead(m_last_report + m_options.report_every, now, due);
    }
    const Observations& seen = m_seen[spec.name];
    auto seen_at = [&](const std::string& key) {
        auto it = seen.find(key);
        return it == seen.end() ? std::optional<TimePoint>() : it->second.observed_at;
    };
    if (r.state == LockState::held) {
        if (auto at = seen_at(k_holder_seen)) {
            due = ahead(*at + r.lease_duration, now, due);
        }
    }
    for (const Waiter& w : r.waiters) {
        if (w.who.id == who.id) {
            due = ahead(w.last_seen + w.ttl / 3, now, due);  // our renewal
        } else if (auto at = seen_at(waiter_seen(w.who.id))) {
            due = ahead(*at + w.ttl, now, due);
        }
    }
    return due;
}

// In a FIFO queue, a numbered waiter only needs waking when the live waiter just
// ahead of it changes or leaves (or, once it is first, when the lock record changes):
// a hand-off then wakes one waiter, not the whole queue. Anything else (another order,
// a legacy entry, no number yet) is woken by every change.
WaitScope wait_scope(const LockSpec& spec, const Holder& who, const LockRecord& r,
                     const Decision& d) {
    WaitScope scope;
    if (spec.order != QueueOrder::oldest_first) {
        return scope;
    }
    std::vector<Waiter> queue = r.waiters;
    sort_queue(queue);
    std::string predecessor;
    for (const Waiter& w : queue) {
        if (w.legacy) {
            return scope;
        }
        if (w.who.id == who.id) {
            if (w.joining()) {
                return scope;
            }
            scope.narrow = true;
            scope.self = who.id;
            scope.predecessor = predecessor;
            return scope;
        }
        if (std::none_of(d.dead.begin(), d.dead.end(),
                         [&](const DeadWaiter& dead) { return dead.id == w.who.id; })) {
            predecessor = w.who.id;
        }
    }
    return scope;  // not in the queue
}

void LockManager::wait_for_change(const LockSpec& spec, const Holder& who, const LockRecord& r,
                                  const std::string& version, TimePoint deadline,
                                  const WaitScope& scope) {
    TimePoint now = m_clock.now();
    TimePoint poll_wake = std::min(now + m_options.poll_interval, deadline);
    if (m_options.watch_store) {
        TimePoint wake = std::min(now + m_options.max_watch, next_due(spec, r, who, deadline));
        std::function<bool()> interrupted;
        if (m_pending_signal) {
            interrupted = [this] { return m_pending_signal() != 0; };
        }
        auto waited = m_store.wait_for_change(spec.name, version, wake - now, interrupted, scope);
        if (waited.is_ok() && *waited == WaitEnd::changed) {
            return;
        }
        if (!waited.is_ok() && !m_watch_failure_reported) {
            m_watch_failure_reported = true;
            m_log << "lock " << spec.name << ": cannot watch for changes ("
                  << waited.status().message() << "); re-reading every "
                  << format_duration(m_options.poll_interval) << "\n";
        }
        if (m_pending_signal && m_pending_signal() != 0) {
            return;
        }
    }
    // Not watched, or the wait ended without a change: never re-read sooner than this.
    if (m_clock.now() < poll_wake) {
        m_clock.sleep_until(poll_wake);
    }
}

void LockManager::report_wait(const LockSpec& spec, const Decision& d, const LockRecord& r,
                              TimePoint started) {
    TimePoint now = m_clock.now();
    if (m_last_report != TimePoint{} && now - m_last_report < m_options.report_every) {
        return;
    }
    m_last_report = now;
    m_log << "waiting for lock " << spec.name << ": " << describe_holder(r, now) << "; "
          << queue_text(d, spec.order) << "; waited " << format_duration(now - started) << " of "
          << format_duration(spec.wait_timeout) << "\n";
    if (r.state == LockState::failed) {
        // The failure once (it can be long), again when it changes; the command each time.
        std::string failure = describe_failure(r);
        std::string shown = (r.holder ? r.holder->id : std::string()) + "\n" + failure;
        m_log << "  failure: " << (shown == m_failure_reported ? "the failure above" : failure)
              << "\n  to unlock: " << unlock_command(r) << "\n";
        m_failure_reported = std::move(shown);
    }
    m_log.flush();  // a CI log is a pipe: people must see the wait while it lasts
}

AcquireResult LockManager::give_up(const LockSpec& spec, const Holder& who, AcquireEnd end,
                                   const Decision& d, const LockRecord& r, int signal) {
    TimePoint now = m_clock.now();
    if (end == AcquireEnd::refused && d.queue == QueueAct::leave) {
        Status removed = m_store.remove_waiter(spec.name, who.id);  // superseded
        if (!removed.is_ok()) {
            m_log << "lock " << spec.name << ": could not leave the queue: " << removed.message()
                  << "\n";
        }
    }
    if (end == AcquireEnd::timed_out || end == AcquireEnd::cancelled) {
        Request leave;
        leave.op = Op::leave_queue;
        leave.who = who;
        auto left = apply(spec.name, leave);  // a legacy entry of ours, if any
        Status removed = m_store.remove_waiter(spec.name, who.id);
        if (!left.is_ok() || !removed.is_ok()) {
            m_log << "lock " << spec.name << ": could not leave the queue: "
                  << (left.is_ok() ? removed.message() : left.status().message()) << "\n";
        }
    }
    if (end == AcquireEnd::timed_out) {
        m_log << "envgate: lock " << spec.name << " not obtained within "
              << format_duration(spec.wait_timeout) << ": " << describe_holder(r, now) << "\n";
    } else if (end == AcquireEnd::cancelled) {
        m_log << "envgate: stopped waiting for lock " << spec.name << " (signal " << signal
              << "); left the queue\n";
    } else {
        m_log << "envgate: lock " << spec.name << " not obtained: " << d.message << "\n";
        if (d.refusal == Refusal::held_by_other) {
            m_log << "  " << describe_holder(r, now) << "\n";
        }
    }
    if (r.state == LockState::failed && end != AcquireEnd::cancelled) {
        m_log << "  failure: " << describe_failure(r) << "\n  to unlock: " << unlock_command(r)
              << "\n";
    }
    return AcquireResult{end, d, r, signal};
}

Result<Decision> LockManager::renew(const LockSpec& spec, const Holder& who) {
    return apply(spec.name, holder_request(Op::renew, spec, who));
}

Result<Decision> LockManager::release(const std::string& name, const Holder& who) {
    Request rq;
    rq.op = Op::release;
    rq.who = who;
    return apply(name, rq);
}

Result<Decision> LockManager::fail(const LockSpec& spec, const Holder& who,
                                   const Failure& failure) {
    Request rq;
    rq.op = Op::fail;
    rq.who = who;
    rq.on_failure = spec.on_failure;
    rq.failure = failure;
    return apply(spec.name, rq);
}

Result<Decision> LockManager::unlock(const std::string& name, const std::string& actor,
                                     const std::string& reason,
                                     const std::optional<std::string>& expect) {
    Request rq;
    rq.op = Op::unlock;
    rq.actor = actor;
    rq.reason = reason;
    rq.expect_holder = expect;
    return apply(name, rq);
}

}  // namespace envgate::locks
