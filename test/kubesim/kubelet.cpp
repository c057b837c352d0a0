// kubesim kubelet: see kubelet.h.
#include "test/kubesim/kubelet.h"

#include <signal.h>

#include <filesystem>
#include <iostream>

#include "test/kubesim/objects.h"
#include "test/kubesim/processes.h"

namespace kubesim {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

Kubelet::Kubelet(Store& store, double time_scale, std::string workdir)
    : m_store(store), m_time_scale(time_scale), m_workdir(std::move(workdir)) {
    m_store.on_change([this](const Change& c) {
        if (c.resource == "pods") {
            m_pods_changed = true;
            wake();
        }
    });
}

Kubelet::~Kubelet() {
    stop();
}

void Kubelet::start() {
    m_thread = std::thread([this] { run(); });
}

void Kubelet::wake() {
    m_wake_cv.notify_all();
}

void Kubelet::stop() {
    m_stop = true;
    wake();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    std::lock_guard lock(m_mutex);
    for (auto& [uid, pod] : m_pods) {
        for (auto* list : {&pod->init, &pod->app}) {
            for (auto& c : *list) {
                if (c->running()) {
                    c->mark_evicted();  // SIGKILL to the group and reap
                }
            }
        }
    }
    m_pods.clear();
}

void Kubelet::run() {
    while (!m_stop) {
        SteadyTime next = SteadyClock::now() + std::chrono::milliseconds(200);
        bool any_running = false;
        {
            std::lock_guard lock(m_mutex);
            if (m_pods_changed.exchange(false)) {
                try {
                    sync_from_store();
                } catch (const std::exception& e) {
                    std::cerr << "kubesim: kubelet: " << e.what() << std::endl;
                }
            }
            auto now = SteadyClock::now();
            for (auto& [uid, pod] : m_pods) {
                try {
                    step(*pod, now);
                } catch (const std::exception& e) {
                    std::cerr << "kubesim: kubelet: pod " << pod->id.name << ": " << e.what()
                              << std::endl;
                    pod->finished = true;  // stop acting on a pod we cannot understand
                }
                for (auto* list : {&pod->init, &pod->app}) {
                    for (auto& c : *list) {
                        any_running = any_running || c->running();
                        next = std::min(next, c->wake_time());
                    }
                }
                if (pod->terminating && !pod->finished) {
                    next = std::min(next, pod->kill_at);
                }
            }
        }
        if (any_running) {
            next = std::min(next, SteadyClock::now() + std::chrono::milliseconds(3));
        }
        std::unique_lock lock(m_wake_mutex);
        m_wake_cv.wait_until(lock, next, [&] { return m_stop.load() || m_pods_changed.load(); });
    }
}

void Kubelet::sync_from_store() {
    auto pods = m_store.list("pods", "", nullptr, nullptr);
    std::map<std::string, const json*> seen;
    for (const auto& p : pods) {
        const json& meta = p["metadata"];
        std::string uid = meta.value("uid", "");
        seen[uid] = &p;
        auto it = m_pods.find(uid);
        if (it == m_pods.end()) {
            std::string phase = p["status"].value("phase", "Pending");
            if (phase != "Pending" || p["status"].contains("startTime")) {
                continue;  // not ours to start (already ran)
            }
            auto run = std::make_unique<PodRun>();
            run->id = {meta.value("namespace", ""),
                       meta.value("name", ""),
                       uid,
                       p["spec"].value("restartPolicy", "Always"),
                       m_time_scale,
                       m_workdir + "/" + uid};
            std::filesystem::create_directories(run->id.dir);
            for (const auto& c : p["spec"].value("initContainers", json::array())) {
                run->init.push_back(std::make_unique<ContainerRun>(run->id, c, true));
            }
            for (const auto& c : p["spec"]["containers"]) {
                run->app.push_back(std::make_unique<ContainerRun>(run->id, c, false));
            }
            run->start_time = now_rfc3339();
            record_event(
                m_store, p, "Normal", "Scheduled",
                "Successfully assigned " + run->id.ns + "/" + run->id.name + " to kubesim-node",
                "default-scheduler");
            it = m_pods.emplace(uid, std::move(run)).first;
        }
        PodRun& run = *it->second;
        if (meta.contains("deletionTimestamp") && !run.terminating) {
            run.terminating = true;
            run.dirty = true;
            int64_t grace = meta.value("deletionGracePeriodSeconds", int64_t{0});
            run.kill_at =
                SteadyClock::now() + std::chrono::microseconds(static_cast<int64_t>(
                                         static_cast<double>(grace) * m_time_scale * 1e6));
            for (auto* list : {&run.init, &run.app}) {
                for (auto& c : *list) {
                    c->terminate();
                }
            }
        }
    }
    for (auto it = m_pods.begin(); it != m_pods.end();) {
        if (seen.count(it->first) == 0) {
            for (auto* list : {&it->second->init, &it->second->app}) {
                for (auto& c : *list) {
                    c->kill_now();
                    (void)c->poll(SteadyClock::now());
                }
            }
            std::error_code ec;
            std::filesystem::remove_all(it->second->id.dir, ec);
            it = m_pods.erase(it);
        } else {
            ++it;
        }
    }
}

void Kubelet::step(PodRun& pod, SteadyTime now) {
    if (pod.finished) {
        if (pod.terminating && !pod.deleted_reported) {
            finish_deletion(pod);
        }
        return;
    }
    for (auto* list : {&pod.init, &pod.app}) {
        for (auto& c : *list) {
            pod.dirty = c->poll(now) || pod.dirty;
        }
    }
    if (pod.terminating) {
        bool any = false;
        for (auto* list : {&pod.init, &pod.app}) {
            for (auto& c : *list) {
                if (c->running() && now >= pod.kill_at) {
                    c->kill_now();
                }
                any = any || c->running();
            }
        }
        if (!any) {
            record_events(pod);
            finish_deletion(pod);
            return;
        }
    } else {
        bool init_done = true;
        for (auto& c : pod.init) {
            if (!c->done() || !c->succeeded()) {
                pod.dirty = c->maybe_start(now) || pod.dirty;
                init_done = false;
                break;
            }
        }
        if (init_done) {
            for (auto& c : pod.app) {
                pod.dirty = c->maybe_start(now) || pod.dirty;
            }
        }
    }
    if (pod.dirty) {
        write_status(pod);
    }
    record_events(pod);
}

void Kubelet::record_events(PodRun& pod) {
    json involved = {
        {"kind", "Pod"},
        {"apiVersion", "v1"},
        {"metadata", {{"name", pod.id.name}, {"namespace", pod.id.ns}, {"uid", pod.id.uid}}}};
    for (auto* list : {&pod.init, &pod.app}) {
        for (auto& c : *list) {
            for (const auto& [type, reason, message] : c->take_events()) {
                record_event(m_store, involved, type, reason, message, "kubelet");
            }
        }
    }
}

std::string Kubelet::phase_of(const PodRun& pod) {
    // A deleted pod keeps its phase while any of its containers still runs (its grace
    // period): the kubelet moves it to a terminal phase only once they all stopped, and
    // the Job controller writes Failed only once no pod is terminating (FailureTarget
    // stays visible for the grace period, as on a 1.31+ cluster).
    if (pod.terminating) {
        for (const auto* list : {&pod.init, &pod.app}) {
            for (const auto& c : *list) {
                if (c->running()) {
                    return "Running";  // build_status keeps the stored phase
                }
            }
        }
    }
    for (const auto& c : pod.init) {
        if (c->done() && !c->succeeded()) {
            return "Failed";
        }
        if (!c->done()) {
            return pod.terminating ? "Failed" : "Pending";
        }
    }
    bool all_done = true;
    bool all_ok = true;
    bool any_started = false;
    for (const auto& c : pod.app) {
        all_done = all_done && c->done();
        all_ok = all_ok && c->succeeded();
        any_started = any_started || c->started_ever();
    }
    if (all_done) {
        return all_ok ? "Succeeded" : "Failed";
    }
    if (pod.terminating) {
        return all_ok && all_done ? "Succeeded" : "Failed";
    }
    return any_started ? "Running" : "Pending";
}

json Kubelet::build_status(const PodRun& pod, const json& old) const {
    json st = old;
    std::string phase = phase_of(pod);
    if (pod.terminating && (phase == "Running" || phase == "Pending")) {
        phase = old.value("phase", phase);  // the phase changes once the containers are gone
    }
    st["phase"] = phase;
    st["hostIP"] = "127.0.0.1";
    st["hostIPs"] = json::array({{{"ip", "127.0.0.1"}}});
    st["podIP"] = "127.0.0.1";
    st["podIPs"] = json::array({{{"ip", "127.0.0.1"}}});
    st["startTime"] = pod.start_time;
    st["qosClass"] = "BestEffort";
    json statuses = json::array();
    bool all_ready = !pod.app.empty();
    for (const auto& c : pod.app) {
        statuses.push_back(c->status());
        all_ready = all_ready && c->status()["ready"].get<bool>();
    }
    st["containerStatuses"] = statuses;
    bool init_done = true;
    if (!pod.init.empty()) {
        json init = json::array();
        for (const auto& c : pod.init) {
            init.push_back(c->status());
            init_done = init_done && c->succeeded();
        }
        st["initContainerStatuses"] = init;
    }
    bool terminal = phase == "Succeeded" || phase == "Failed";
    std::string not_ready =
        terminal ? (phase == "Succeeded" ? "PodCompleted" : "PodFailed") : "ContainersNotReady";
    json& conds = st["conditions"];
    auto cond = [&](const char* type, bool ok, const std::string& reason) {
        json c = {{"type", type}, {"status", ok ? "True" : "False"}, {"lastProbeTime", nullptr}};
        if (!ok && !reason.empty()) {
            c["reason"] = reason;
        }
        set_condition(conds, c);
    };
    cond("PodReadyToStartContainers", !terminal, "");
    cond("Initialized", init_done, terminal ? "PodCompleted" : "ContainersNotInitialized");
    cond("Ready", all_ready && !terminal, not_ready);
    cond("ContainersReady", all_ready && !terminal, not_ready);
    cond("PodScheduled", true, "");
    return st;
}

void Kubelet::write_status(PodRun& pod) {
    pod.dirty = false;
    (void)m_store.mutate("pods", pod.id.ns, pod.id.name, "", [&](json& obj) {
        if (obj["metadata"].value("uid", "") != pod.id.uid) {
            return Status(Code::conflict, "uid changed");
        }
        obj["status"] = build_status(pod, obj["status"]);
        return Status::ok();
    });
}

void Kubelet::finish_deletion(PodRun& pod) {
    if (!pod.finished) {
        write_status(pod);
    }
    pod.finished = true;
    pod.deleted_reported = true;
    // The kubelet's final delete (grace 0): the store removes the pod once no
    // finalizer holds it.
    (void)m_store.mutate("pods", pod.id.ns, pod.id.name, "", [&](json& obj) {
        if (obj["metadata"].value("uid", "") != pod.id.uid) {
            return Status(Code::conflict, "uid changed");
        }
        obj["metadata"]["deletionGracePeriodSeconds"] = 0;
        return Status::ok();
    });
}

Status Kubelet::evict(const std::string& ns, const std::string& name, const std::string& message) {
    auto pod = m_store.get("pods", ns, name);
    if (!pod) {
        return pod.status();
    }
    std::string uid = (*pod)["metadata"].value("uid", "");
    // One status write, as the kubelet's eviction manager makes it: the containers'
    // ends together with the phase, the reason and DisruptionTarget. (Two writes would
    // show a failed pod without its reason, a state no kubelet shows.)
    std::lock_guard lock(m_mutex);
    PodRun* run = nullptr;
    if (auto it = m_pods.find(uid); it != m_pods.end()) {
        run = it->second.get();
        for (auto* list : {&run->init, &run->app}) {
            for (auto& c : *list) {
                c->mark_evicted();
            }
        }
        run->finished = true;
        run->dirty = false;
    }
    auto result = m_store.mutate("pods", ns, name, "", [&](json& obj) {
        if (obj["metadata"].value("uid", "") != uid) {
            return Status(Code::conflict, "uid changed");
        }
        if (run != nullptr) {
            obj["status"] = build_status(*run, obj["status"]);
        }
        json& st = obj["status"];
        st["phase"] = "Failed";
        st["reason"] = "Evicted";
        st["message"] = message;
        set_condition(st["conditions"], {{"type", "DisruptionTarget"},
                                         {"status", "True"},
                                         {"reason", "TerminationByKubelet"},
                                         {"message", message}});
        set_condition(st["conditions"],
                      {{"type", "Ready"}, {"status", "False"}, {"reason", "PodFailed"}});
        return Status::ok();
    });
    if (!result) {
        return result.status();
    }
    record_event(m_store, *result, "Warning", "Evicted", message, "kubelet");
    return Status::ok();
}

Result<std::string> Kubelet::log_path(const std::string& uid, const std::string& container,
                                      bool previous, bool* running) {
    std::lock_guard lock(m_mutex);
    auto it = m_pods.find(uid);
    if (it == m_pods.end()) {
        return Status(Code::failed, "the pod has no containers on this node");
    }
    for (auto* list : {&it->second->init, &it->second->app}) {
        for (auto& c : *list) {
            if (c->name() == container) {
                std::string path;
                std::string error;
                if (!c->log_path(previous, &path, &error)) {
                    return Status(Code::failed, error);
                }
                *running = c->running() && !previous;
                return path;
            }
        }
    }
    return Status(Code::failed,
                  "container " + container + " is not valid for pod " + it->second->id.name);
}

}  // namespace kubesim
