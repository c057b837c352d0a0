// The policy for release, fail, renew and verify (the holder's operations) and for
// unlock and leaving the queue. Pure, like the rest of the policy.
#include <string>

#include "locks/describe.h"
#include "locks/policy_detail.h"

namespace envgate::locks::detail {
namespace {

const char* k_unlock_hint = "only a manual unlock frees it (envgate unlock)";

void make_free(LockRecord& next) {
    next.state = LockState::free;
    next.holder.reset();
    next.acquired_at = {};
    next.renewed_at = {};
    next.lease_duration = {};
    next.step.clear();
    next.failure.reset();
}

Decision not_ours(const LockRecord& r, const Request& rq) {
    if (r.state == LockState::failed) {
        return refuse(Refusal::lock_failed,
                      "the lock is failed (held by " + holder_id(r) + "); " + k_unlock_hint);
    }
    if (r.state == LockState::free) {
        return refuse(Refusal::not_holder, "the lock is free; " + rq.who.id + " does not hold it");
    }
    return refuse(Refusal::not_holder, "held by " + holder_id(r) + ", not " + rq.who.id);
}

Decision release(LockRecord next, const Request& rq, TimePoint now) {
    if (next.state == LockState::free) {
        Decision d;
        d.message = "already free";
        return d;
    }
    if (next.state != LockState::held || !next.held_by(rq.who.id)) {
        return not_ours(next, rq);
    }
    make_free(next);
    next.record("release", rq.who.id, now, "released by its holder");
    return with_write(Outcome::released, std::move(next), "released");
}

Decision fail(LockRecord next, const Request& rq, TimePoint now) {
    if (next.state == LockState::failed && next.held_by(rq.who.id)) {
        Decision d;
        d.message = "already failed";
        return d;
    }
    if (next.state != LockState::held || !next.held_by(rq.who.id)) {
        return not_ours(next, rq);
    }
    Failure f = rq.failure;
    f.at = now;
    if (f.step.empty()) {
        f.step = next.step;
    }
    std::string why = failure_text(f);
    if (rq.on_failure == OnFailure::release) {
        make_free(next);
        next.record("fail", rq.who.id, now, why + " (policy release: lock freed)");
        return with_write(Outcome::failed, std::move(next), why);
    }
    next.state = LockState::failed;
    next.failure = f;
    next.record("fail", rq.who.id, now, why);
    return with_write(Outcome::failed, std::move(next), why);
}

Decision renew(LockRecord next, const Request& rq, TimePoint now) {
    if (next.state != LockState::held || !next.held_by(rq.who.id)) {
        return not_ours(next, rq);
    }
    next.renewed_at = now;
    if (rq.lease_duration > Duration::zero()) {
        next.lease_duration = rq.lease_duration;
    }
    if (!rq.step.empty()) {
        next.step = rq.step;  // the holder moved on to another step
    }
    return with_write(Outcome::renewed, std::move(next), "renewed");
}

Decision verify(const LockRecord& r, const Request& rq) {
    if (r.state != LockState::held || !r.held_by(rq.who.id)) {
        return not_ours(r, rq);
    }
    Decision d;
    d.outcome = Outcome::verified;
    d.message = "held by " + rq.who.id;
    return d;
}

Decision unlock(LockRecord next, const Request& rq, TimePoint now) {
    if (is_blank_text(rq.reason)) {
        return refuse(Refusal::reason_required, "unlock needs a reason (--reason TEXT)");
    }
    if (rq.expect_holder && !next.held_by(*rq.expect_holder)) {
        return refuse(Refusal::holder_changed, "expected holder " + *rq.expect_holder +
                                                   ", but the lock is " + state_name(next.state) +
                                                   " (holder " + holder_id(next) + ")");
    }
    if (next.state == LockState::free) {
        Decision d;
        d.message = "already free";
        return d;
    }
    std::string was = std::string(state_name(next.state)) + " by " + holder_id(next);
    if (next.failure) {
        was += ", " + failure_text(*next.failure);
    }
    make_free(next);
    // unlocked_from reads the holder back from this "(was STATE by ID[, FAILURE])".
    next.record("unlock", rq.actor, now, rq.reason + " (was " + was + ")");
    return with_write(Outcome::unlocked, std::move(next), "unlocked (was " + was + ")");
}

Decision leave_queue(LockRecord next, const Request& rq) {
    if (!next.remove_waiter(rq.who.id)) {
        return Decision{};
    }
    return with_write(Outcome::left_queue, std::move(next), "left the queue");
}

}  // namespace

Decision decide_holder_op(const LockRecord& record, const Request& rq, TimePoint now) {
    switch (rq.op) {
        case Op::release:
            return release(record, rq, now);
        case Op::fail:
            return fail(record, rq, now);
        case Op::renew:
            return renew(record, rq, now);
        default:
            return verify(record, rq);
    }
}

Decision decide_admin_op(const LockRecord& record, const Request& rq, TimePoint now) {
    return rq.op == Op::unlock ? unlock(record, rq, now) : leave_queue(record, rq);
}

}  // namespace envgate::locks::detail

namespace envgate::locks {

const char* outcome_name(Outcome outcome) {
    static const char* const k_names[] = {
        "acquired",   "reentered", "took_over",     "marked_vanished", "queued",
        "waiting",    "renewed",   "released",      "failed",          "unlocked",
        "left_queue", "verified",  "nothing_to_do", "refused"};
    return k_names[static_cast<int>(outcome)];
}

bool unlocked_from(const LockRecord& record, const std::string& holder_id) {
    if (record.history.empty() || record.history.back().what != "unlock") {
        return false;
    }
    const std::string& why = record.history.back().why;  // written by detail::unlock
    return why.find(" (was failed by " + holder_id + ", ") != std::string::npos ||
           why.ends_with(" (was held by " + holder_id + ")");
}

const char* refusal_name(Refusal refusal) {
    static const char* const k_names[] = {"none",           "held_by_other",  "lock_failed",
                                          "not_holder",     "holder_changed", "superseded",
                                          "reason_required"};
    return k_names[static_cast<int>(refusal)];
}

}  // namespace envgate::locks
