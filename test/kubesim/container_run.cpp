// Container state machine of the kubesim kubelet: see container_run.h.
#include "test/kubesim/container_run.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

#include "test/kubesim/processes.h"
#include "test/kubesim/store.h"

namespace kubesim {

using nlohmann::json;

namespace {

constexpr int k_backoff_initial = 10;
constexpr int k_backoff_max = 300;
constexpr int k_backoff_reset = 600;

std::string read_file(const std::string& path, size_t limit) {
    std::ifstream in(path, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return data.size() > limit ? data.substr(0, limit) : data;
}

std::string tail_lines(const std::string& text, size_t max_lines, size_t max_bytes) {
    size_t pos = text.size();
    size_t lines = 0;
    if (pos > 0 && text[pos - 1] == '\n') {
        --pos;
    }
    while (pos > 0 && lines < max_lines) {
        size_t nl = text.rfind('\n', pos - 1);
        pos = nl == std::string::npos ? 0 : nl;
        ++lines;
        if (nl == std::string::npos) {
            break;
        }
    }
    std::string out = text.substr(pos == 0 ? 0 : pos + 1);
    return out.size() > max_bytes ? out.substr(out.size() - max_bytes) : out;
}

std::chrono::microseconds scaled(double seconds, double scale) {
    return std::chrono::microseconds(static_cast<int64_t>(seconds * scale * 1e6));
}

}  // namespace

std::string go_duration(int seconds) {
    if (seconds < 60) {
        return std::to_string(seconds) + "s";
    }
    return std::to_string(seconds / 60) + "m" + std::to_string(seconds % 60) + "s";
}

ContainerRun::ContainerRun(const PodIdentity& pod, json spec, bool init)
    : m_pod(pod), m_spec(std::move(spec)), m_name(m_spec.value("name", "")), m_init(init) {
    m_state = {{"waiting", {{"reason", init ? "PodInitializing" : "ContainerCreating"}}}};
    if (init) {
        m_state = {{"waiting", {{"reason", "PodInitializing"}}}};
    }
}

std::string ContainerRun::container_id(int instance) const {
    std::string uid = m_pod.uid;
    uid.erase(std::remove(uid.begin(), uid.end(), '-'), uid.end());
    return "kubesim://" + uid.substr(0, 12) + "-" + m_name + "-" + std::to_string(instance);
}

std::string ContainerRun::instance_log(int instance) const {
    return m_pod.dir + "/" + m_name + "-" + std::to_string(instance) + ".log";
}

bool ContainerRun::maybe_start(SteadyTime now) {
    if (m_done || m_pid > 0 || m_stopping || (m_restart_pending && now < m_restart_at)) {
        return false;
    }
    std::vector<std::string> argv;
    for (const char* f : {"command", "args"}) {
        for (const auto& a : m_spec.value(f, json::array())) {
            argv.push_back(a.get<std::string>());
        }
    }
    if (argv.empty()) {
        if (m_start_error.empty()) {
            m_start_error = "kubesim runs container commands only: no command or args";
            m_state = {
                {"waiting", {{"reason", "CreateContainerError"}, {"message", m_start_error}}}};
            return true;
        }
        return false;
    }
    int instance = m_instances;
    SpawnSpec spec;
    spec.argv = argv;
    spec.cwd = m_pod.dir;
    spec.log_path = instance_log(instance);
    std::string term_log = m_pod.dir + "/" + m_name + "-" + std::to_string(instance) + ".termlog";
    spec.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOME=" + m_pod.dir,
                "HOSTNAME=" + m_pod.name,
                "KUBESIM_POD_NAME=" + m_pod.name,
                "KUBESIM_NAMESPACE=" + m_pod.ns,
                "KUBESIM_POD_UID=" + m_pod.uid,
                "KUBESIM_CONTAINER=" + m_name,
                "KUBESIM_RESTART_COUNT=" + std::to_string(m_restart_count + (m_instances > 0)),
                "KUBESIM_TERMINATION_LOG=" + term_log};
    for (const auto& e : m_spec.value("env", json::array())) {
        std::string value = e.value("value", "");
        if (e.contains("valueFrom") && e["valueFrom"].contains("fieldRef")) {
            std::string path = e["valueFrom"]["fieldRef"].value("fieldPath", "");
            value = path == "metadata.name"        ? m_pod.name
                    : path == "metadata.namespace" ? m_pod.ns
                    : path == "metadata.uid"       ? m_pod.uid
                    : path == "spec.nodeName"      ? "kubesim-node"
                                                   : "127.0.0.1";
        }
        spec.env.push_back(e.value("name", "") + "=" + value);
    }
    std::string error;
    pid_t pid = spawn_process(spec, &error);
    if (m_instances > 0) {
        ++m_restart_count;
        if (m_state.contains("terminated")) {
            m_last_state = m_state;
        }
    }
    ++m_instances;
    m_restart_pending = false;
    m_started_steady = now;
    if (pid < 0) {
        std::ofstream(spec.log_path, std::ios::app) << error << "\n";
        m_state = {{"terminated",
                    {{"exitCode", 128},
                     {"reason", "StartError"},
                     {"message", error},
                     {"startedAt", "1970-01-01T00:00:00Z"},
                     {"finishedAt", now_rfc3339()},
                     {"containerID", container_id(instance)}}}};
        on_exit(128, now);
        return true;
    }
    m_pid = pid;
    m_state = {{"running", {{"startedAt", now_rfc3339()}}}};
    m_events.push_back(
        {"Normal", "Pulled",
         "Container image \"" + m_spec.value("image", "") + "\" already present on machine"});
    m_events.push_back({"Normal", "Created", "Created container " + m_name});
    m_events.push_back({"Normal", "Started", "Started container " + m_name});
    return true;
}

std::string ContainerRun::termination_message(int code, int instance) const {
    std::string term_log = m_pod.dir + "/" + m_name + "-" + std::to_string(instance) + ".termlog";
    std::string msg = read_file(term_log, 4096);
    if (msg.empty() && code != 0 &&
        m_spec.value("terminationMessagePolicy", "File") == "FallbackToLogsOnError") {
        msg = tail_lines(read_file(instance_log(instance), 1 << 20), 80, 2048);
    }
    return msg;
}

bool ContainerRun::poll(SteadyTime now) {
    if (m_pid <= 0) {
        return false;
    }
    auto code = poll_exit(m_pid);
    if (!code) {
        return false;
    }
    m_pid = -1;
    int instance = m_instances - 1;
    json term = {{"exitCode", *code},
                 {"reason", *code == 0 ? "Completed" : "Error"},
                 {"startedAt", m_state["running"].value("startedAt", now_rfc3339())},
                 {"finishedAt", now_rfc3339()},
                 {"containerID", container_id(instance)}};
    std::string msg = termination_message(*code, instance);
    if (!msg.empty()) {
        term["message"] = msg;
    }
    m_state = {{"terminated", term}};
    on_exit(*code, now);
    return true;
}

void ContainerRun::on_exit(int code, SteadyTime now) {
    m_exit_code = code;
    bool restart = !m_stopping && (m_pod.restart_policy == "Always" ||
                                   (m_pod.restart_policy == "OnFailure" && code != 0));
    if (!restart) {
        m_done = true;
        return;
    }
    if (now - m_started_steady >= scaled(k_backoff_reset, m_pod.time_scale)) {
        m_crashes = 0;
    }
    ++m_crashes;
    m_restart_pending = true;
    if (m_crashes == 1) {
        m_restart_at = now;  // the kubelet restarts a first crash at once
        return;
    }
    int delay = k_backoff_initial;
    for (int i = 2; i < m_crashes && delay < k_backoff_max; ++i) {
        delay = std::min(delay * 2, k_backoff_max);
    }
    m_restart_at = now + scaled(delay, m_pod.time_scale);
    m_events.push_back({"Warning", "BackOff",
                        "Back-off restarting failed container " + m_name + " in pod " + m_pod.name +
                            "_" + m_pod.ns + "(" + m_pod.uid + ")"});
    m_last_state = m_state;
    m_state = {
        {"waiting",
         {{"reason", "CrashLoopBackOff"},
          {"message", "back-off " + go_duration(delay) + " restarting failed container=" + m_name +
                          " pod=" + m_pod.name + "_" + m_pod.ns + "(" + m_pod.uid + ")"}}}};
}

void ContainerRun::terminate() {
    m_stopping = true;
    m_restart_pending = false;
    if (m_pid > 0) {
        signal_group(m_pid, SIGTERM);
        m_events.push_back({"Normal", "Killing", "Stopping container " + m_name});
    } else if (!m_done && m_state.contains("waiting") && m_last_state.contains("terminated")) {
        m_state = m_last_state;  // a crash-looping container stays terminated
        m_done = true;
    } else if (!m_done && !m_state.contains("waiting")) {
        m_done = true;
    }
}

void ContainerRun::kill_now() {
    m_stopping = true;
    m_restart_pending = false;
    if (m_pid > 0) {
        signal_group(m_pid, SIGKILL);
    }
}

void ContainerRun::mark_evicted() {
    kill_now();
    if (m_pid > 0) {
        for (int i = 0; i < 1000 && !poll_exit(m_pid); ++i) {
            usleep(1000);
        }
        m_pid = -1;
    }
    m_done = true;
    m_exit_code = 137;
    m_state = {{"terminated",
                {{"exitCode", 137},
                 {"reason", "ContainerStatusUnknown"},
                 {"message", "The container could not be located when the pod was terminated"},
                 {"startedAt", nullptr},
                 {"finishedAt", nullptr}}}};
}

json ContainerRun::status() const {
    bool is_running = m_state.contains("running");
    json st = {{"name", m_name},        {"image", m_spec.value("image", "")},
               {"imageID", ""},         {"ready", is_running},
               {"started", is_running}, {"restartCount", m_restart_count},
               {"state", m_state},      {"lastState", m_last_state}};
    if (m_instances > 0 && !m_state.contains("waiting")) {
        st["containerID"] = container_id(m_instances - 1);
    }
    if (m_init) {
        st["ready"] = succeeded();
        st.erase("started");
    }
    return st;
}

bool ContainerRun::log_path(bool previous, std::string* path, std::string* error) const {
    auto id_of = [](const json& state) {
        return state.contains("terminated") ? state["terminated"].value("containerID", "")
                                            : std::string();
    };
    std::string id;
    if (previous) {
        id = id_of(m_last_state);
        if (id.empty()) {
            *error = "previous terminated container \"" + m_name + "\" in pod \"" + m_pod.name +
                     "\" not found";
            return false;
        }
    } else if (m_state.contains("running") || m_state.contains("terminated")) {
        id = m_state.contains("running") ? container_id(m_instances - 1) : id_of(m_state);
    } else if (!id_of(m_last_state).empty()) {
        id = id_of(m_last_state);
    } else {
        *error = "container \"" + m_name + "\" in pod \"" + m_pod.name +
                 "\" is waiting to start: " + m_state["waiting"].value("reason", "");
        return false;
    }
    for (int i = 0; i < m_instances; ++i) {
        if (container_id(i) == id) {
            *path = instance_log(i);
            return true;
        }
    }
    *error = "container \"" + m_name + "\" in pod \"" + m_pod.name + "\": log not found";
    return false;
}

std::vector<std::array<std::string, 3>> ContainerRun::take_events() {
    return std::exchange(m_events, {});
}

SteadyTime ContainerRun::wake_time() const {
    return m_restart_pending ? m_restart_at : SteadyTime::max();
}

}  // namespace kubesim
