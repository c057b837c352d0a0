// kubesim Job controller: see controller.h. The order of writes follows syncJob:
// conditions first, then pod deletions, then uncountedTerminatedPods -> finalizer
// removal -> counters, then pod creation, then the terminal condition.
#include "test/kubesim/controller.h"

#include "test/kubesim/job_policy.h"
#include "test/kubesim/objects.h"
#include "test/kubesim/resources.h"

namespace kubesim {

using SteadyClock = std::chrono::steady_clock;

namespace {

std::chrono::microseconds scaled(std::chrono::seconds s, double scale) {
    return std::chrono::microseconds(
        static_cast<int64_t>(static_cast<double>(s.count()) * scale * 1e6));
}

std::string uid_of(const json& obj) {
    return obj["metadata"].value("uid", "");
}
std::string name_of(const json& obj) {
    return obj["metadata"].value("name", "");
}

json failure_condition(const std::string& type, const std::string& reason,
                       const std::string& message) {
    std::string now = now_rfc3339();
    return {{"type", type},       {"status", "True"},     {"reason", reason},
            {"message", message}, {"lastProbeTime", now}, {"lastTransitionTime", now}};
}

bool in_list(const json& list, const std::string& uid) {
    return std::find(list.begin(), list.end(), json(uid)) != list.end();
}

}  // namespace

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
        sync_job(job, by_owner[uid_of(job)]);
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

std::optional<json> JobController::decide_finish(const json& job, const std::vector<json>& pods) {
    const json& status = job["status"];
    json uncounted = status.value("uncountedTerminatedPods", json::object());
    json unc_failed = uncounted.value("failed", json::array());
    json unc_succeeded = uncounted.value("succeeded", json::array());
    int64_t failed = status.value("failed", 0) + static_cast<int64_t>(unc_failed.size());
    int64_t succeeded = status.value("succeeded", 0) + static_cast<int64_t>(unc_succeeded.size());
    for (const auto& pod : pods) {
        if (!has_tracking_finalizer(pod)) {
            continue;
        }
        std::string uid = uid_of(pod);
        if (pod["status"].value("phase", "") == "Succeeded" && !in_list(unc_succeeded, uid)) {
            ++succeeded;
        } else if (pod_failed(pod, job) && !in_list(unc_failed, uid)) {
            PolicyMatch m = pod_terminal(pod) ? match_pod_failure_policy(job, pod) : PolicyMatch{};
            if (m.action == "FailJob") {
                return failure_condition("FailureTarget", "PodFailurePolicy", m.message);
            }
            if (m.action != "Ignore") {
                ++failed;
            }
        }
    }
    if (failed > job["spec"].value("backoffLimit", 6) || past_backoff_limit_on_failure(job, pods)) {
        return failure_condition("FailureTarget", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit");
    }
    if (job["spec"].contains("activeDeadlineSeconds") && status.contains("startTime")) {
        auto deadline = std::chrono::seconds(job["spec"]["activeDeadlineSeconds"].get<int64_t>());
        Memory& mem = m_memory[uid_of(job)];
        if (mem.started_at == SteadyTime{}) {
            mem.started_at = SteadyClock::now();  // when this controller set startTime
        }
        auto due = mem.started_at + scaled(deadline, m_time_scale);
        if (SteadyClock::now() >= due) {
            return failure_condition("FailureTarget", "DeadlineExceeded",
                                     "Job was active longer than specified deadline");
        }
        wake_at(due);
    }
    if (succeeded >= job["spec"].value("completions", 1)) {
        return failure_condition("SuccessCriteriaMet", "CompletionsReached",
                                 "Reached expected number of succeeded pods");
    }
    return std::nullopt;
}

void JobController::delete_active(const json& job, const std::vector<json>& pods) {
    for (const auto& pod : pods) {
        if (!pod_active(pod)) {
            continue;
        }
        auto r = delete_object(m_store, "pods", pod["metadata"].value("namespace", ""),
                               name_of(pod), {});
        if (r) {
            record_event(m_store, job, "Normal", "SuccessfulDelete", "Deleted pod: " + name_of(pod),
                         "job-controller");
        }
    }
}

bool JobController::track_terminated(const json& job, const std::vector<json>& pods) {
    bool failing = find_true_condition(job, "FailureTarget") != nullptr;
    json uncounted = job["status"].value("uncountedTerminatedPods", json::object());
    json unc_failed = uncounted.value("failed", json::array());
    json unc_succeeded = uncounted.value("succeeded", json::array());
    std::vector<json> release;
    Memory& mem = m_memory[uid_of(job)];
    for (const auto& pod : pods) {
        if (!has_tracking_finalizer(pod)) {
            continue;
        }
        std::string uid = uid_of(pod);
        bool succeeded = pod["status"].value("phase", "") == "Succeeded";
        if (succeeded) {
            if (!in_list(unc_succeeded, uid)) {
                unc_succeeded.push_back(uid);
                mem.failures = 0;
            }
        } else if (pod_failed(pod, job) || (failing && !pod_terminal(pod))) {
            if (match_pod_failure_policy(job, pod).action != "Ignore" || !pod_terminal(pod)) {
                if (!in_list(unc_failed, uid)) {
                    unc_failed.push_back(uid);
                }
            }
            ++mem.failures;
            mem.last_failure = SteadyClock::now();
        } else {
            continue;
        }
        release.push_back(pod);
    }
    if (release.empty()) {
        return false;
    }
    // 1. Record the UIDs, 2. remove the finalizers, 3. move the UIDs into the counters.
    (void)write_status(job, [&](json& st) {
        st["uncountedTerminatedPods"] = {{"failed", unc_failed}, {"succeeded", unc_succeeded}};
    });
    for (const auto& pod : release) {
        remove_finalizer(pod);
    }
    (void)write_status(job, [&](json& st) {
        int64_t failed = st.value("failed", 0) + static_cast<int64_t>(unc_failed.size());
        int64_t succeeded = st.value("succeeded", 0) + static_cast<int64_t>(unc_succeeded.size());
        st.erase("failed");
        st.erase("succeeded");
        if (failed > 0) {
            st["failed"] = failed;
        }
        if (succeeded > 0) {
            st["succeeded"] = succeeded;
        }
        st["uncountedTerminatedPods"] = json::object();
    });
    return true;
}

int JobController::create_pods(const json& job, int active, int succeeded, int terminating) {
    const json& spec = job["spec"];
    if (spec.value("suspend", false)) {
        return 0;
    }
    if (spec.contains("podFailurePolicy") || spec.value("podReplacementPolicy", "") == "Failed") {
        active += terminating;
    }
    int want =
        std::min<int>(spec.value("parallelism", 1), spec.value("completions", 1) - succeeded);
    Memory& mem = m_memory[uid_of(job)];
    if (want > active && mem.failures > 0) {
        auto due = mem.last_failure + scaled(pod_failure_backoff(mem.failures), m_time_scale);
        if (SteadyClock::now() < due) {
            wake_at(due);
            return 0;
        }
    }
    static const ResourceInfo& pods_info = *find_resource("", "v1", "pods");
    int created = 0;
    for (int i = active; i < want; ++i) {
        const json& tmpl = spec["template"];
        json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
        pod["metadata"] = tmpl.value("metadata", json::object());
        std::string ns = job["metadata"].value("namespace", "");
        pod["metadata"]["name"] = name_of(job) + "-" + new_uid().substr(0, 5);
        pod["metadata"]["generateName"] = name_of(job) + "-";
        pod["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
        pod["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                               {"kind", "Job"},
                                               {"name", name_of(job)},
                                               {"uid", uid_of(job)},
                                               {"controller", true},
                                               {"blockOwnerDeletion", true}}};
        pod["spec"] = tmpl["spec"];
        if (!prepare_create(pods_info, ns, false, pod).is_ok()) {
            return created;
        }
        auto r = m_store.create("pods", pod);
        if (r) {
            ++created;
            record_event(m_store, job, "Normal", "SuccessfulCreate", "Created pod: " + name_of(*r),
                         "job-controller");
        }
    }
    return created;
}

void JobController::sync_job(const json& job_in, std::vector<json> pods) {
    if (job_in["metadata"].contains("deletionTimestamp")) {
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
    // 3. Terminated pods are counted through the finalizer.
    if (track_terminated(job, pods)) {
        auto fresh = m_store.get("jobs", job["metadata"].value("namespace", ""), name_of(job));
        if (!fresh || uid_of(*fresh) != uid_of(job)) {
            return;
        }
        job = *fresh;
        pods = pods_of(job);
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
        active += create_pods(job, active, job["status"].value("succeeded", 0), terminating);
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
