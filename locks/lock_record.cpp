#include "locks/lock_record.h"

#include <algorithm>
#include <tuple>

#include "runner/base/vocab/dns_label.h"
#include "runner/base/vocab/enum_names.h"

namespace envgate::locks {
namespace {

constexpr EnumName<LockState> k_state_names[] = {
    {LockState::free, "free"}, {LockState::held, "held"}, {LockState::failed, "failed"}};

constexpr EnumName<QueueOrder> k_order_names[] = {{QueueOrder::oldest_first, "oldest_first"},
                                                  {QueueOrder::newest_first, "newest_first"},
                                                  {QueueOrder::unordered, "unordered"}};

}  // namespace

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
    return name_of(k_state_names, state, "free");
}

std::optional<LockState> parse_state(const std::string& text) {
    return value_of(k_state_names, text);
}

const char* order_name(QueueOrder order) {
    return name_of(k_order_names, order, "oldest_first");
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
