#include "gates/evaluate.h"

#include <algorithm>
#include <limits>

#include "gates/counting.h"
#include "gates/failures.h"
#include "gates/memory.h"
#include "gates/messages.h"
#include "gates/runs.h"
#include "runner/base/vocab/enum_names.h"

namespace envgate::gates {
namespace {

using namespace std::string_view_literals;

bool same_failure(const Failure& a, const Failure& b) {
    Failure x = a;
    x.at = b.at;
    return x == b;
}

// Merges this snapshot's counts into `mem`.
void remember_counts(GateMemory& mem, Attempts& a, int failed_pods, int restarts) {
    int observed = failed_pods;
    for (const auto& [key, runs] : a.failed_runs) {
        observed = sat_add(observed, runs);
    }
    mem.failed_runs = std::move(a.failed_runs);
    mem.failed_pods = failed_pods;
    mem.restarts = std::max(mem.restarts, restarts);
    mem.observed_failures = std::max(mem.observed_failures, observed);
}

// True when `newest` is a later run of the container whose failed run `last` was, in the
// same second: a crash-looping container shows one failed run at a time, and it only
// moves forward, so under the same key a different exit code or a different message is
// the next run. (A message missing from a snapshot is not a new run.)
bool later_run(const Failure& newest, const Failure& last) {
    return newest.kind == FailureKind::restart && failure_key(newest) == failure_key(last) &&
           (newest.exit_code != last.exit_code ||
            (!newest.message.empty() && newest.message != last.message));
}

void remember_failure(GateMemory& mem, const std::optional<Failure>& newest) {
    if (!newest) {
        return;
    }
    const std::optional<Failure>& last = mem.last_failure;
    std::string key = failure_key(*newest);
    auto seen = std::lower_bound(mem.failures_seen.begin(), mem.failures_seen.end(), key);
    bool fresh =
        (seen == mem.failures_seen.end() || *seen != key) && !(last && failure_key(*last) == key);
    if (seen == mem.failures_seen.end() || *seen != key) {
        mem.failures_seen.insert(seen, key);
    }
    if (!last || (!same_failure(*newest, *last) &&
                  (newest->at > last->at ||
                   (newest->at == last->at && (fresh || later_run(*newest, *last)))))) {
        mem.last_failure = newest;
    }
}

Counts make_counts(const Attempts& a, int restarts, int failed_pods,
                   const std::optional<Failure>& last, bool with_index = true) {
    Counts c;
    c.restarts = restarts;
    c.restart_limit = a.restart_limit;
    c.failed_pods = failed_pods;
    c.failed_pod_limit = a.failed_pod_limit;
    int restart_left = std::max(0, c.restart_limit - restarts);
    int pod_left = std::max(0, c.failed_pod_limit - failed_pods);
    bool use_restarts = a.restarts_apply;
    if (use_restarts && restart_left != pod_left) {
        use_restarts = restart_left < pod_left;
    } else if (use_restarts) {
        use_restarts = !(last && last->kind == FailureKind::pod);
    }
    c.attempt = use_restarts ? restarts : failed_pods;
    c.limit = use_restarts ? c.restart_limit : c.failed_pod_limit;
    c.left = use_restarts ? restart_left : pod_left;
    c.nearer = use_restarts ? FailureKind::restart : FailureKind::pod;
    int index_left = std::max(0, a.index_limit - a.index_failures);
    if (with_index && a.index && index_left <= c.left) {
        c.index = a.index;
        c.attempt = a.index_failures;
        c.limit = a.index_limit;
        c.left = index_left;
        c.nearer = FailureKind::pod;
    }
    return c;
}

// The pod named `name` in `pods`, or nullptr.
const Pod* pod_named(const std::vector<const Pod*>& pods, const std::string& name) {
    for (const Pod* pod : pods) {
        if (pod->name == name) {
            return pod;
        }
    }
    return nullptr;
}

// backoffLimitPerIndex: the counts describe the index of the last failure when it names
// a pod of one, so that the line naming that pod counts its own index (another index may
// be as near its limit: the one nearest, the lowest on a tie, named another pod's).
void count_index_of(const Job& job, const std::vector<const Pod*>& pods,
                    const std::optional<Failure>& last, Attempts& a) {
    const Pod* pod = a.index && last ? pod_named(pods, last->pod) : nullptr;
    if (pod == nullptr || !pod->completion_index) {
        return;
    }
    if (int failures = index_failures(job, pods, *pod->completion_index); failures > 0) {
        a.index = pod->completion_index;
        a.index_failures = failures;
    }
}

// Each new run's counts: the pass's with the runs after it taken away, so that the
// lines count up one run at a time; a run of an index with its own limit
// (backoffLimitPerIndex) is counted against that index's.
void count_runs(const Job& job, const std::vector<const Pod*>& pods, const Attempts& a,
                Verdict& v) {
    int restarts = v.counts.restarts;
    int failed_pods = v.counts.failed_pods;
    bool newest = true;
    for (auto it = v.runs.rbegin(); it != v.runs.rend(); ++it) {
        SeenRun& run = *it;
        if (!run.counted) {
            continue;
        }
        const Pod* pod = pod_named(pods, run.failure.pod);
        if (run.number == 0 && pod != nullptr && pod->completion_index &&
            job.backoff_limit_per_index) {
            Counts c = v.counts;
            c.index = pod->completion_index;
            c.attempt = sat_add(pod->index_failure_count, 1);
            c.limit = sat_add(*job.backoff_limit_per_index, 1);
            c.left = std::max(0, c.limit - c.attempt);
            c.nearer = FailureKind::pod;
            run.counts = c;
        } else if (run.restarts_dropped > 0 && pod != nullptr &&
                   (pod->phase == "Running" || pod->phase == "Pending")) {
            // Its pod is stopping: its restarts count no more (the run's line says so).
            run.counts = make_counts(a, std::max(0, restarts - run.restarts_dropped), failed_pods,
                                     run.failure, false);
        } else {
            run.counts = newest && !v.counts.index
                             ? v.counts
                             : make_counts(a, restarts, failed_pods, run.failure, false);
        }
        newest = false;
        (run.number == 0 ? failed_pods : restarts) -= 1;
        restarts = std::max(restarts, 0);
        failed_pods = std::max(failed_pods, 0);
    }
}

// The Job controller's own test (pastActiveDeadline): once activeDeadlineSeconds have
// passed since status.startTime, it deletes the Job's pods and only then writes
// FailureTarget/DeadlineExceeded. A pod deleted in between is the deadline, not a retry.
bool past_active_deadline(const Job& job, TimePoint now) {
    return job.active_deadline_seconds && job.start_time &&
           now - *job.start_time >= std::chrono::seconds(*job.active_deadline_seconds);
}

Ending ending_of(const Job& job, const std::vector<const Pod*>& pods, const Attempts& a,
                 TimePoint now) {
    if (const Condition* c = true_condition(job, "Failed")) {
        return {State::failed, c->reason, c->message};
    }
    if (true_condition(job, "Complete") != nullptr ||
        true_condition(job, "SuccessCriteriaMet") != nullptr) {
        return {State::succeeded, "", ""};
    }
    if (const Condition* c = true_condition(job, "FailureTarget")) {
        return {State::failing, c->reason, c->message};
    }
    if (auto message = fail_job_message(job, pods)) {
        return {State::failing, "PodFailurePolicy", *message};
    }
    if (past_active_deadline(job, now)) {
        return {State::failing, "DeadlineExceeded",
                "Job was active longer than specified deadline"};
    }
    // The same order for the restart limit (pastBackoffLimitOnFailure): the controller
    // deletes the pod whose restarts reached it, then writes FailureTarget. A pass in
    // between sees a deleted pod whose restarts say why, not a retry.
    if (a.restarts_apply && a.deleted_restarts >= a.restart_limit) {
        return {State::failing, "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"};
    }
    // And for failed pods (exceedsBackoffLimit: the failed pods, those not yet counted
    // in status.failed included, past backoffLimit): the pod that reached the limit is
    // not retried, the controller fails the Job on its next sync. Not a retry either.
    if (a.failed_pod_limit < std::numeric_limits<int>::max() && !a.index &&
        !managed_elsewhere(job) && a.failed_pods >= a.failed_pod_limit) {
        return {State::failing, "BackoffLimitExceeded",
                "Job has reached the specified backoff limit"};
    }
    // And for failed indexes (backoffLimitPerIndex): the index that takes them past
    // maxFailedIndexes fails the Job on the controller's next sync, no retry.
    if (job.max_failed_indexes && failed_index_count(job, pods) > *job.max_failed_indexes) {
        return {State::failing, "MaxFailedIndexesExceeded",
                "Job has exceeded the specified maximal number of failed indexes"};
    }
    if (job.suspend) {
        const Condition* c = true_condition(job, "Suspended");
        return {State::suspended, c != nullptr ? c->reason : "JobSuspended",
                c != nullptr ? c->message : "spec.suspend is true"};
    }
    // Retrying while a failed run still counts against a limit. Once none does (the
    // crash-looping pod succeeded, or left with nothing counted), the Job just runs:
    // reporting "attempt 0" against remembered failures would read as a new retry.
    return {a.restarts + a.failed_pods > 0 ? State::retrying : State::running, "", ""};
}

void remember_tied(GateMemory& mem, std::vector<std::string>& tied) {
    for (auto& key : tied) {  // all failures of the newest second count as seen now
        auto at = std::lower_bound(mem.failures_seen.begin(), mem.failures_seen.end(), key);
        if (at == mem.failures_seen.end() || *at != key) {
            mem.failures_seen.insert(at, std::move(key));
        }
    }
}

Verdict evaluate_present(const Gate& gate, const Job& job, const std::vector<Pod>& pods,
                         const GateMemory& memory, TimePoint now) {
    Verdict v;
    v.memory = memory.job_uid.empty() || job.uid.empty() || memory.job_uid == job.uid
                   ? memory
                   : GateMemory{};
    v.memory.job_uid = job.uid;
    v.memory.job_namespace = job.namespace_;
    v.memory.job_name = job.name;
    // A Job another controller manages is counted from its status alone.
    Pass p{gate,
           job,
           managed_elsewhere(job) ? std::vector<const Pod*>{} : select_pods(job, pods),
           "Job " + job.namespace_ + "/" + job.name,
           {},
           now};
    Attempts a = count_attempts(job, p.pods, std::move(v.memory.failed_runs));
    p.ending = ending_of(job, p.pods, a, now);
    v.state = p.ending.state;
    bool ending = v.state == State::failing || v.state == State::failed;
    if (ending) {
        v.memory.ended = EndedBy{v.state == State::failed ? "Failed" : "FailureTarget",
                                 p.ending.reason, p.ending.message};
    }
    int failed_pods = std::max(a.failed_pods, v.memory.failed_pods);
    // Ending, the restarts that failed the Job are the most seen, or those of the pods
    // its failure stopped (a pass may see the pod only after it was deleted).
    int restarts =
        ending ? std::max({a.restarts, v.memory.restarts, a.deleted_restarts}) : a.restarts;
    if (v.state == State::succeeded) {
        // Its attempts are those it spent, also when no pass saw its pod run again.
        restarts = std::max(restarts, a.finished_restarts);
    }
    const int pods_before = v.memory.failed_pods;
    remember_counts(v.memory, a, failed_pods, restarts);
    v.runs = new_runs(job, p.pods, RunsBefore{a.rose, v.memory.pods_failed, pods_before},
                      v.memory.failed_runs, failed_pods, ending, now, v.memory.pods_failed);
    // The last failure is the newest counted run a pass saw end: one run, so that every
    // line names it alike. Without one so far (a gate re-attached to a Job whose failed
    // runs its memory already holds), the newest failure the pods show.
    bool named = false;
    for (auto it = v.runs.rbegin(); it != v.runs.rend() && !named; ++it) {
        if (it->counted && it->seen_end) {
            v.memory.last_failure = it->failure;
            named = true;
        }
    }
    if (!named && v.memory.last_failure && v.memory.last_failure->kind == FailureKind::pod) {
        // The same pod failure, its container's end told since (a pod Failed before
        // its container's status): the same run, said more fully.
        const Pod* pod = pod_named(p.pods, v.memory.last_failure->pod);
        if (pod != nullptr && is_pod_failed(job, *pod) && !v.memory.last_failure->exit_code) {
            Failure fuller = pod_failure_of(*pod, container_runs(job));
            if (fuller.exit_code && fuller.reason == v.memory.last_failure->reason) {
                v.memory.last_failure = fuller;
            }
        }
    }
    if (!named && !v.memory.last_failure) {
        std::vector<std::string> tied;
        remember_failure(v.memory, newest_failure(job, p.pods, now, v.memory.failures_seen, &tied));
        remember_tied(v.memory, tied);
    }
    count_index_of(job, p.pods, v.memory.last_failure, a);
    v.counts = make_counts(a, restarts, failed_pods, v.memory.last_failure);
    if (ending && p.ending.reason == "BackoffLimitExceeded"sv && !v.counts.index &&
        v.counts.left > 0) {
        // The controller reached a limit of which the gate saw fewer failures (a pod
        // came and went between two passes): the count is at least that limit.
        v.counts.attempt = v.counts.limit;
        v.counts.left = 0;
        (v.counts.nearer == FailureKind::restart ? v.counts.restarts : v.counts.failed_pods) =
            v.counts.limit;
    }
    // The count can fall (a finished pod is no longer listed): attempts are the highest.
    v.memory.attempts = std::max(v.memory.attempts, v.counts.attempt);
    count_runs(job, p.pods, a, v);
    explain(p, v);
    // What a later run of the gate lists of them once their pods are gone.
    remember_runs(v.memory, v.runs, p.pods);
    v.last_failure = v.memory.last_failure;
    return v;
}

Verdict evaluate_deleted(const Gate& gate, const GateMemory& memory) {
    Verdict v;
    v.memory = memory;
    v.counts.restarts = memory.restarts;
    v.counts.failed_pods = memory.failed_pods;
    v.counts.attempt = memory.attempts;
    v.last_failure = memory.last_failure;
    std::string ref = "Job " + memory.job_namespace + "/" + memory.job_name;
    if (memory.completed) {
        v.state = State::succeeded;
        v.phase = Phase::succeeded;
        v.progressing.reason = names(gate).complete_reason;
        v.progressing.message = ref + " completed and was deleted since";
        return v;
    }
    v.state = State::failed;
    v.phase = Phase::failed;
    if (memory.ended) {
        // Seen failing or failed, then deleted (ttlSecondsAfterFinished, a cleanup, a
        // person): still that failure. Its events outlive it for a while.
        v.command = events_command(memory.job_namespace, memory.job_name);
        v.progressing = {false, names(gate).failed_reason,
                         ref + " failed: " + memory.ended->reason + ": " + memory.ended->message +
                             ", and was deleted since. Last failure: " + last_failure_text(memory) +
                             ". Its events: " + *v.command +
                             ". A change to the Job spec reruns the gate with a new Job."};
    } else {
        // Who deleted it and when is in no object any more; the Job's events (its pods'
        // creations, deletions, failures) are what is left.
        v.command = events_command(memory.job_namespace, memory.job_name);
        v.progressing = {false, "JobDeleted",
                         ref + " was deleted before it completed (JobDeleted). Last failure: " +
                             last_failure_text(memory) + ". Its events: " + *v.command +
                             ". Rerunning the gate creates the Job again."};
    }
    if (!memory.failure_recorded) {
        v.event = Event{"Warning", names(gate).failed_event, v.progressing.message};
        v.memory.failure_recorded = true;
    }
    return v;
}

constexpr EnumName<Phase> k_phase_names[] = {
    {Phase::upgrading, "Upgrading"}, {Phase::failed, "Failed"}, {Phase::succeeded, "Succeeded"}};

constexpr EnumName<State> k_state_names[] = {
    {State::running, "running"}, {State::suspended, "suspended"}, {State::retrying, "retrying"},
    {State::failing, "failing"}, {State::failed, "failed"},       {State::succeeded, "succeeded"}};

}  // namespace

const char* phase_name(Phase phase) {
    return name_of(k_phase_names, phase, "Upgrading");
}

const char* state_name(State state) {
    return name_of(k_state_names, state, "running");
}

Verdict evaluate(const Gate& gate, const std::optional<Job>& job, const std::vector<Pod>& pods,
                 const GateMemory& memory, TimePoint now) {
    return job ? evaluate_present(gate, *job, pods, memory, now) : evaluate_deleted(gate, memory);
}

}  // namespace envgate::gates
