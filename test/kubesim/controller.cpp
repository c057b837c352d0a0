// kubesim Job controller: see controller.h. The order of writes follows syncJob:
// conditions first, then pod deletions, then uncountedTerminatedPods -> finalizer
// removal -> counters, then pod creation, then the terminal condition.
#include "test/kubesim/controller.h"

#include <iostream>

#include "test/kubesim/controller_util.h"

#include "test/kubesim/job_policy.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/resources.h"

namespace kubesim {

using SteadyClock = std::chrono::steady_clock;

using namespace controller_util;  // NOLINT: this file's own helpers

JobController::JobController(Store& store, double time_scale)
    : m_store(store), m_time_scale(time_scale) {
    m_store.on_change([this](const Change& c) {
        if (c.resource == "jobs" || c.resource == "pods") {
            m_dirty = true;
            m_wake_cv.notify_all();
        }
    });
}

JobController::~JobController() {
    stop();
}

void JobController::start() {
    m_thread = std::thread([this] { run(); });
}

void JobController::stop() {
    m_stop = true;
    m_wake_cv.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void JobController::wake_at(SteadyTime t) {
    m_next_wake = std::min(m_next_wake, t);
}

void JobController::run() {
    while (!m_stop) {
        m_next_wake = SteadyClock::now() + std::chrono::milliseconds(100);
        m_dirty = false;
        sync_all();
        std::unique_lock lock(m_wake_mutex);
        m_wake_cv.wait_until(lock, m_next_wake, [&] { return m_stop.load() || m_dirty.load(); });
    }
}

void JobController::sync_all() {
    auto jobs = m_store.list("jobs", "", nullptr, nullptr);
    auto pods = m_store.list("pods", "", nullptr, nullptr);
    collect_garbage(jobs, pods);
    std::map<std::string, std::vector<json>> by_owner;
    for (auto& pod : pods) {
        for (const auto& ref : pod["metadata"].value("ownerReferences", json::array())) {
            if (ref.value("controller", false)) {
                by_owner[ref.value("uid", "")].push_back(pod);
            }
        }
    }
    for (const auto& job : jobs) {
        // A malformed Job must not take the controller (and kubesim) down.
        try {
            sync_job(job, by_owner[uid_of(job)]);
        } catch (const std::exception& e) {
            std::cerr << "kubesim: job-controller: Job " << name_of(job) << ": " << e.what()
                      << std::endl;
        }
    }
}

std::vector<json> JobController::pods_of(const json& job) {
    std::string uid = uid_of(job);
    return m_store.list(
        "pods", job["metadata"].value("namespace", ""),
        [&](const json& pod) {
            for (const auto& ref : pod["metadata"].value("ownerReferences", json::array())) {
                if (ref.value("uid", "") == uid && ref.value("controller", false)) {
                    return true;
                }
            }
            return false;
        },
        nullptr);
}

void JobController::collect_garbage(const std::vector<json>& jobs, const std::vector<json>& pods) {
    std::set<std::string> uids;
    for (const auto& job : jobs) {
        if (!job["metadata"].contains("deletionTimestamp")) {
            uids.insert(uid_of(job));
        }
    }
    for (const auto& pod : pods) {
        for (const auto& ref : pod["metadata"].value("ownerReferences", json::array())) {
            if (ref.value("kind", "") == "Job" && uids.count(ref.value("uid", "")) == 0) {
                if (!pod["metadata"].contains("deletionTimestamp")) {
                    (void)delete_object(m_store, "pods", pod["metadata"].value("namespace", ""),
                                        name_of(pod), {});
                }
                remove_finalizer(pod);
            }
        }
    }
    for (auto it = m_memory.begin(); it != m_memory.end();) {
        it = uids.count(it->first) == 0 ? m_memory.erase(it) : std::next(it);
    }
}

Result<json> JobController::write_status(const json& job, const std::function<void(json&)>& fn) {
    return m_store.mutate("jobs", job["metadata"].value("namespace", ""), name_of(job), "",
                          [&](json& obj) {
                              if (uid_of(obj) != uid_of(job)) {
                                  return Status(Code::conflict, "uid changed");
                              }
                              fn(obj["status"]);
                              return Status::ok();
                          });
}

void JobController::remove_finalizer(const json& pod) {
    if (!has_tracking_finalizer(pod)) {
        return;
    }
    (void)m_store.mutate(
        "pods", pod["metadata"].value("namespace", ""), name_of(pod), "", [&](json& obj) {
            if (uid_of(obj) != uid_of(pod)) {
                return Status(Code::conflict, "uid changed");
            }
            json kept = json::array();
            for (const auto& f : obj["metadata"].value("finalizers", json::array())) {
                if (f != "batch.kubernetes.io/job-tracking") {
                    kept.push_back(f);
                }
            }
            obj["metadata"]["finalizers"] = kept;
            return Status::ok();
        });
}

void JobController::finished_job(const json& job, const std::vector<json>& pods) {
    for (const auto& pod : pods) {
        remove_finalizer(pod);
    }
    Memory& mem = m_memory[uid_of(job)];
    if (!mem.finished_seen) {
        mem.finished_seen = true;
        mem.finished_at = SteadyClock::now();
    }
    if (job["spec"].contains("ttlSecondsAfterFinished")) {
        auto ttl = std::chrono::seconds(job["spec"]["ttlSecondsAfterFinished"].get<int64_t>());
        auto due = mem.finished_at + scaled(ttl, m_time_scale);
        if (SteadyClock::now() >= due) {
            (void)delete_object(m_store, "jobs", job["metadata"].value("namespace", ""),
                                name_of(job), {});
        } else {
            wake_at(due);
        }
    }
}

bool JobController::reread(json& job, std::vector<json>& pods) {
    auto fresh = m_store.get("jobs", job["metadata"].value("namespace", ""), name_of(job));
    if (!fresh || uid_of(*fresh) != uid_of(job)) {
        return false;
    }
    job = *fresh;
    pods = pods_of(job);
    return true;
}

void JobController::sync_job(const json& job_in, std::vector<json> pods) {
    if (job_in["metadata"].contains("deletionTimestamp")) {
        return;
    }
    // spec.managedBy naming another controller (MultiKueue): the built-in one leaves it alone.
    if (std::string by = job_in["spec"].value("managedBy", "kubernetes.io/job-controller");
        by != "kubernetes.io/job-controller") {
        return;
    }
    if (find_true_condition(job_in, "Complete") != nullptr ||
        find_true_condition(job_in, "Failed") != nullptr) {
        finished_job(job_in, pods);
        return;
    }
    json job = job_in;
    if (!job["status"].contains("startTime")) {
        m_memory[uid_of(job)].started_at = SteadyClock::now();
        auto r = write_status(job, [&](json& st) {
            st["startTime"] = now_rfc3339();
            st["uncountedTerminatedPods"] = json::object();
        });
        if (!r) {
            return;
        }
        job = *r;
    }
    // 1. A newly met failure or success criterion is written first.
    if (find_true_condition(job, "FailureTarget") == nullptr &&
        find_true_condition(job, "SuccessCriteriaMet") == nullptr) {
        auto cond = decide_finish(job, pods);
        if (cond) {
            auto r = write_status(job, [&](json& st) { st["conditions"].push_back(*cond); });
            if (!r) {
                return;
            }
            job = *r;
        }
    }
    // 2. A failing Job deletes its remaining pods.
    if (find_true_condition(job, "FailureTarget") != nullptr) {
        delete_active(job, pods);
        pods = pods_of(job);
    }
    // 3. Terminated pods are counted through the finalizer; a suspension deletes the
    // active ones uncounted. Each step that wrote re-reads the Job and its pods.
    if (track_terminated(job, pods) && !reread(job, pods)) {
        return;
    }
    if (sync_suspension(job, pods) && !reread(job, pods)) {
        return;
    }
    int active = 0;
    int ready = 0;
    int terminating = 0;
    for (const auto& pod : pods) {
        if (pod_active(pod)) {
            ++active;
            for (const auto& c : pod["status"].value("conditions", json::array())) {
                ready += c.value("type", "") == "Ready" && c.value("status", "") == "True";
            }
        }
        terminating += pod_terminating(pod);
    }
    const json* target = find_true_condition(job, "FailureTarget");
    const json* success = find_true_condition(job, "SuccessCriteriaMet");
    // 4. Pods are (re)created while the Job is neither failing nor succeeding.
    if (target == nullptr && success == nullptr) {
        active += create_pods(job, pods, active, job["status"].value("succeeded", 0), terminating);
    }
    bool uncounted_empty =
        job["status"].value("uncountedTerminatedPods", json::object()).empty() ||
        (job["status"]["uncountedTerminatedPods"].value("failed", json::array()).empty() &&
         job["status"]["uncountedTerminatedPods"].value("succeeded", json::array()).empty());
    json terminal = nullptr;
    if ((target != nullptr || success != nullptr) && terminating == 0 && uncounted_empty) {
        const json& from = target != nullptr ? *target : *success;
        terminal = failure_condition(target != nullptr ? "Failed" : "Complete",
                                     from.value("reason", ""), from.value("message", ""));
    }
    // 5. Counts, and the terminal condition once no pod is left terminating.
    auto r = write_status(job, [&](json& st) {
        st.erase("active");
        if (active > 0 && terminal.is_null()) {
            st["active"] = active;
        }
        st["ready"] = terminal.is_null() ? ready : 0;
        st["terminating"] = terminating;
        if (!terminal.is_null()) {
            st["conditions"].push_back(terminal);
            if (terminal["type"] == "Complete") {
                st["completionTime"] = now_rfc3339();
            }
        }
    });
    if (r && !terminal.is_null()) {
        if (terminal["type"] == "Complete") {
            record_event(m_store, *r, "Normal", "Completed", "Job completed", "job-controller");
        } else {
            record_event(m_store, *r, "Warning", terminal.value("reason", ""),
                         terminal.value("message", ""), "job-controller");
        }
    }
}

}  // namespace kubesim
