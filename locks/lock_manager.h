// LockManager: acts on the pure policy. Each operation is a loop of read ->
// observe -> decide -> compare-and-swap write (a Conflict re-reads and re-decides);
// acquire also waits, printing who holds the lock: in the store's wait_for_change
// (a watch: woken by the next write) when enabled, else by sleeping on the Clock.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <string>

#include "locks/lock_store.h"
#include "locks/policy.h"

namespace envgate::locks {

// How one lock is to be taken, from the environment's settings and the command line.
struct LockSpec {
    std::string name;
    OnFailure on_failure = OnFailure::hold;
    QueueOrder order = QueueOrder::oldest_first;
    Duration lease_duration = std::chrono::seconds(60);  // written on acquire and renew
    Duration wait_timeout = std::chrono::hours(2);
    Duration waiter_ttl = std::chrono::seconds(60);  // queue entry without refresh: gone
    Wait wait = Wait::yes;
    std::string step;
};

struct ManagerOptions {
    // Re-read while waiting, when not watching (or the watch failed or ended early).
    Duration poll_interval = std::chrono::milliseconds(50);
    // Wait in LockStore::wait_for_change between reads, woken by the next write. Needs
    // a real Clock: the store blocks in real time. Each wait ends by the next instant
    // a time-based rule may act (staleness, queue refresh, report, timeout) and after
    // `max_watch` at most, so a signal the store's wait does not notice is seen then.
    bool watch_store = false;
    Duration max_watch = std::chrono::seconds(1);
    Duration report_every = std::chrono::seconds(30);  // "still waiting" lines
    int max_conflicts = 1000;  // conflicts in a row before giving up (Code::transient)
};

enum class AcquireEnd { acquired, timed_out, refused, cancelled };

struct AcquireResult {
    AcquireEnd end = AcquireEnd::acquired;
    Decision decision;  // the last decision (acquired / reentered / took_over / refused)
    LockRecord record;  // the record as last read or written
    int signal = 0;     // AcquireEnd::cancelled: the signal that stopped us
};

class LockManager {
  public:
    // `pending_signal` returns the number of a SIGTERM/SIGINT received, or 0. `log`
    // receives the progress lines for people.
    LockManager(LockStore& store, Clock& clock, std::ostream& log,
                std::function<int()> pending_signal, ManagerOptions options = {});

    Result<AcquireResult> acquire(const LockSpec& spec, const Holder& who);

    // One decide-and-write for any other request (release, fail, renew, unlock,
    // verify, leave_queue). `record` receives the record after the operation.
    Result<Decision> apply(const std::string& name, const Request& request,
                           LockRecord* record = nullptr);

    Result<Decision> renew(const LockSpec& spec, const Holder& who);
    Result<Decision> release(const std::string& name, const Holder& who);
    Result<Decision> fail(const LockSpec& spec, const Holder& who, const Failure& failure);
    Result<Decision> unlock(const std::string& name, const std::string& actor,
                            const std::string& reason, const std::optional<std::string>& expect);

  private:
    Result<Decision> decide_and_write(const std::string& name, const Request& request,
                                      LockRecord& record, std::string* version = nullptr);
    // Waits until the lock may have changed from `version` or a time-based rule is due.
    void wait_for_change(const LockSpec& spec, const Holder& who, const LockRecord& r,
                         const std::string& version, TimePoint deadline, const WaitScope& scope);
    TimePoint next_due(const LockSpec& spec, const LockRecord& r, const Holder& who,
                       TimePoint deadline);
    void report_wait(const LockSpec& spec, const Decision& d, const LockRecord& r,
                     TimePoint started);
    Result<Decision> step(const std::string& name, const Request& request, LockRecord& record,
                          std::string* version, bool* again);
    Result<bool> act_on_queue(const std::string& name, const Decision& d, LockRecord& record);
    void remove_dead(const std::string& name, const Decision& d);
    AcquireResult give_up(const LockSpec& spec, const Holder& who, AcquireEnd end,
                          const Decision& d, const LockRecord& r, int signal);

    LockStore& m_store;
    Clock& m_clock;
    std::ostream& m_log;
    std::function<int()> m_pending_signal;
    ManagerOptions m_options;
    std::map<std::string, Observations> m_seen;  // per lock: what we saw, and when
    TimePoint m_last_report{};
    bool m_watch_failure_reported = false;
    std::string m_failure_reported;  // the failed holder and failure a waiting line printed
};

// What waiter `who` must be woken for while it waits for lock `spec.name` as `r` and
// `d` (the decision that made it wait) show: see WaitScope.
WaitScope wait_scope(const LockSpec& spec, const Holder& who, const LockRecord& r,
                     const Decision& d);

}  // namespace envgate::locks
