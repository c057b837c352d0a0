#include "locks/policy.h"

#include "locks/policy_detail.h"

#include <algorithm>
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

// Ordering key: pipeline creation time when known, else arrival; then pipeline id, id.
using Key = std::tuple<TimePoint, std::int64_t, std::string>;
Key key_of(const Holder& h, TimePoint arrival) {
    return {h.created_at.value_or(arrival), h.pipeline_id.value_or(0), h.id};
}

Key my_key(const LockRecord& r, const Request& rq, TimePoint now) {
    const Waiter* w = r.find_waiter(rq.who.id);
    return key_of(rq.who, w ? w->since : now);
}

// Drops queue entries whose last-seen stamp we saw unchanged for their TTL.
bool prune_dead_waiters(LockRecord& r, const std::string& self, TimePoint now,
                        const Observations& seen) {
    auto dead = [&](const Waiter& w) {
        return w.who.id != self && unchanged_for(seen, waiter_key(w.who.id), w.ttl, now);
    };
    auto it = std::remove_if(r.waiters.begin(), r.waiters.end(), dead);
    bool changed = it != r.waiters.end();
    r.waiters.erase(it, r.waiters.end());
    return changed;
}

// True when no live waiter goes before the requester under `rq.order`.
bool first_in_line(const LockRecord& r, const Request& rq, TimePoint now) {
    if (rq.order == QueueOrder::unordered) {
        return true;
    }
    Key mine = my_key(r, rq, now);
    for (const auto& w : r.waiters) {
        if (w.who.id == rq.who.id) {
            continue;
        }
        Key theirs = key_of(w.who, w.since);
        if (rq.order == QueueOrder::oldest_first ? theirs < mine : theirs > mine) {
            return false;
        }
    }
    return true;
}

void set_position(Decision& d, const LockRecord& r, const Request& rq) {
    std::vector<std::pair<Key, std::string>> keys;
    for (const auto& w : r.waiters) {
        Key k =
            rq.order == QueueOrder::unordered ? Key{w.since, 0, w.who.id} : key_of(w.who, w.since);
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

// Adds the requester to the queue, or refreshes its entry when a third of its TTL
// has passed; `dirty` says the record already changed (dead waiters pruned).
Decision wait_in_queue(LockRecord next, const Request& rq, TimePoint now, bool dirty,
                       Refusal if_no_wait, const std::string& why) {
    if (rq.wait == Wait::no) {
        return refuse(if_no_wait, why);
    }
    auto it = std::find_if(next.waiters.begin(), next.waiters.end(),
                           [&](const Waiter& w) { return w.who.id == rq.who.id; });
    if (it == next.waiters.end()) {
        next.waiters.push_back({rq.who, now, now, rq.waiter_ttl});
        dirty = true;
    } else if (now - it->last_seen >= it->ttl / 3) {
        it->last_seen = now;
        it->ttl = rq.waiter_ttl;
        dirty = true;
    }
    Decision d;
    d.outcome = dirty ? Outcome::queued : Outcome::waiting;
    d.message = why;
    set_position(d, next, rq);
    if (dirty) {
        d.write = std::move(next);
    }
    return d;
}

Decision take(LockRecord next, const Request& rq, TimePoint now, Outcome outcome,
              const std::string& what, const std::string& why) {
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
    return with_write(outcome, std::move(next), why);
}

Decision reenter(LockRecord next, const Request& rq, TimePoint now) {
    next.renewed_at = now;
    next.lease_duration = rq.lease_duration;
    if (!rq.step.empty()) {
        next.step = rq.step;
    }
    next.remove_waiter(rq.who.id);
    return with_write(Outcome::reentered, std::move(next), "re-entered by the same holder");
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
    if (rq.wait == Wait::yes && !next.find_waiter(rq.who.id)) {
        next.waiters.push_back({rq.who, now, now, rq.waiter_ttl});
    }
    return with_write(Outcome::marked_vanished, std::move(next), gone);
}

Decision acquire(const LockRecord& record, const Request& rq, TimePoint now,
                 const Observations& seen) {
    LockRecord next = record;
    bool dirty = prune_dead_waiters(next, rq.who.id, now, seen);
    if (next.state == LockState::failed) {
        std::string why = "failed by " + holder_id(next) +
                          (next.failure ? " (" + next.failure->reason + ")" : std::string());
        return wait_in_queue(std::move(next), rq, now, dirty, Refusal::lock_failed, why);
    }
    if (next.state == LockState::free) {
        if (first_in_line(next, rq, now)) {
            const Waiter* queued = next.find_waiter(rq.who.id);
            std::string why =
                queued ? "first in the queue since " + format_rfc3339_micro(queued->since)
                       : std::string("was free");
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
        key_of(*next.holder, next.acquired_at) > my_key(next, rq, now)) {
        bool was_queued = next.remove_waiter(rq.who.id);
        Decision d = refuse(Refusal::superseded, "a newer pipeline (" + holder_id(next) +
                                                     ") took the lock; order is newest_first");
        if (was_queued || dirty) {
            d.write = std::move(next);
        }
        return d;
    }
    std::string why = "held by " + holder_id(next);
    return wait_in_queue(std::move(next), rq, now, dirty, Refusal::held_by_other, why);
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
        keep(waiter_key(w.who.id), format_rfc3339_micro(w.last_seen));
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
