// Reflector: keeps up with a collection the way client-go's reflector does. It lists,
// then watches from the list's resourceVersion; resumes from the last resourceVersion
// seen when a watch ends normally; re-lists on 410 Gone; treats BOOKMARK as an RV
// update only; and falls back to polling (a list every poll_interval) when watching
// keeps failing. Each changed object goes to a callback until it says stop.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/retry.h"

namespace envgate::kube {

struct ReflectorOptions {
    ListOptions selectors;
    Duration poll_interval = std::chrono::seconds(5);
    int watch_failures_before_polling = 3;  // consecutive failed watches
    // Each watch asks the server for a timeout drawn from [this, twice this), as
    // client-go's reflector does (5-10 min): many clients' watches do not expire together.
    int watch_timeout_seconds = 300;
    Duration idle_rewatch_delay = std::chrono::seconds(1);  // after an empty, normal end
    // Polled on every watch event (bookmarks too) and between steps; once it returns true
    // run() ends with Code::cancelled. An idle watch still blocks until its timeout.
    std::function<bool()> stop_requested;
    // Told the resourceVersion the collection is known up to, after a list has been
    // delivered (listed: true) and after each watch event (bookmarks too) has been.
    std::function<void(const std::string& resource_version, bool listed)> on_progress;
    // The collection as the caller already knows it, exactly, as of
    // known->resource_version (an object it has just created, when nothing else can match
    // the selectors yet): taken as the first list without asking the API, the first watch
    // starting from there. Later lists (after 410 Gone, when polling) ask the API.
    std::optional<ObjectList> known;
    RetryPolicy watch_backoff{
        std::chrono::seconds(1), std::chrono::seconds(30), 2.0, 0.5, std::chrono::seconds(0), 0};
};

// ADDED, MODIFIED or DELETED (never BOOKMARK) and the object as last seen.
using ChangeCallback = std::function<WatchNext(EventType type, const nlohmann::json& object)>;

struct ReflectorStats {
    int lists = 0;
    int watches = 0;
    int relists_after_gone = 0;
    int watch_failures = 0;
    bool polling = false;
};

class Reflector {
  public:
    Reflector(KubeApi& api, Clock& clock, ResourceRef collection, ReflectorOptions options,
              Random& random);

    // Delivers every change until `on_change` returns WatchNext::stop (ok), `deadline`
    // passes (Code::timeout), options.stop_requested says so (Code::cancelled), or the API
    // refuses for good (its Status: Forbidden, Unauthorized, or a failed list).
    Status run(TimePoint deadline, const ChangeCallback& on_change);

    const std::string& resource_version() const { return m_resource_version; }
    const ReflectorStats& stats() const { return m_stats; }

  private:
    // Lists and delivers the difference to what was known. Returns true when stopped.
    Result<bool> relist(const ChangeCallback& on_change);
    // Delivers the difference between `list` and what was known, as relist() does.
    bool take_list(ObjectList list, const ChangeCallback& on_change);
    // One watch from m_resource_version. Sets `stopped` when the callback said so.
    Status watch_once(TimePoint deadline, const ChangeCallback& on_change, bool& stopped,
                      int& delivered);
    Status poll_until(TimePoint deadline, const ChangeCallback& on_change);
    Status deadline_passed() const;
    void progress(bool listed) const;  // tells options.on_progress m_resource_version
    bool stop_asked() const { return m_options.stop_requested && m_options.stop_requested(); }
    void sleep_until(TimePoint wake, TimePoint deadline);

    KubeApi& m_api;
    Clock& m_clock;
    ResourceRef m_collection;
    ReflectorOptions m_options;
    Random& m_random;
    std::string m_resource_version;
    std::map<std::string, nlohmann::json> m_known;  // "namespace/name" -> object
    ReflectorStats m_stats;
};

// Runs a Reflector over `collection` until `on_change` says stop or `deadline` passes.
Status watch_until(KubeApi& api, Clock& clock, const ResourceRef& collection,
                   const ReflectorOptions& options, TimePoint deadline,
                   const ChangeCallback& on_change);

}  // namespace envgate::kube
