#include "runner/gating/restart_wait.h"

#include <chrono>
#include <string>

#include "gates/decode_json.h"
#include "gates/failures.h"

namespace envgate {

using nlohmann::json;

std::vector<gates::Pod> newest_pods(ChangeWatch& watch) {
    std::vector<gates::Pod> out;
    for (const json& item : watch.view(1).objects) {
        auto pod = gates::decode_pod_json(item, "pod");
        if (pod.is_ok()) {
            out.push_back(std::move(pod).value());
        }
    }
    return out;
}

bool name_the_run_after_its_restart(ChangeWatch& watch, Clock& clock, gates::Verdict& v,
                                    const std::optional<gates::Job>& job,
                                    const std::function<int()>& pending_signal) {
    if (!job || job->restart_policy != "OnFailure" || v.state != gates::State::retrying ||
        !v.command || !v.last_failure || v.last_failure->kind != gates::FailureKind::restart ||
        v.command->find(" logs pod/") == std::string::npos || v.command->ends_with(" --previous")) {
        return false;
    }
    const auto real_until = std::chrono::steady_clock::now() + k_restart_bound;
    auto stop = [&] {
        return pending_signal() != 0 || std::chrono::steady_clock::now() >= real_until ? 1 : 0;
    };
    bool waited = false;
    while (stop() == 0) {
        std::vector<gates::Pod> pods = newest_pods(watch);
        std::vector<const gates::Pod*> listed;
        for (const auto& pod : pods) {
            listed.push_back(&pod);
        }
        auto now = gates::run_logs_command(v.memory.job_namespace, listed, *v.last_failure);
        if (!now || *now != *v.command) {
            std::vector<std::string*> texts{&v.progressing.message,
                                            v.event ? &v.event->message : nullptr};
            for (gates::SeenRun& run : v.runs) {
                if (run.command == v.command) {
                    texts.push_back(&run.message);
                    texts.push_back(run.event ? &run.event->message : nullptr);
                }
            }
            for (std::string* text : texts) {
                if (text != nullptr && now && text->ends_with(*v.command)) {
                    text->replace(text->size() - v.command->size(), v.command->size(), *now);
                }
            }
            for (gates::SeenRun& run : v.runs) {
                if (now && run.command == v.command) {
                    run.command = now;
                }
            }
            if (now) {
                v.command = std::move(now);
            }
            return waited;
        }
        waited = true;
        if (!watch.wait(clock.now() + k_restart_bound, stop)) {
            break;
        }
    }
    return waited;
}

}  // namespace envgate
