#include "locks/policy.h"

#include "locks/policy_detail.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

namespace envgate::locks {

Decision detail::refuse(Refusal why, std::string message) {
    Decision d;
    d.outcome = Outcome::refused;
    d.refusal = why;
    d.message = std::move(message);
    return d;
}

Decision detail::with_write(Outcome outcome, LockRecord next, std::string message) {
    Decision d;
    d.outcome = outcome;
    d.write = std::move(next);
    d.message = std::move(message);
    return d;
}

std::string detail::holder_id(const LockRecord& r) {
    return r.holder ? r.holder->id : "nobody";
}

namespace {

using detail::holder_id;
using detail::refuse;
using detail::with_write;

const std::string k_holder_key = "holder";
std::string waiter_key(const std::string& id) {
    return "waiter:" + id;
}

// True when `key` was observed unchanged for at least `ttl` on our clock.
bool unchanged_for(const Observations& seen, const std::string& key, Duration ttl, TimePoint now) {
    auto it = seen.find(key);
    return ttl > Duration::zero() && it != seen.end() && now - it->second.observed_at >= ttl;
}

Duration unchanged_since(const Observations& seen, const std::string& key, TimePoint now) {
    auto it = seen.find(key);
    return it == seen.end() ? Duration::zero() : now - it->second.observed_at;
}

// Ordering key: pipeline creation time when known, else when the waiter took its
// number; then pipeline id, the number, the id. Numbers are handed out by the lock
// record with `since` strictly increasing, so among waiters outside CI the key is the
// order of the numbers, the same for every reader whatever its clock.
using Key = std::tuple<TimePoint, std::int64_t, std::int64_t, std::string>;
Key key_of(const Waiter& w) {
    return {w.who.created_at.value_or(w.since), w.who.pipeline_id.value_or(0), w.seq, w.who.id};
}
Key holder_key(const Holder& h, TimePoint acquired) {
    return {h.created_at.value_or(acquired), h.pipeline_id.value_or(0), 0, h.id};
}

// The requester's key: its entry's when it has a number, else a newcomer's (arrives now,
// after every number handed out).
Key my_key(const LockRecord& r, const Request& rq, TimePoint now) {
    const Waiter* w = r.find_waiter(rq.who.id);
    if (w != nullptr && !w->joining()) {
        return key_of(*w);
    }
    return {rq.who.created_at.value_or(now), rq.who.pipeline_id.value_or(0),
            std::numeric_limits<std::int64_t>::max(), rq.who.id};
}

// Skips queue entries whose last-seen stamp we saw unchanged for their TTL: legacy
// entries leave the lock record (the write stores that), own records are named in
// `dead` for the next holder to remove. Our own entry is never judged here.
bool prune_dead_waiters(LockRecord& r, const std::string& self, TimePoint now,
                        const Observations& seen, std::vector<DeadWaiter>& dead) {
    bool changed = false;
    auto gone = [&](const Waiter& w) {
        if (w.who.id == self || !unchanged_for(seen, waiter_key(w.who.id), w.ttl, now)) {
            return false;
        }
        if (w.legacy) {
            changed = true;
        } else {
            dead.push_back({w.who.id, w.version});
        }
        return true;
    };
    std::erase_if(r.waiters, gone);
    return changed;
}

// True when no live waiter goes before the requester under `rq.order`. A waiter that is
// joining (no number yet) holds everyone back: its number may come before ours. The
// holder's own leftover entry does not count.
bool first_in_line(const LockRecord& r, const Request& rq, TimePoint now) {
    if (rq.order == QueueOrder::unordered) {
        return true;
    }
    const Waiter* me = r.find_waiter(rq.who.id);
    bool numbered = me != nullptr && !me->joining();
    Key mine = my_key(r, rq, now);
    for (const auto& w : r.waiters) {
        if (w.who.id == rq.who.id || r.held_by(w.who.id)) {
            continue;
        }
        if (w.joining()) {
            return false;
        }
        if (rq.order == QueueOrder::oldest_first && !numbered && !rq.who.created_at) {
            return false;  // outside CI arrival orders: every queued waiter came first
        }
        Key theirs = key_of(w);
        if (rq.order == QueueOrder::oldest_first ? theirs < mine : theirs > mine) {
            return false;
        }
    }
    return true;
}

void set_position(Decision& d, const LockRecord& r, const Request& rq) {
    std::vector<std::pair<Key, std::string>> keys;
    for (const auto& w : r.waiters) {
        if (r.held_by(w.who.id)) {
            continue;
        }
        Key k = rq.order == QueueOrder::unordered ? Key{w.since, 0, w.seq, w.who.id} : key_of(w);
        if (w.joining()) {
            std::get<2>(k) = std::numeric_limits<std::int64_t>::max();
        }
        keys.emplace_back(k, w.who.id);
    }
    std::sort(keys.begin(), keys.end());
    if (rq.order == QueueOrder::newest_first) {
        std::reverse(keys.begin(), keys.end());
    }
    d.queue_length = static_cast<int>(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].second == rq.who.id) {
            d.position = static_cast<int>(i) + 1;
        }
    }
}

// Keeps the requester's place: joins (a record of its own without a number), takes a
// number by the lock record's compare-and-swap, or renews its record when a third of
// its TTL has passed; `dirty` says the record already changed (legacy entries pruned).
Decision wait_in_queue(LockRecord next, const Request& rq, TimePoint now, bool dirty,
                       Refusal if_no_wait, const std::string& why) {
    if (rq.wait == Wait::no) {
        return refuse(if_no_wait, why);
    }
    Decision d;
    d.message = why;
    const Waiter* mine = next.find_waiter(rq.who.id);
    if (mine != nullptr && mine->legacy) {  // ours, from an earlier envgate: join anew
        next.remove_waiter(rq.who.id);
        dirty = true;
        mine = nullptr;
    }
    if (mine == nullptr) {
        d.queue = QueueAct::join;
        d.entry.who = rq.who;
        d.entry.since = now;
        d.entry.last_seen = now;
        d.entry.ttl = rq.waiter_ttl;
        next.waiters.push_back(d.entry);  // for the position only: the store writes it apart
    } else if (mine->joining()) {
        d.queue = QueueAct::number;
        next.queue_seq += 1;
        next.queue_since = std::max(now, next.queue_since + std::chrono::microseconds(1));
        d.entry = *mine;
        d.entry.who = rq.who;
        d.entry.seq = next.queue_seq;
        d.entry.since = next.queue_since;
        d.entry.last_seen = now;
        d.entry.ttl = rq.waiter_ttl;
        dirty = true;
    } else if (now - mine->last_seen >= mine->ttl / 3) {
        d.queue = QueueAct::renew;
        d.entry = *mine;
        d.entry.last_seen = now;
        d.entry.ttl = rq.waiter_ttl;
    }
    d.outcome = dirty || d.queue != QueueAct::none ? Outcome::queued : Outcome::waiting;
    if (d.queue == QueueAct::number) {
        // Our place in the written queue is the numbered entry.
        for (auto& w : next.waiters) {
            if (w.who.id == rq.who.id) {
                w = d.entry;
            }
        }
    }
    set_position(d, next, rq);
    if (dirty) {
        d.write = std::move(next);
    }
    return d;
}

// Whether the requester has a record of its own in the queue (to remove once it holds).
QueueAct leave_if_queued(const LockRecord& r, const Request& rq) {
    const Waiter* w = r.find_waiter(rq.who.id);
    return w != nullptr && !w->legacy ? QueueAct::leave : QueueAct::none;
}

Decision take(LockRecord next, const Request& rq, TimePoint now, Outcome outcome,
              const std::string& what, const std::string& why) {
    QueueAct queue = leave_if_queued(next, rq);
    next.state = LockState::held;
    next.holder = rq.who;
    next.acquired_at = now;
    next.renewed_at = now;
    next.lease_duration = rq.lease_duration;
    next.step = rq.step;
    next.failure.reset();
    next.lease_transitions += 1;
    next.remove_waiter(rq.who.id);
    next.record(what, rq.who.id, now, why);
    Decision d = with_write(outcome, std::move(next), why);
    d.queue = queue;
    return d;
}

Decision reenter(LockRecord next, const Request& rq, TimePoint now) {
    QueueAct queue = leave_if_queued(next, rq);
    next.renewed_at = now;
    next.lease_duration = rq.lease_duration;
    if (!rq.step.empty()) {
        next.step = rq.step;
    }
    next.remove_waiter(rq.who.id);
    Decision d = with_write(Outcome::reentered, std::move(next), "re-entered by the same holder");
    d.queue = queue;
    return d;
}

Decision on_stale_holder(LockRecord next, const Request& rq, TimePoint now,
                         const Observations& seen, bool dirty) {
    std::string gone = "holder " + holder_id(next) + " vanished: no renewal seen for " +
                       format_duration(unchanged_since(seen, k_holder_key, now)) + " (lease " +
                       format_duration(next.lease_duration) + ")";
    if (rq.on_failure == OnFailure::release) {
        if (first_in_line(next, rq, now)) {
            return take(std::move(next), rq, now, Outcome::took_over, "takeover", gone);
        }
        return wait_in_queue(std::move(next), rq, now, dirty, Refusal::held_by_other, gone);
    }
    next.state = LockState::failed;
    next.failure = Failure{next.step, "HolderVanished", gone, now};
    next.record("vanished", rq.who.id, now, gone);
    return with_write(Outcome::marked_vanished, std::move(next), gone);
}

std::string first_why(const LockRecord& r, const Request& rq) {
    const Waiter* queued = r.find_waiter(rq.who.id);
    if (queued == nullptr) {
        return "was free";
    }
    std::string why = "first in the queue since " + format_rfc3339_micro(queued->since);
    if (queued->seq > 0) {
        why += " (number " + std::to_string(queued->seq) + ")";
    }
    return why;
}

Decision acquire_from(LockRecord next, const Request& rq, TimePoint now, const Observations& seen,
                      bool dirty) {
    if (next.state == LockState::failed) {
        std::string why = "failed by " + holder_id(next) +
                          (next.failure ? " (" + next.failure->reason + ")" : std::string());
        return wait_in_queue(std::move(next), rq, now, dirty, Refusal::lock_failed, why);
    }
    if (next.state == LockState::free) {
        if (first_in_line(next, rq, now)) {
            std::string why = first_why(next, rq);
            return take(std::move(next), rq, now, Outcome::acquired, "acquire", why);
        }
        return wait_in_queue(std::move(next), rq, now, dirty, Refusal::held_by_other,
                             "free, but others queued first");
    }
    if (next.held_by(rq.who.id)) {
        return reenter(std::move(next), rq, now);
    }
    if (unchanged_for(seen, k_holder_key, next.lease_duration, now)) {
        return on_stale_holder(std::move(next), rq, now, seen, dirty);
    }
    if (rq.order == QueueOrder::newest_first && next.holder &&
        holder_key(*next.holder, next.acquired_at) > my_key(next, rq, now)) {
        QueueAct queue = leave_if_queued(next, rq);
        bool was_queued = next.remove_waiter(rq.who.id);
        Decision d = refuse(Refusal::superseded, "a newer pipeline (" + holder_id(next) +
                                                     ") took the lock; order is newest_first");
        d.queue = queue;
        if ((was_queued && queue == QueueAct::none) || dirty) {
            d.write = std::move(next);
        }
        return d;
    }
    std::string why = "held by " + holder_id(next);
    return wait_in_queue(std::move(next), rq, now, dirty, Refusal::held_by_other, why);
}

Decision acquire(const LockRecord& record, const Request& rq, TimePoint now,
                 const Observations& seen) {
    LockRecord next = record;
    std::vector<DeadWaiter> dead;
    bool dirty = prune_dead_waiters(next, rq.who.id, now, seen, dead);
    Decision d = acquire_from(std::move(next), rq, now, seen, dirty);
    d.dead = std::move(dead);
    return d;
}

}  // namespace

Observations observe(const Observations& before, const LockRecord& record, TimePoint now) {
    Observations after;
    auto keep = [&](const std::string& key, std::string value) {
        auto it = before.find(key);
        if (it != before.end() && it->second.value == value) {
            after[key] = it->second;
        } else {
            after[key] = Seen{std::move(value), now};
        }
    };
    if (record.state == LockState::held && record.holder) {
        keep(k_holder_key, record.holder->id + "|" + format_rfc3339_micro(record.renewed_at) + "|" +
                               std::to_string(record.lease_transitions));
    }
    for (const auto& w : record.waiters) {
        keep(waiter_key(w.who.id), format_rfc3339_micro(w.last_seen) + "|" + std::to_string(w.seq));
    }
    return after;
}

namespace {

// The code point that starts `text` at `at` and its length in bytes; nullopt for a
// byte that starts no well-formed UTF-8 sequence.
std::optional<std::pair<char32_t, std::size_t>> decode_utf8(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) {
        return std::pair<char32_t, std::size_t>{lead, 1};
    }
    const std::size_t size = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
    if (size == 0 || lead > 0xF4 || at + size > text.size()) {
        return std::nullopt;
    }
    char32_t cp = lead & (0x7F >> size);
    for (std::size_t i = 1; i < size; ++i) {
        if ((byte(i) & 0xC0) != 0x80) {
            return std::nullopt;
        }
        cp = (cp << 6) | (byte(i) & 0x3F);
    }
    const char32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[size] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return std::nullopt;
    }
    return std::pair<char32_t, std::size_t>{cp, size};
}

// Unicode White_Space, plus the invisible format characters a reason could be made of.
bool shows_nothing(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           cp == 0x180E || (cp >= 0x2000 && cp <= 0x200D) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x2060 || cp == 0x3000 || cp == 0xFEFF;
}

}  // namespace

bool is_blank_text(std::string_view text) {
    for (std::size_t at = 0; at < text.size();) {
        auto cp = decode_utf8(text, at);
        if (!cp || !shows_nothing(cp->first)) {
            return false;
        }
        at += cp->second;
    }
    return true;
}

Decision decide(const LockRecord& record, const Request& request, TimePoint now,
                const Observations& seen) {
    switch (request.op) {
        case Op::acquire:
            return acquire(record, request, now, seen);
        case Op::renew:
        case Op::release:
        case Op::fail:
        case Op::verify:
            return detail::decide_holder_op(record, request, now);
        case Op::unlock:
        case Op::leave_queue:
            return detail::decide_admin_op(record, request, now);
    }
    return refuse(Refusal::not_holder, "unknown operation");
}

}  // namespace envgate::locks
