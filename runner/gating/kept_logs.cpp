#include "runner/gating/kept_logs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "gates/counting.h"
#include "gates/decode_json.h"
#include "gates/failures.h"
#include "gates/restarts.h"
#include "gates/runs.h"
#include "runner/base/secrets.h"

namespace envgate {
namespace {

// The first byte at or after `at` that does not continue a UTF-8 sequence.
std::size_t utf8_start(std::string_view text, std::size_t at) {
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) {
        ++at;
    }
    return at;
}

}  // namespace

std::string log_tail(std::string_view text, int max_lines, std::size_t max_bytes) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    std::size_t start = 0;
    int lines = 0;
    for (std::size_t at = text.size(); at > 0; --at) {
        if (text[at - 1] == '\n' && ++lines == max_lines) {
            start = at;
            break;
        }
    }
    if (text.size() - start > max_bytes) {
        std::size_t cut = text.size() - max_bytes;
        std::size_t line = text.find('\n', cut);
        start = line != std::string_view::npos ? line + 1 : utf8_start(text, cut);
    }
    return std::string(text.substr(start));
}

namespace {

// The failed run as `pods` show it, without its log: which run of which container, and
// the command that reads its log (`which`: the previous or the current run).
FailedRun describe_failed_run(const JobIdentity& job, const std::vector<gates::Pod>& pods,
                              const gates::Failure& failure, const gates::Counts& counts,
                              gates::Run& which) {
    FailedRun run;
    run.attempt = counts.attempt;
    run.limit = counts.limit;
    run.at = failure.at;
    run.pod = failure.pod;
    run.container = failure.container.value_or("");
    run.reason = failure.reason;
    run.exit_code = failure.exit_code;
    run.description = mask_secrets(gates::describe_failure(failure));
    std::vector<const gates::Pod*> seen;
    for (const auto& pod : pods) {
        seen.push_back(&pod);
    }
    which = failure.container && failure.kind == gates::FailureKind::restart
                ? gates::run_of(seen, failure)
                : gates::Run::current;
    run.container_run = gates::container_run(pods, failure, which);
    // Named by pod, and only while it shows this run (gates::run_logs_command).
    run.log_command = gates::run_logs_command(job.namespace_, seen, failure).value_or("");
    return run;
}

// The pod of `run` as the API shows it now, decoded; nullopt when it cannot be read.
std::optional<gates::Pod> pod_now(kube::KubeApi& api, const JobIdentity& job,
                                  const FailedRun& run) {
    auto got = api.get(kube::pods(job.namespace_, run.pod));
    if (!got.is_ok()) {
        return std::nullopt;
    }
    auto pod = gates::decode_pod_json(*got, "pod");
    if (!pod.is_ok()) {
        return std::nullopt;
    }
    return std::move(pod).value();
}

// Which `kubectl logs` of its container shows `run` now, per the API (nullopt: none).
std::optional<gates::Run> shown_by(kube::KubeApi& api, const JobIdentity& job,
                                   const FailedRun& run) {
    auto pod = pod_now(api, job, run);
    if (!pod || pod->deletion_timestamp) {
        return std::nullopt;
    }
    for (const auto* list : {&pod->containers, &pod->init_containers}) {
        for (const auto& c : *list) {
            if (c.name == run.container) {
                return gates::shows_run(c, run.container_run);
            }
        }
    }
    return std::nullopt;
}

// Whether the container of `run`'s pod has not been restarted since the snapshot that
// showed `run` as its current, terminated run, now that its log was read: restart counts
// only rise, so a read before this check read that run. (The kubelet serves logs by its
// own status, which it writes to the API at once: a restart between the two is seen
// here, bar that write's own delay.) A pod that cannot be read is taken as unchanged.
bool still_current(kube::KubeApi& api, const JobIdentity& job, const FailedRun& run) {
    auto pod = pod_now(api, job, run);
    if (!pod) {
        return true;
    }
    for (const auto* list : {&pod->containers, &pod->init_containers}) {
        for (const auto& c : *list) {
            if (c.name == run.container) {
                return c.restart_count < run.container_run;
            }
        }
    }
    return true;
}

// Reads the tail of `run`'s log into it (a log that cannot be read is noted).
void read_failed_run_log(kube::KubeApi& api, const JobIdentity& job, const gates::Failure& failure,
                         gates::Run which, FailedRun& run) {
    kube::LogOptions options{run.container, which == gates::Run::previous, k_kept_lines};
    auto text = api.logs(kube::pods(job.namespace_, failure.pod), options);
    if (!text.is_ok() && text.status().code() == Code::not_found) {
        // `kubectl logs` finds nothing either now; the pod's events outlive it.
        run.log_command = gates::events_command(job.namespace_, failure.pod);
        run.log_note = mask_secrets(
            "its log is gone: the pod was deleted before the gate "
            "could read it (" +
            text.status().message() + ")");
        return;
    }
    if (!text.is_ok()) {
        run.log_note = mask_secrets("its log could not be read: " + text.status().message());
        return;
    }
    run.log_tail = mask_secrets(log_tail(*text));
    if (which == gates::Run::current && failure.kind == gates::FailureKind::restart &&
        !still_current(api, job, run)) {
        // The kubelet restarted the container meanwhile: the log read may be the next
        // run's. The failed run is now the one --previous shows, if nothing else failed.
        run.log_tail.clear();
        run.log_command.clear();
        text =
            api.logs(kube::pods(job.namespace_, failure.pod), {run.container, true, k_kept_lines});
        if (auto shown = shown_by(api, job, run); text.is_ok() && shown == gates::Run::previous) {
            run.log_tail = mask_secrets(log_tail(*text));
            run.log_command = gates::pod_logs_command(job.namespace_, run.pod, run.container,
                                                      gates::Run::previous);
        } else {
            run.log_note =
                "its log could not be read: later runs of its container replaced it first";
            return;
        }
    }
    run.log_note = run.log_tail.empty()
                       ? std::string("its log is empty")
                       : fmt::format(
                             "the last lines of its log (at most {} lines, {} KB), read "
                             "when the gate saw the failure",
                             k_kept_lines, k_kept_bytes / 1024);
}

// A kept run without a command says why none shows it (reports name only commands that
// work): its pod is gone or being deleted, or its container was killed or ran again.
void note_no_command(FailedRun& run, const std::vector<gates::Pod>& pods) {
    if (!run.log_command.empty() || run.log_note.find(" is gone") != std::string::npos ||
        run.log_note.find("no longer shows it") != std::string::npos) {
        return;
    }
    const bool live = std::any_of(pods.begin(), pods.end(), [&](const gates::Pod& p) {
        return p.name == run.pod && !p.deletion_timestamp;
    });
    run.log_note += live ? "; kubectl logs does not show it: its container was killed, or ran "
                           "again since"
                         : "; kubectl logs no longer shows it: pod " + run.pod + " is gone";
}

// Whether run `number` of `c` is its current, terminated run in a pod that goes on: the
// kubelet restarts it next (the first time at once) and serves its log by its own
// state, which the API shows a moment later, so a read now may return the next run's
// log as this one's. It is read once the pod shows the restart (--previous keeps it
// while the next run runs), or stops.
bool restarts_next(const gates::Pod& pod, const gates::ContainerStatus& c, int number) {
    return c.state.terminated && gates::shows_run(c, number) == gates::Run::current &&
           !pod.deletion_timestamp && pod.phase != "Failed" && pod.phase != "Succeeded";
}

// The read of run `key` that `early` holds, if any.
const EarlyRead* early_read_of(const EarlyReads* early, const std::string& key) {
    if (early == nullptr) {
        return nullptr;
    }
    auto it = early->find(key);
    return it == early->end() ? nullptr : &it->second;
}

}  // namespace

FailedRun keep_failed_run(kube::KubeApi& api, const JobIdentity& job,
                          const std::vector<gates::Pod>& pods, const gates::Failure& failure,
                          const gates::Counts& counts) {
    gates::Run which = gates::Run::current;
    FailedRun run = describe_failed_run(job, pods, failure, counts, which);
    read_failed_run_log(api, job, failure, which, run);
    note_no_command(run, pods);
    return run;
}

void refresh_log_commands(const JobIdentity& job, const std::vector<gates::Pod>& pods,
                          StepReport& step) {
    for (FailedRun& run : step.failed_runs) {
        if (run.log_command.empty() || run.container.empty() ||
            run.log_command.find(" logs pod/") == std::string::npos) {
            continue;
        }
        const gates::Pod* pod = nullptr;
        for (const auto& p : pods) {
            if (p.name == run.pod) {
                pod = &p;
            }
        }
        std::optional<gates::Run> which;
        if (pod != nullptr && !pod->deletion_timestamp) {
            for (const auto* list : {&pod->containers, &pod->init_containers}) {
                for (const auto& c : *list) {
                    if (c.name == run.container) {
                        which = run.container_run == 0 ? std::optional(gates::Run::current)
                                                       : gates::shows_run(c, run.container_run);
                    }
                }
            }
        }
        // A finished pod's node keeps the log of each container's last run only (the
        // kubelet's container garbage collection: one exited container per name), so
        // `--previous` stops working once the last run has exited too.
        bool finished = pod != nullptr && (pod->phase == "Succeeded" || pod->phase == "Failed");
        if (which && !(finished && *which == gates::Run::previous)) {
            run.log_command =
                gates::pod_logs_command(job.namespace_, run.pod, run.container, *which);
            continue;
        }
        run.log_command.clear();
        if (which) {
            run.log_note += "; kubectl logs no longer shows it once pod " + run.pod +
                            " finished: its node keeps only the last run's log";
            continue;
        }
        run.log_note += pod == nullptr || pod->deletion_timestamp
                            ? "; kubectl logs no longer shows it: pod " + run.pod + " is gone"
                            : "; kubectl logs no longer shows it: later runs of container " +
                                  run.container + " replaced it";
    }
}

void keep_listed(JobLog& log, FailedRun run, StepReport& step) {
    if (std::any_of(step.failed_runs.begin(), step.failed_runs.end(),
                    [&](const FailedRun& kept) { return kept.key == run.key; })) {
        return;  // listed already
    }
    run.run = static_cast<int>(step.failed_runs.size()) + 1;
    std::string where =
        run.pod.empty() ? std::string("a pod no pass listed")
                        : fmt::format("pod {}{}", run.pod,
                                      run.container.empty() ? "" : ", container " + run.container);
    std::string section = fmt::format("{}-failed-run-{}", step.name, run.run);
    if (run.log_tail.empty()) {
        log.line(Tone::plain, fmt::format("failed run {} ({}): {}", run.run, where, run.log_note));
    } else {
        log.section_start(
            section, fmt::format("log of failed run {} ({}): {}", run.run, where, run.log_note),
            true);
        log.line(Tone::plain, "    " + run.log_tail);
        log.section_end(section);
    }
    step.failed_runs.push_back(std::move(run));
}

void read_ended_runs(kube::KubeApi& api, const JobIdentity& job,
                     const std::vector<gates::Pod>& pods, EarlyReads& reads) {
    for (const gates::Pod& pod : pods) {
        for (const auto* list : {&pod.init_containers, &pod.containers}) {
            for (const gates::ContainerStatus& c : *list) {
                auto shown = gates::shown_failed_run(pod, c);
                if (!shown) {
                    continue;
                }
                std::string key = gates::run_key(pod, c) + "/" + std::to_string(shown->number);
                if (reads.count(key) != 0 || restarts_next(pod, c, shown->number)) {
                    continue;
                }
                gates::Run which = gates::Run::current;
                FailedRun run = describe_failed_run(job, pods, shown->failure, {}, which);
                run.container_run = shown->number;
                const std::string named = run.log_command;
                read_failed_run_log(api, job, shown->failure, which, run);
                reads.emplace(std::move(key),
                              EarlyRead{std::move(run.log_tail), std::move(run.log_note),
                                        run.log_command == named
                                            ? std::nullopt
                                            : std::optional(std::move(run.log_command))});
            }
        }
    }
}

void keep_run(kube::KubeApi& api, JobLog& log, const JobIdentity& job,
              const std::vector<gates::Pod>& pods, const gates::SeenRun& seen, StepReport& step,
              const EarlyReads* early) {
    if (std::any_of(step.failed_runs.begin(), step.failed_runs.end(),
                    [&](const FailedRun& kept) { return kept.key == seen.key; })) {
        return;  // listed already (a rerun lists the runs still visible first)
    }
    gates::Run which = gates::Run::current;
    FailedRun run = describe_failed_run(job, pods, seen.failure, seen.counts, which);
    run.key = seen.key;
    run.counted = seen.counted;
    run.ignored_why = seen.ignored_why;
    run.container_run = seen.number;
    if (!seen.counted) {
        run.description += " (not counted: " + seen.ignored_why + ")";
    }
    if (!seen.seen_end) {
        run.description = seen.message;
        run.log_command.clear();
        run.log_note = seen.number > 0
                           ? "its end was not seen: its container ran again before the gate looked"
                           : "its pod was gone before the gate listed it";
    } else if (const EarlyRead* read = early_read_of(early, seen.key); read != nullptr) {
        run.log_tail = read->tail;
        run.log_note = read->note;
        if (read->command) {
            run.log_command = *read->command;
        }
        note_no_command(run, pods);
    } else if (run.container_run >= 0 && !run.pod.empty()) {
        read_failed_run_log(api, job, seen.failure, which, run);
        note_no_command(run, pods);
    }
    keep_listed(log, std::move(run), step);
}

}  // namespace envgate
