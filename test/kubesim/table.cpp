// Server-side Tables: see table.h. Cell texts follow kubectl's printers (pods' STATUS
// and RESTARTS, jobs' STATUS/COMPLETIONS/DURATION, human ages).
#include "test/kubesim/table.h"

#include <chrono>

#include "runner/base/vocab/time.h"

namespace kubesim {

using nlohmann::json;

namespace {

int64_t seconds_since(const std::string& ts) {
    auto t = envgate::parse_rfc3339(ts);
    if (!t) {
        return 0;
    }
    auto now =
        std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
    return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(now - *t).count());
}

// k8s.io/apimachinery duration.HumanDuration, shortened.
std::string human(int64_t s) {
    if (s < 120) {
        return std::to_string(s) + "s";
    }
    int64_t m = s / 60;
    if (m < 10) {
        return std::to_string(m) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
    }
    if (m < 180) {
        return std::to_string(m) + "m";
    }
    int64_t h = m / 60;
    if (h < 48) {
        return std::to_string(h) + "h";
    }
    return std::to_string(h / 24) + "d";
}

std::string age(const json& obj) {
    return human(seconds_since(obj["metadata"].value("creationTimestamp", "")));
}

bool has_condition(const json& obj, const char* type) {
    for (const auto& c : obj["status"].value("conditions", json::array())) {
        if (c.value("type", "") == type && c.value("status", "") == "True") {
            return true;
        }
    }
    return false;
}

std::string pod_status(const json& pod) {
    const json& st = pod["status"];
    std::string reason = st.value("reason", st.value("phase", "Pending"));
    const json init = st.value("initContainerStatuses", json::array());
    for (size_t i = 0; i < init.size(); ++i) {
        const json& s = init[i]["state"];
        if (s.contains("terminated") && s["terminated"].value("exitCode", 0) == 0) {
            continue;
        }
        if (s.contains("terminated")) {
            return "Init:" + s["terminated"].value("reason", "Error");
        }
        if (s.contains("waiting") && s["waiting"].value("reason", "") != "PodInitializing") {
            return "Init:" + s["waiting"].value("reason", "");
        }
        return "Init:" + std::to_string(i) + "/" + std::to_string(init.size());
    }
    bool running = false;
    const json cs = st.value("containerStatuses", json::array());
    for (auto it = cs.rbegin(); it != cs.rend(); ++it) {
        const json& s = (*it)["state"];
        if (s.contains("waiting") && !s["waiting"].value("reason", "").empty()) {
            reason = s["waiting"]["reason"];
        } else if (s.contains("terminated")) {
            reason = s["terminated"].value("reason", "");
            if (reason.empty()) {
                reason = "ExitCode:" + std::to_string(s["terminated"].value("exitCode", 0));
            }
        } else if (s.contains("running") && (*it).value("ready", false)) {
            running = true;
        }
    }
    if (reason == "Completed" && running) {
        reason = "Running";
    }
    std::string phase = st.value("phase", "");
    if (pod["metadata"].contains("deletionTimestamp") && phase != "Succeeded" &&
        phase != "Failed") {
        reason = "Terminating";
    }
    return reason;
}

json pod_row(const json& pod) {
    int ready = 0;
    int restarts = 0;
    std::string last;
    const json cs = pod["status"].value("containerStatuses", json::array());
    for (const auto& c : cs) {
        ready += c.value("ready", false);
        restarts += c.value("restartCount", 0);
        if (c["lastState"].contains("terminated")) {
            last = c["lastState"]["terminated"].value("finishedAt", "");
        }
    }
    std::string r = std::to_string(restarts);
    if (restarts > 0 && !last.empty()) {
        r += " (" + human(seconds_since(last)) + " ago)";
    }
    size_t total = pod["spec"].value("containers", json::array()).size();
    return {pod["metadata"]["name"],
            std::to_string(ready) + "/" + std::to_string(total),
            pod_status(pod),
            r,
            age(pod),
            pod["status"].value("podIP", "<none>"),
            pod["spec"].value("nodeName", "<none>"),
            "<none>",
            "<none>"};
}

json job_row(const json& job) {
    std::string status = "Running";
    if (has_condition(job, "Complete")) {
        status = "Complete";
    } else if (has_condition(job, "Failed")) {
        status = "Failed";
    } else if (job["metadata"].contains("deletionTimestamp")) {
        status = "Terminating";
    } else if (has_condition(job, "Suspended")) {
        status = "Suspended";
    } else if (has_condition(job, "FailureTarget")) {
        status = "FailureTarget";
    } else if (has_condition(job, "SuccessCriteriaMet")) {
        status = "SuccessCriteriaMet";
    }
    std::string completions = std::to_string(job["status"].value("succeeded", 0)) + "/" +
                              std::to_string(job["spec"].value("completions", 1));
    std::string duration;
    if (job["status"].contains("startTime")) {
        int64_t since = seconds_since(job["status"]["startTime"]);
        if (job["status"].contains("completionTime")) {
            since -= seconds_since(job["status"]["completionTime"]);
        }
        duration = human(since);
    }
    return {job["metadata"]["name"], status, completions, duration, age(job)};
}

json row_cells(const ResourceInfo& info, const json& obj) {
    if (info.kind == "Pod") {
        return pod_row(obj);
    }
    if (info.kind == "Job") {
        return job_row(obj);
    }
    if (info.kind == "Lease") {
        return {obj["metadata"]["name"], obj["spec"].value("holderIdentity", "<none>"), age(obj)};
    }
    if (info.kind == "Namespace") {
        return {obj["metadata"]["name"], obj["status"].value("phase", "Active"), age(obj)};
    }
    if (info.kind == "Event") {
        const json& io = obj.value("involvedObject", json::object());
        std::string kind = io.value("kind", "");
        std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
        return {human(seconds_since(obj.value("lastTimestamp", ""))), obj.value("type", ""),
                obj.value("reason", ""), kind + "/" + io.value("name", ""),
                obj.value("message", "")};
    }
    return {obj["metadata"]["name"], age(obj)};
}

json columns(const ResourceInfo& info) {
    std::vector<std::string> names;
    if (info.kind == "Pod") {
        names = {"Name", "Ready", "Status",         "Restarts",       "Age",
                 "IP",   "Node",  "Nominated Node", "Readiness Gates"};
    } else if (info.kind == "Job") {
        names = {"Name", "Status", "Completions", "Duration", "Age"};
    } else if (info.kind == "Lease") {
        names = {"Name", "Holder", "Age"};
    } else if (info.kind == "Namespace") {
        names = {"Name", "Status", "Age"};
    } else if (info.kind == "Event") {
        names = {"Last Seen", "Type", "Reason", "Object", "Message"};
    } else {
        names = {"Name", "Age"};
    }
    json out = json::array();
    for (size_t i = 0; i < names.size(); ++i) {
        out.push_back({{"name", names[i]},
                       {"type", "string"},
                       {"format", names[i] == "Name" ? "name" : ""},
                       {"description", ""},
                       {"priority", i >= 5 ? 1 : 0}});
    }
    return out;
}

}  // namespace

bool wants_table(const std::string& accept) {
    return accept.find("as=Table") != std::string::npos;
}

json to_table(const ResourceInfo& info, const std::vector<json>& objects,
              const std::string& resource_version) {
    json rows = json::array();
    for (const auto& obj : objects) {
        json meta = obj["metadata"];
        rows.push_back({{"cells", row_cells(info, obj)},
                        {"object",
                         {{"kind", "PartialObjectMetadata"},
                          {"apiVersion", "meta.k8s.io/v1"},
                          {"metadata", meta}}}});
    }
    return {{"kind", "Table"},
            {"apiVersion", "meta.k8s.io/v1"},
            {"metadata", {{"resourceVersion", resource_version}}},
            {"columnDefinitions", columns(info)},
            {"rows", rows}};
}

}  // namespace kubesim
