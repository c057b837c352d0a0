#include "runner/gating/change_watch.h"

#include <algorithm>
#include <utility>

namespace envgate {

ChangeWatch::ChangeWatch(KubeApiFactory factory, Clock& clock, kube::ReflectorOptions options)
    : m_factory(std::move(factory)), m_clock(clock), m_options(std::move(options)) {}

ChangeWatch::~ChangeWatch() {
    stop();
}

bool ChangeWatch::take(Cache& cache, kube::EventType type, const nlohmann::json& object,
                       KeepDeleted keep) {
    const std::string version = kube::resource_version_of(object);
    auto number = kube::resource_version_number(version);
    cache.ordered = cache.ordered && number.has_value();
    const std::string key = kube::object_key(object);
    cache.taking = true;
    auto known = cache.objects.find(key);
    if (!number || *number <= cache.progress) {
        cache.rewindable = false;  // a list's object, or an unordered version
    } else if (cache.rewindable) {
        Change change{*number, key, std::nullopt, cache.valid_from};
        if (known != cache.objects.end()) {
            change.before = known->second;
        }
        cache.history.push_back(std::move(change));
        if (cache.history.size() > k_kept_changes) {
            cache.floor = std::max(cache.floor, cache.history.front().version);
            cache.history.pop_front();
        }
    }
    bool changed = true;
    if (type == kube::EventType::deleted) {
        if (keep == KeepDeleted::yes) {
            m_deleted.push_back(object);
        }
        cache.objects.erase(key);
    } else {
        changed = known == cache.objects.end() || !cache.same || !cache.same(known->second, object);
        cache.objects[key] = object;
    }
    if (changed) {
        // A list's changes (and a re-list's deletions, which carry the object's older
        // version) hold from the list's resourceVersion on: advance() moves valid_from.
        cache.valid_from = std::max(cache.valid_from, number.value_or(0));
        cache.unsettled = true;
    }
    if (m_ignored.erase(version) != 0) {
        return false;
    }
    m_woken_by.insert(version);
    return true;
}

void ChangeWatch::advance(Cache& cache, const std::string& resource_version, bool listed) {
    auto number = kube::resource_version_number(resource_version);
    cache.ordered = cache.ordered && number.has_value();
    cache.progress = std::max(cache.progress, number.value_or(0));
    if (listed && (cache.unsettled || !cache.listed)) {
        cache.valid_from = std::max(cache.valid_from, cache.progress);
    }
    if (listed) {
        cache.history.clear();
        cache.floor = cache.progress;
        cache.rewindable = cache.ordered;
    }
    cache.unsettled = false;
    cache.taking = false;
    if (m_changed) {
        m_cv.notify_all();
    }
    if (!cache.listed) {
        cache.listed = true;
        m_changed = true;
        m_woken_otherwise = true;
        m_cv.notify_all();
    }
}

Status ChangeWatch::start(const kube::ResourceRef& collection, const kube::ListOptions& selectors,
                          TimePoint deadline, KeepDeleted keep, SameVersion same,
                          std::optional<kube::ObjectList> known) {
    TRY_ASSIGN(auto api, m_factory());
    auto worker = std::make_unique<Worker>();
    worker->api = std::move(api);
    worker->cache.same = std::move(same);
    kube::ReflectorOptions options = m_options;
    options.selectors = selectors;
    options.known = std::move(known);
    Worker* raw = worker.get();
    options.on_progress = [this, raw](const std::string& version, bool listed) {
        MutexLock lock(m_mutex);
        advance(raw->cache, version, listed);
    };
    worker->thread = std::thread([this, raw, collection, options, deadline, keep] {
        Status end = kube::watch_until(
            *raw->api, m_clock, collection, options, deadline,
            [this, raw, keep](kube::EventType type, const nlohmann::json& object) {
                MutexLock lock(m_mutex);
                if (take(raw->cache, type, object, keep)) {
                    m_changed = true;  // the wait ends once advance() records its progress
                }
                return m_stopping ? kube::WatchNext::stop : kube::WatchNext::proceed;
            });
        MutexLock lock(m_mutex);
        raw->cache.ended = true;
        raw->cache.taking = false;
        if (!end.is_ok() && end.code() != Code::timeout && !m_stopping) {
            m_failures.push_back(end);
            m_changed = true;
            m_woken_otherwise = true;
            m_cv.notify_all();
        }
    });
    m_workers.push_back(std::move(worker));
    return Status::ok();
}

CacheView ChangeWatch::view(std::size_t index) {
    MutexLock lock(m_mutex);
    return view_locked(index, std::nullopt);
}

CacheView ChangeWatch::view_locked(std::size_t index, std::optional<std::uint64_t> revision) {
    CacheView out;
    if (index >= m_workers.size()) {
        return out;
    }
    const Cache& cache = m_workers[index]->cache;
    out.usable = cache.listed && !cache.ended && cache.ordered;
    out.settled = !cache.taking;
    out.valid_from = cache.valid_from;
    out.progress = cache.progress;
    if (!revision) {
        for (const auto& [key, object] : cache.objects) {
            out.objects.push_back(object);
        }
        return out;
    }
    if (!cache.rewindable || *revision < cache.floor || *revision > cache.progress) {
        out.usable = false;
        return out;
    }
    // Every change up to `revision` was taken (the progress is at least it), and those
    // after it are in the history: undone newest first, they leave the store as of it.
    std::map<std::string, nlohmann::json> objects = cache.objects;
    for (auto it = cache.history.rbegin(); it != cache.history.rend() && it->version > *revision;
         ++it) {
        if (it->before) {
            objects[it->key] = *it->before;
        } else {
            objects.erase(it->key);
        }
        out.valid_from = it->valid_from_before;
    }
    out.settled = true;
    out.progress = *revision;
    for (auto& [key, object] : objects) {
        out.objects.push_back(std::move(object));
    }
    return out;
}

std::vector<CacheView> ChangeWatch::views_at_common(std::uint64_t not_before) {
    return views_at(not_before, false);
}

std::vector<CacheView> ChangeWatch::views_at_next(std::uint64_t after) {
    return views_at(after, true);
}

std::vector<CacheView> ChangeWatch::views_at(std::uint64_t from, bool next) {
    MutexLock lock(m_mutex);
    std::optional<std::uint64_t> common;
    for (const auto& w : m_workers) {
        const Cache& cache = w->cache;
        if (!cache.listed || cache.ended || !cache.ordered) {
            return {};
        }
        common = std::min(common.value_or(cache.progress), cache.progress);
    }
    if (!common || *common < from) {
        return {};
    }
    if (next) {
        // The oldest change any cache took after `from`, if one is at most the common
        // revision: every collection is known as of it (the next change of each is
        // later, or it is that change).
        for (const auto& w : m_workers) {
            for (const Change& change : w->cache.history) {
                if (change.version > from) {
                    common = std::min(*common, change.version);
                    break;
                }
            }
        }
    }
    std::vector<CacheView> out;
    for (std::size_t i = 0; i < m_workers.size(); ++i) {
        out.push_back(view_locked(i, common));
        if (!out.back().usable) {
            return {};
        }
    }
    return out;
}

bool ChangeWatch::confirm(std::size_t index, const std::vector<nlohmann::json>& objects,
                          std::uint64_t revision) {
    MutexLock lock(m_mutex);
    if (index >= m_workers.size()) {
        return false;
    }
    Cache& cache = m_workers[index]->cache;
    if (!cache.listed || cache.ended || !cache.ordered || cache.taking || cache.unsettled ||
        objects.size() != cache.objects.size()) {
        return false;
    }
    for (const auto& object : objects) {
        auto known = cache.objects.find(kube::object_key(object));
        if (known == cache.objects.end() ||
            kube::resource_version_of(known->second) != kube::resource_version_of(object)) {
            return false;
        }
    }
    cache.progress = std::max(cache.progress, revision);
    return true;
}

void ChangeWatch::ignore_version(const std::string& resource_version) {
    MutexLock lock(m_mutex);
    if (m_woken_by.erase(resource_version) == 0) {
        m_ignored.insert(resource_version);
    } else if (m_woken_by.empty() && !m_woken_otherwise) {
        m_changed = false;  // its event alone had woken the next wait
    }
}

bool ChangeWatch::wait_listed(TimePoint until, const std::function<int()>& pending_signal) {
    MutexLock lock(m_mutex);
    auto listed = [&] {
        return std::all_of(m_workers.begin(), m_workers.end(),
                           [](const auto& w) { return w->cache.listed || w->cache.ended; });
    };
    while (!listed() && m_clock.now() < until && pending_signal() == 0) {
        m_cv.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    }
    return listed();
}

bool ChangeWatch::wait(TimePoint until, const std::function<int()>& pending_signal) {
    MutexLock lock(m_mutex);
    // A change ends the wait once its cache is settled again: the pass then sees the
    // change together with the progress it proves.
    auto taking = [&] {
        return std::any_of(m_workers.begin(), m_workers.end(),
                           [](const auto& w) { return w->cache.taking; });
    };
    while (!m_changed || taking()) {
        if (pending_signal() != 0 || m_clock.now() >= until) {
            return false;
        }
        // Short slices: a signal handler cannot notify a condition variable.
        m_cv.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
    }
    m_changed = false;
    m_woken_by.clear();
    m_woken_otherwise = false;
    return true;
}

void ChangeWatch::stop() {
    {
        MutexLock lock(m_mutex);
        m_stopping = true;
    }
    for (auto& w : m_workers) {
        w->api->cancel_watches();
    }
    for (auto& w : m_workers) {
        if (w->thread.joinable()) {
            w->thread.join();
        }
    }
    m_workers.clear();
}

std::vector<nlohmann::json> ChangeWatch::take_deleted() {
    MutexLock lock(m_mutex);
    return std::exchange(m_deleted, {});
}

std::vector<Status> ChangeWatch::failures() {
    MutexLock lock(m_mutex);
    return m_failures;
}

}  // namespace envgate
