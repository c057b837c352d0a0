// Wakes a gate's loop when its Job or its pods change: one Reflector per watched
// collection, each on its own connection and thread, whose only output is "something
// changed". The loop then reads a fresh snapshot, so the verdict never depends on
// the order in which Job and pod events arrive.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "gates/status.h"
#include "gates/time.h"
#include "runner/kube/kube_api.h"
#include "runner/kube/reflector.h"

namespace envgate {

using KubeApiFactory = std::function<Result<std::unique_ptr<kube::KubeApi>>()>;

class ChangeWatch {
  public:
    ChangeWatch(KubeApiFactory factory, Clock& clock, kube::ReflectorOptions options);
    ~ChangeWatch();
    ChangeWatch(const ChangeWatch&) = delete;
    ChangeWatch& operator=(const ChangeWatch&) = delete;

    enum class KeepDeleted { no, yes };
    // Starts watching `collection` (with `selectors`) until `deadline` or stop(). With
    // KeepDeleted::yes the last state of each deleted object is kept for take_deleted().
    Status start(const kube::ResourceRef& collection, const kube::ListOptions& selectors,
                 TimePoint deadline, KeepDeleted keep = KeepDeleted::no);

    // The objects deleted since the last call, as the watch last saw them: a pod that
    // was preempted and gone before a pass could list it still tells how it failed.
    std::vector<nlohmann::json> take_deleted();

    // Blocks until a change was seen since the last call (true), or `until` passed or a
    // signal is pending (false). Real time: the caller's clock only sets `until`.
    bool wait(TimePoint until, const std::function<int()>& pending_signal);

    // Ends every watch and joins the threads (also done by the destructor).
    void stop();

    // Watches that ended for good (Forbidden, ...), to be reported by the caller.
    std::vector<Status> failures();

  private:
    struct Worker {
        std::unique_ptr<kube::KubeApi> api;
        std::thread thread;
    };

    KubeApiFactory m_factory;
    Clock& m_clock;
    kube::ReflectorOptions m_options;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_changed = true;  // the first wait returns at once: read the first snapshot
    bool m_stopping = false;
    std::vector<Status> m_failures;
    std::vector<nlohmann::json> m_deleted;
    std::vector<std::unique_ptr<Worker>> m_workers;
};

}  // namespace envgate
