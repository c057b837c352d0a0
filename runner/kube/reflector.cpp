#include "runner/kube/reflector.h"

#include <algorithm>

#include <fmt/format.h>

namespace envgate::kube {
namespace {

// Errors that no amount of re-watching or polling will fix (or the caller's cancel).
bool is_final(Code code) {
    return code == Code::unauthorized || code == Code::forbidden || code == Code::cancelled;
}

}  // namespace

Reflector::Reflector(KubeApi& api, Clock& clock, ResourceRef collection, ReflectorOptions options,
                     Random& random)
    : m_api(api),
      m_clock(clock),
      m_collection(std::move(collection)),
      m_options(std::move(options)),
      m_random(random) {}

Status Reflector::deadline_passed() const {
    std::string what = m_collection.describe();
    if (!m_options.selectors.field_selector.empty()) {
        what += " (" + m_options.selectors.field_selector + ")";
    }
    return {Code::timeout, fmt::format("watching {}: the deadline passed", what)};
}

void Reflector::sleep_until(TimePoint wake, TimePoint deadline) {
    m_clock.sleep_until(std::min(wake, deadline));
}

Result<bool> Reflector::relist(const ChangeCallback& on_change) {
    ++m_stats.lists;
    TRY_ASSIGN(ObjectList list, m_api.list(m_collection, m_options.selectors));
    return take_list(std::move(list), on_change);
}

bool Reflector::take_list(ObjectList list, const ChangeCallback& on_change) {
    m_resource_version = list.resource_version;
    std::map<std::string, nlohmann::json> seen;
    for (auto& item : list.items) {
        const std::string key = object_key(item);
        auto known = m_known.find(key);
        std::optional<EventType> change;
        if (known == m_known.end()) {
            change = EventType::added;
        } else if (resource_version_of(known->second) != resource_version_of(item)) {
            change = EventType::modified;
        }
        seen[key] = item;
        if (change && on_change(*change, item) == WatchNext::stop) {
            return true;
        }
    }
    for (const auto& [key, object] : m_known) {
        if (!seen.count(key) && on_change(EventType::deleted, object) == WatchNext::stop) {
            return true;
        }
    }
    m_known = std::move(seen);
    progress(true);
    return false;
}

void Reflector::progress(bool listed) const {
    if (m_options.on_progress) {
        m_options.on_progress(m_resource_version, listed);
    }
}

Status Reflector::watch_once(TimePoint deadline, const ChangeCallback& on_change, bool& stopped,
                             int& delivered) {
    ++m_stats.watches;
    WatchOptions options;
    options.label_selector = m_options.selectors.label_selector;
    options.field_selector = m_options.selectors.field_selector;
    options.resource_version = m_resource_version;
    options.allow_bookmarks = true;
    const auto left = std::chrono::ceil<std::chrono::seconds>(deadline - m_clock.now()).count();
    const double base = m_options.watch_timeout_seconds;
    const auto timeout = static_cast<long long>(base + base * m_random.uniform());
    options.timeout_seconds = static_cast<int>(std::clamp<long long>(left, 1, timeout));
    return m_api.watch(m_collection, options, [&](const WatchEvent& event) {
        ++delivered;
        if (stop_asked()) {
            return WatchNext::stop;
        }
        if (std::string rv = resource_version_of(event.object); !rv.empty()) {
            m_resource_version = rv;
        }
        if (event.type == EventType::bookmark) {
            progress(false);
            return WatchNext::proceed;
        }
        if (event.type == EventType::deleted) {
            m_known.erase(object_key(event.object));
        } else {
            m_known[object_key(event.object)] = event.object;
        }
        if (on_change(event.type, event.object) == WatchNext::stop) {
            stopped = true;
            return WatchNext::stop;
        }
        progress(false);
        return WatchNext::proceed;
    });
}

Status Reflector::poll_until(TimePoint deadline, const ChangeCallback& on_change) {
    m_stats.polling = true;
    while (true) {
        sleep_until(m_clock.now() + m_options.poll_interval, deadline);
        if (stop_asked()) {
            return {Code::cancelled, "watching " + m_collection.describe() + ": stopped"};
        }
        if (m_clock.now() >= deadline) {
            return deadline_passed();
        }
        auto stopped = relist(on_change);
        if (stopped && stopped.value()) {
            return Status::ok();
        }
        if (!stopped && stopped.status().code() != Code::transient) {
            return stopped.status();
        }
    }
}

Status Reflector::run(TimePoint deadline, const ChangeCallback& on_change) {
    bool stopped = false;
    if (m_options.known) {
        stopped = take_list(*m_options.known, on_change);
    } else {
        TRY_ASSIGN(stopped, relist(on_change));
    }
    Backoff backoff(m_options.watch_backoff, m_random);
    int failures = 0;
    while (!stopped) {
        if (stop_asked()) {
            return {Code::cancelled, "watching " + m_collection.describe() + ": stopped"};
        }
        if (m_clock.now() >= deadline) {
            return deadline_passed();
        }
        int delivered = 0;
        Status status = watch_once(deadline, on_change, stopped, delivered);
        if (stopped) {
            break;
        }
        if (status.is_ok()) {
            failures = 0;
            backoff.reset();
            if (delivered == 0) {
                sleep_until(m_clock.now() + m_options.idle_rewatch_delay, deadline);
            }
        } else if (status.code() == Code::gone) {
            ++m_stats.relists_after_gone;
            TRY_ASSIGN(stopped, relist(on_change));
        } else if (is_final(status.code())) {
            return status;
        } else {
            ++m_stats.watch_failures;
            if (++failures >= m_options.watch_failures_before_polling) {
                return poll_until(deadline, on_change);
            }
            sleep_until(m_clock.now() + backoff.next(), deadline);
        }
    }
    return Status::ok();
}

Status watch_until(KubeApi& api, Clock& clock, const ResourceRef& collection,
                   const ReflectorOptions& options, TimePoint deadline,
                   const ChangeCallback& on_change) {
    Random random;
    Reflector reflector(api, clock, collection, options, random);
    return reflector.run(deadline, on_change);
}

}  // namespace envgate::kube
