#include "runner/gating/gate_pass.h"

#include <algorithm>

#include "gates/counting.h"
#include "gates/messages.h"
#include "runner/kube/kube_api.h"

namespace envgate {

using nlohmann::json;

bool deletion_may_be_in_flight(const std::set<std::string>& before,
                               const std::set<std::string>& now,
                               const std::set<std::string>& deleted, bool delivered,
                               long long accounted) {
    if (delivered) {
        return false;
    }
    if (now.empty() && deleted.empty()) {
        return true;
    }
    std::set<std::string> known = now;
    known.insert(deleted.begin(), deleted.end());
    if (accounted > static_cast<long long>(known.size())) {
        return true;
    }
    return std::any_of(before.begin(), before.end(), [&](const std::string& uid) {
        return now.count(uid) == 0 && deleted.count(uid) == 0;
    });
}

long long accounted_pods(const json& job) {
    const json* status = job.contains("status") ? &job["status"] : nullptr;
    if (status == nullptr || !status->is_object()) {
        return 0;
    }
    long long sum = 0;
    for (const char* field : {"active", "succeeded", "failed"}) {
        if (auto it = status->find(field); it != status->end() && it->is_number_integer()) {
            sum += std::clamp<long long>(it->get<long long>(), 0, 1'000'000);
        }
    }
    return sum;
}

gates::GateMemory fresh_memory(const gates::GateMemory& m) {
    gates::GateMemory fresh;
    fresh.job_uid = m.job_uid;
    fresh.job_namespace = m.job_namespace;
    fresh.job_name = m.job_name;
    return fresh;
}

bool only_what_the_job_shows(const gates::GateMemory& now, const gates::GateMemory& saved) {
    // No annotations yet: the Job holds what a first pass starts from.
    const gates::GateMemory base = saved.job_uid.empty() ? fresh_memory(now) : saved;
    gates::GateMemory rest = now;
    rest.ended = base.ended;
    rest.completed = base.completed;
    rest.failure_recorded = base.failure_recorded;
    return rest == base;
}

bool cached_pass_stands(const gates::Verdict& v, bool job, const gates::GateMemory& memory,
                        const std::optional<LastPass>& last) {
    const bool kept =
        v.memory == memory || (memory.job_uid.empty() && v.memory == fresh_memory(v.memory));
    // A state of its own would be reported from a Job and pods the two caches may show
    // at different moments: a pod counted by neither (its finalizer gone, the Job's
    // status not yet counting it) reads as "running" between two retries.
    const bool same = last ? v.counts == last->counts && v.state == last->state
                           : v.counts.attempt == 0 && v.counts.restarts == 0 &&
                                 v.counts.failed_pods == 0 && v.state == gates::State::running;
    return job && kept && same && !v.event && v.runs.empty() &&
           v.state != gates::State::succeeded && v.state != gates::State::failed;
}

bool memory_kept_by_pods(const gates::Job& job, gates::State state) {
    return job.restart_policy == "Never" && !gates::managed_elsewhere(job) &&
           state != gates::State::failed && state != gates::State::succeeded;
}

bool job_write_expected(const json& job, const std::vector<json>& pods,
                        std::uint64_t job_progress) {
    const json spec = job.value("spec", json::object());
    if (auto managed = spec.find("managedBy");
        managed != spec.end() && managed->is_string() &&
        managed->get<std::string>() != "kubernetes.io/job-controller") {
        return false;
    }
    bool changed = false;  // a pod changed after the Job's revision
    bool ended = false;    // ... and it ended
    long long ready = 0;   // the pods status.ready counts: active, Ready=True
    for (const json& pod : pods) {
        const json status = pod.value("status", json::object());
        const json meta = pod.value("metadata", json::object());
        if (!status.is_object() || !meta.is_object()) {
            continue;
        }
        const std::string phase = status.value("phase", "");
        auto version = kube::resource_version_number(meta.value("resourceVersion", ""));
        const bool newer = version && *version > job_progress;
        changed = changed || newer;
        const bool terminal = phase == "Failed" || phase == "Succeeded";
        ended = ended || (newer && terminal);
        if (terminal || meta.contains("deletionTimestamp")) {
            continue;
        }
        for (const auto& c : status.value("conditions", json::array())) {
            if (c.is_object() && c.value("type", "") == "Ready" &&
                c.value("status", "") == "True") {
                ++ready;
            }
        }
    }
    const json job_status = job.value("status", json::object());
    const json* counted =
        job_status.is_object() && job_status.contains("ready") ? &job_status["ready"] : nullptr;
    const bool ready_differs =
        counted != nullptr && counted->is_number_integer() && counted->get<long long>() != ready;
    return ended || (changed && ready_differs);
}

bool pod_failed_after(const std::vector<json>& pods, std::uint64_t job_progress) {
    return std::any_of(pods.begin(), pods.end(), [&](const json& pod) {
        const json status = pod.value("status", json::object());
        const json meta = pod.value("metadata", json::object());
        if (!status.is_object() || !meta.is_object() || status.value("phase", "") != "Failed" ||
            meta.contains("deletionTimestamp")) {
            return false;
        }
        auto version = kube::resource_version_number(meta.value("resourceVersion", ""));
        return version && *version > job_progress;
    });
}

namespace {

// A verdict's message without the command it ends with, if it does.
std::string_view words_of(const VerdictChange& change) {
    std::string_view message = change.message;
    if (change.command && message.ends_with(*change.command)) {
        message.remove_suffix(change.command->size());
    }
    return message;
}

}  // namespace

// `words` without how long a suspension lasted so far ("is suspended for 3s (" keeps
// "is suspended ("): the same suspension says the same a second later.
std::string without_duration(std::string_view words) {
    constexpr std::string_view k_for = " is suspended for ";
    const std::size_t at = words.find(k_for);
    const std::size_t end = at == std::string_view::npos ? at : words.find(" (", at);
    if (end == std::string_view::npos) {
        return std::string(words);
    }
    return std::string(words.substr(0, at + k_for.size() - 4)) + std::string(words.substr(end));
}

bool says_the_same(const VerdictChange& last, const VerdictChange& next) {
    return last.state == next.state && last.reason == next.reason &&
           without_duration(words_of(last)) == without_duration(words_of(next));
}

}  // namespace envgate
