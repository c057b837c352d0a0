#include "locks/lock_record.h"

#include <algorithm>
#include <tuple>

#include "gates/dns_label.h"

namespace envgate::locks {

const Waiter* LockRecord::find_waiter(const std::string& id) const {
    for (const auto& w : waiters) {
        if (w.who.id == id) {
            return &w;
        }
    }
    return nullptr;
}

void LockRecord::record(std::string what, std::string who, TimePoint at, std::string why) {
    std::int64_t seq = history.empty() ? 1 : history.back().seq + 1;
    history.push_back({seq, std::move(what), std::move(who), at, std::move(why)});
    if (history.back().what == "unlock") {
        unlocks.push_back(history.back());
        if (unlocks.size() > k_unlock_limit) {
            unlocks.erase(unlocks.begin());
        }
    }
    if (history.size() > k_history_limit) {
        history.erase(history.begin(),
                      history.begin() + static_cast<long>(history.size() - k_history_limit));
    }
}

bool LockRecord::remove_waiter(const std::string& id) {
    auto it = std::remove_if(waiters.begin(), waiters.end(),
                             [&](const Waiter& w) { return w.who.id == id; });
    bool found = it != waiters.end();
    waiters.erase(it, waiters.end());
    return found;
}

LockRecord stored_form(const LockRecord& record) {
    LockRecord stored = record;
    std::erase_if(stored.waiters, [](const Waiter& w) { return !w.legacy; });
    return stored;
}

void sort_queue(std::vector<Waiter>& waiters) {
    auto rank = [](const Waiter& w) {
        return std::tuple(w.legacy      ? 0
                          : w.joining() ? 2
                                        : 1,
                          w.legacy ? 0 : w.seq, w.since, w.who.id);
    };
    std::stable_sort(waiters.begin(), waiters.end(),
                     [&](const Waiter& a, const Waiter& b) { return rank(a) < rank(b); });
}

const char* state_name(LockState state) {
    switch (state) {
        case LockState::free:
            return "free";
        case LockState::held:
            return "held";
        case LockState::failed:
            return "failed";
    }
    return "free";
}

std::optional<LockState> parse_state(const std::string& text) {
    for (LockState s : {LockState::free, LockState::held, LockState::failed}) {
        if (text == state_name(s)) {
            return s;
        }
    }
    return std::nullopt;
}

const char* order_name(QueueOrder order) {
    switch (order) {
        case QueueOrder::oldest_first:
            return "oldest_first";
        case QueueOrder::newest_first:
            return "newest_first";
        case QueueOrder::unordered:
            return "unordered";
    }
    return "oldest_first";
}

const char* on_failure_name(OnFailure policy) {
    return policy == OnFailure::hold ? "hold" : "release";
}

Status check_lock_name(const std::string& name) {
    if (!is_dns1123_label(name)) {
        return Status(Code::invalid, "lock name \"" + name +
                                         "\" is not a DNS-1123 label (1-63 characters: "
                                         "lowercase letters, digits and '-', starting and "
                                         "ending with a letter or digit)");
    }
    return Status::ok();
}

}  // namespace envgate::locks
