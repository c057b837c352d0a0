#include "runner/connect/lock_status.h"

#include "runner/config/config.h"

namespace envgate {

std::vector<std::string> lock_names(const Config& config, const std::optional<std::string>& env) {
    if (env) {
        return {*env};
    }
    std::vector<std::string> names;
    for (const auto& e : config.environments) {
        names.push_back(e.name);
    }
    names.push_back("qa");
    return names;
}

std::optional<LockStatus> read_lock_status(const Config& config, const std::string& name,
                                           Context& ctx, int& exit, const StoreOptions& store) {
    auto target = lock_target(config, name, ctx, exit, store);
    if (!target) {
        return std::nullopt;
    }
    LockStatus s;
    s.record.name = name;
    s.store = target->store->describe();
    auto read = target->store->read(name);
    if (read.is_ok()) {
        s.record = read->record;
    } else {
        s.error = read.status().message();
        if (read.status().code() == Code::invalid) {
            s.repair = repair_instructions(config, name);
        }
    }
    return s;
}

std::optional<std::vector<LockStatus>> read_lock_statuses(const Config& config,
                                                          const std::vector<std::string>& names,
                                                          Context& ctx, int& exit,
                                                          StoreOptions store, Duration budget) {
    const TimePoint deadline = ctx.clock.now() + budget;
    std::vector<LockStatus> out;
    for (const auto& name : names) {
        const Duration left = deadline - ctx.clock.now();
        if (left <= Duration::zero()) {
            LockStatus s;
            s.record.name = name;
            s.error = "not read: the " + format_duration(budget) +
                      " given to read the locks (--timeout) ran out before it";
            out.push_back(std::move(s));
            continue;
        }
        store.retry_budget = left;
        auto s = read_lock_status(config, name, ctx, exit, store);
        if (!s) {
            return std::nullopt;
        }
        out.push_back(std::move(*s));
    }
    return out;
}

}  // namespace envgate
