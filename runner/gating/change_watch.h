// Wakes a gate's loop when its Job or its pods change, and keeps what the watches saw:
// one Reflector per watched collection, each on its own connection and thread. Each
// collection's cache says which resourceVersions its objects are known to hold over
// (CacheView), so that the loop can tell when the Job and the pods it has cached belong
// together (runner/gating/job_snapshot.h) and read the API only when they may not.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runner/base/thread_annotations.h"
#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/reflector.h"

namespace envgate {

using KubeApiFactory = std::function<Result<std::unique_ptr<kube::KubeApi>>()>;

// Whether two versions of an object are the same for the caller (default: never, so
// every new version counts as a change of the cache).
using SameVersion = std::function<bool(const nlohmann::json& before, const nlohmann::json& after)>;

// A collection as its watch last saw it. The objects held still over the
// resourceVersions [valid_from, progress]: valid_from is the newest change the cache took
// (a version SameVersion calls the same as its predecessor is no change, a deletion is),
// progress the newest resourceVersion the watch delivered (an event, a bookmark, a list).
struct CacheView {
    bool usable = false;  // listed, still watched, and its resourceVersions are numbers
    // The objects are the collection exactly as of `progress`: every change the watch
    // delivered up to it was taken, none after it (false while a re-list is half taken,
    // or an event is taken but its version not yet recorded as progress).
    bool settled = false;
    std::uint64_t valid_from = 0;
    std::uint64_t progress = 0;
    std::vector<nlohmann::json> objects;  // by namespace/name
};

// Threads: one owner thread (GateRunner::run's) calls every public function, start()
// and stop() included; it alone touches m_workers (the vector) and m_factory. start()
// spawns one worker thread per collection, which runs kube::watch_until on its own
// KubeApi connection (reading and sleeping on the Clock: deadlines, backoff, polls)
// and only calls take() and advance() (under m_mutex) on its own Worker::cache.
// m_mutex guards every Worker::cache, m_changed, m_stopping, m_failures, m_deleted,
// m_ignored, m_woken_by and m_woken_otherwise; the owner's calls take it for each read
// or wait, and m_cv (on m_mutex) wakes the owner's wait() and wait_listed() when a
// worker records progress, a list or its end. Those two block in 50 ms slices to call
// `pending_signal` (on the owner's thread) and read the Clock: so the Clock is used on
// several threads and must be thread-safe. stop() sets m_stopping under m_mutex,
// cancels each worker's watch (KubeApi::cancel_watches is safe from another thread)
// and joins them.
class ChangeWatch {
  public:
    ChangeWatch(KubeApiFactory factory, Clock& clock, kube::ReflectorOptions options);
    ~ChangeWatch();
    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;

    enum class KeepDeleted { no, yes };
    // Starts watching `collection` (with `selectors`) until `deadline` or stop(); the
    // collections are numbered in the order they were started. With KeepDeleted::yes
    // the last state of each deleted object is kept for take_deleted(). `known`: the
    // collection as the caller knows it at a revision (kube::ReflectorOptions::known),
    // taken as its first list.
    Status start(const kube::ResourceRef& collection, const kube::ListOptions& selectors,
                 TimePoint deadline, KeepDeleted keep = KeepDeleted::no, SameVersion same = nullptr,
                 std::optional<kube::ObjectList> known = std::nullopt);

    // The objects deleted since the last call, as the watch last saw them: a pod that
    // was preempted and gone before a pass could list it still tells how it failed.
    std::vector<nlohmann::json> take_deleted();

    // Collection `index` as cached now.
    CacheView view(std::size_t index);

    // Every collection as of one revision: the lowest progress among them, which every
    // watch has delivered all changes up to (watch events come in revision order), with
    // the changes taken after it undone. The views are then the API's store at that one
    // revision (`progress`, `settled`), so the caller may act on them together without
    // reading the API. Empty when some collection is not usable, that revision is below
    // `not_before`, or a collection cannot be taken back that far (its last list, or its
    // oldest kept change, is newer).
    std::vector<CacheView> views_at_common(std::uint64_t not_before);
    // As views_at_common, but as of the oldest change a collection took after `after`
    // when that is older than the common revision: so that the caller sees each change
    // in turn, with the others as they were then (two restarts of a container before
    // the Job's next write are two changes, not one).
    std::vector<CacheView> views_at_next(std::uint64_t after);

    // A read of the API showed collection `index` as it is cached (`objects`: every
    // object it holds, each at the cached resourceVersion) while the store was at
    // `revision` or later: no change came between the watch's progress and `revision`,
    // so the cache holds as of `revision`, as a bookmark there would say. With that
    // progress, views_at_next shows the other collections' changes up to `revision` in
    // turn beside it. False, and nothing recorded, when the cache holds anything else
    // (an event came since the read) or is not settled.
    bool confirm(std::size_t index, const std::vector<nlohmann::json>& objects,
                 std::uint64_t revision);

    // The caller's own write produced `resource_version`: its event updates the cache
    // but does not end a wait (the caller knows what it wrote), even when it was
    // delivered before this call.
    void ignore_version(const std::string& resource_version);

    // Blocks until every collection was listed once (or its watch ended), at most
    // until `until` or a pending signal; true when all were.
    bool wait_listed(TimePoint until, const std::function<int()>& pending_signal);

    // Blocks until a change was seen since the last call (true), or `until` passed or a
    // signal is pending (false). Real time: the caller's clock only sets `until`.
    bool wait(TimePoint until, const std::function<int()>& pending_signal);

    // Ends every watch and joins the threads (also done by the destructor).
    void stop();

    // Watches that ended for good (Forbidden, ...), to be reported by the caller.
    std::vector<Status> failures();

  private:
    // One change a watch event made to a cache, kept so that the cache can be taken back
    // to an earlier revision: the object's key, its version before (none: it was new) and
    // the cache's valid_from before.
    struct Change {
        std::uint64_t version = 0;
        std::string key;
        std::optional<nlohmann::json> before;
        std::uint64_t valid_from_before = 0;
    };
    struct Cache {
        SameVersion same;
        bool listed = false;
        bool ended = false;
        bool ordered = true;     // every resourceVersion seen was a number
        bool unsettled = false;  // changed since the last progress
        bool taking = false;     // an event taken since the last progress (a change or not)
        std::uint64_t valid_from = 0;
        std::uint64_t progress = 0;
        std::map<std::string, nlohmann::json> objects;
        // The changes taken since the last list, oldest first (at most k_kept_changes):
        // the cache can be taken back to any revision from `floor` on. A list's objects
        // are not changes at their own revisions: while one is taken (an event not newer
        // than the progress), nothing can be taken back, until its end sets the floor.
        std::deque<Change> history;
        std::uint64_t floor = 0;
        bool rewindable = false;
    };
    // The changes a cache keeps to be taken back; older ones raise its floor.
    static constexpr std::size_t k_kept_changes = 256;
    // views_at_common (next false) and views_at_next (true).
    std::vector<CacheView> views_at(std::uint64_t from, bool next);
    // Collection `index` as of `revision` (at most its progress).
    CacheView view_locked(std::size_t index, std::optional<std::uint64_t> revision)
        REQUIRES(m_mutex);
    struct Worker {
        std::unique_ptr<kube::KubeApi> api;
        std::thread thread;
        Cache cache;
    };
    // One event into `cache`; true when it should end a wait.
    bool take(Cache& cache, kube::EventType type, const nlohmann::json& object, KeepDeleted keep)
        REQUIRES(m_mutex);
    void advance(Cache& cache, const std::string& resource_version, bool listed) REQUIRES(m_mutex);

    KubeApiFactory m_factory;
    Clock& m_clock;
    kube::ReflectorOptions m_options;
    // Guards what follows, and every Worker::cache (Worker is not annotated: its cache is
    // reached through m_workers, which only the owner thread changes).
    Mutex m_mutex;
    CondVar m_cv;  // on m_mutex: a worker recorded a change, a list or its end
    // The first wait returns at once: read the first snapshot.
    bool m_changed GUARDED_BY(m_mutex) = true;
    bool m_stopping GUARDED_BY(m_mutex) = false;
    std::vector<Status> m_failures GUARDED_BY(m_mutex);
    std::vector<nlohmann::json> m_deleted GUARDED_BY(m_mutex);
    // The resourceVersions of the caller's own writes.
    std::set<std::string> m_ignored GUARDED_BY(m_mutex);
    // What set m_changed since the last wait: the versions of the events, and whether
    // anything else did (the first wait, a list, a watch's end). The caller's own write
    // may be delivered before ignore_version() names it: then it is taken back here.
    std::set<std::string> m_woken_by GUARDED_BY(m_mutex);
    bool m_woken_otherwise GUARDED_BY(m_mutex) = true;
    std::vector<std::unique_ptr<Worker>> m_workers;  // the owner thread's
};

}  // namespace envgate
