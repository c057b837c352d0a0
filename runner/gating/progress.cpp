#include "runner/gating/progress.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gates/restarts.h"

namespace envgate {
namespace {

// "pod P Pending (ImagePullBackOff), 2 restarts".
std::string pod_text(const gates::Pod& pod) {
    std::string out = "pod " + pod.name + " " + (pod.phase.empty() ? "Unknown" : pod.phase);
    const long long restarts = gates::pod_restarts(pod);
    std::vector<std::string> waiting;
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
        for (const gates::ContainerStatus& c : *list) {
            if (c.state.waiting && !c.state.waiting->reason.empty()) {
                waiting.push_back(c.state.waiting->reason);
            }
        }
    }
    for (const gates::Condition& c : pod.conditions) {
        if (c.type == "PodScheduled" && c.status == "False" && !c.reason.empty()) {
            waiting.push_back(c.reason);
        }
    }
    if (!waiting.empty()) {
        out += " (" + fmt::format("{}", fmt::join(waiting, ", ")) + ")";
    }
    if (restarts > 0) {
        out += fmt::format(", {} restart{}", restarts, restarts == 1 ? "" : "s");
    }
    return out;
}

// "8m30s left before WHAT", or "WHAT passed".
std::string left_text(Duration left, const std::string& what) {
    return left > Duration::zero() ? format_duration(left) + " left before " + what
                                   : what + " passed";
}

}  // namespace

std::string progress_line(const std::string& gate, const std::optional<gates::Job>& job,
                          const std::vector<gates::Pod>& pods, TimePoint started, TimePoint now,
                          TimePoint gate_deadline) {
    std::vector<std::string> parts;
    for (const auto& pod : pods) {
        parts.push_back(pod_text(pod));
    }
    if (parts.empty()) {
        parts.push_back(job ? "no pod yet" : "the Job is gone");
    }
    if (job && job->active_deadline_seconds && job->start_time) {
        TimePoint end = *job->start_time + std::chrono::seconds(*job->active_deadline_seconds);
        parts.push_back(left_text(
            end - now,
            "activeDeadlineSeconds (" + std::to_string(*job->active_deadline_seconds) + "s)"));
    }
    parts.push_back(left_text(gate_deadline - now, "the gate's timeout"));
    return fmt::format("{}: still running after {}: {}", gate, format_duration(now - started),
                       fmt::join(parts, "; "));
}

ProgressReporter::ProgressReporter(JobLog& log, Duration every, TimePoint started,
                                   TimePoint gate_deadline)
    : m_log(log), m_every(every), m_started(started), m_deadline(gate_deadline), m_last(started) {}

void ProgressReporter::after_pass(TimePoint now, bool spoke, const std::string& gate,
                                  const std::optional<gates::Job>& job,
                                  const std::vector<gates::Pod>& pods) {
    if (spoke) {
        m_last = now;
        return;
    }
    if (now < next()) {
        return;
    }
    m_log.line(Tone::plain, progress_line(gate, job, pods, m_started, now, m_deadline));
    m_last = now;
}

}  // namespace envgate
