#include "gates/waiting.h"

#include <string_view>

namespace envgate::gates {

using namespace std::string_view_literals;

namespace {

void add_waiting_reasons(const Pod& pod, std::vector<std::string>& out) {
    if (pod.phase != "Pending"sv && pod.phase != "Running"sv) {
        return;
    }
    for (const Condition& c : pod.conditions) {
        if (c.type == "PodScheduled"sv && c.status == "False"sv) {
            // The scheduler's message ends with a full stop; the sentence goes on.
            std::string_view m = c.message;
            while (!m.empty() && m.back() == '.') {
                m.remove_suffix(1);
            }
            out.push_back("pod " + pod.name + " is not scheduled: " + c.reason +
                          (m.empty() ? "" : ": " + std::string(m)));
        }
    }
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
        for (const ContainerStatus& c : *list) {
            if (!c.state.waiting) {
                continue;
            }
            const std::string& r = c.state.waiting->reason;
            if (r.empty() || r == "CrashLoopBackOff"sv || r == "ContainerCreating"sv ||
                r == "PodInitializing"sv) {
                continue;
            }
            const std::string& m = c.state.waiting->message;
            out.push_back("pod " + pod.name + " container " + c.name + " is waiting: " + r +
                          (m.empty() ? "" : ": " + m));
        }
    }
}

}  // namespace

std::vector<std::string> waiting_reasons(const std::vector<const Pod*>& pods) {
    std::vector<std::string> out;
    for (const Pod* pod : pods) {
        add_waiting_reasons(*pod, out);
    }
    return out;
}

const Pod* first_waiting_pod(const std::vector<const Pod*>& pods) {
    for (const Pod* pod : pods) {
        std::vector<std::string> reasons;
        add_waiting_reasons(*pod, reasons);
        if (!reasons.empty()) {
            return pod;
        }
    }
    return nullptr;
}

}  // namespace envgate::gates
