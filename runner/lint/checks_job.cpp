// The migration-job-* family: hygiene of the Jobs (and CronJobs) that run a
// migration, where retry, parallelism and clean-up rules decide what a failed DDL
// costs and whether anyone can still read why it failed.
#include <fmt/format.h>

#include "runner/lint/check.h"
#include "runner/lint/checks.h"
#include "runner/lint/sites.h"

namespace envgate::lint {
namespace {

const Location& where(const Workload& w) {
    return w.job_spec.pos.line > 0 ? w.job_spec : w.loc;
}

void run_backoff(const Workload& w, const Objects& all, const LintSettings& s, Emitter& out) {
    if (!is_migration_job(w, all)) {
        return;
    }
    if (!w.backoff_limit.value) {
        out.report(where(w),
                   "backoffLimit is not set: Kubernetes retries a failed migration up to 6 "
                   "times, re-running half-applied DDL each time",
                   "backoffLimit");
    } else if (*w.backoff_limit.value > s.max_backoff_limit) {
        out.report(w.backoff_limit.loc,
                   fmt::format("backoffLimit {} retries a failed migration {} times (the limit "
                               "is {})",
                               *w.backoff_limit.value, *w.backoff_limit.value, s.max_backoff_limit),
                   "backoffLimit");
    }
}

void run_parallel(const Workload& w, const Objects& all, const LintSettings&, Emitter& out) {
    if (!is_migration_job(w, all)) {
        return;
    }
    for (const auto& [field, name] :
         {std::pair{&w.parallelism, "parallelism"}, std::pair{&w.completions, "completions"}}) {
        if (field->value && *field->value > 1) {
            out.report(field->loc,
                       fmt::format("{} {}: that many pods run the migration, racing each other "
                                   "for the same DDL",
                                   name, *field->value),
                       name);
        }
    }
    if (w.kind == WorkloadKind::cron_job &&
        (!w.concurrency_policy || w.concurrency_policy->value == "Allow")) {
        out.report(w.concurrency_policy ? w.concurrency_policy->loc : w.object_spec,
                   "concurrencyPolicy Allow (the default): a run that overruns its schedule "
                   "overlaps the next, two migrations at once; set Forbid",
                   "concurrencyPolicy");
    }
}

void run_deadline(const Workload& w, const Objects& all, const LintSettings&, Emitter& out) {
    if (is_migration_job(w, all) && !w.active_deadline.value) {
        out.report(where(w),
                   "no activeDeadlineSeconds: a migration stuck on a lock runs (and holds the "
                   "release) until someone notices",
                   "activeDeadlineSeconds");
    }
}

void run_evidence(const Workload& w, const Objects& all, const LintSettings& s, Emitter& out) {
    if (!is_migration_job(w, all)) {
        return;
    }
    if (auto ttl = w.ttl_after_finished.value; ttl && *ttl < s.min_evidence_ttl_seconds) {
        out.report(w.ttl_after_finished.loc,
                   fmt::format("ttlSecondsAfterFinished {} deletes the Job and its pods' logs "
                               "{} seconds after a failure, likely before anyone reads them",
                               *ttl, *ttl),
                   "ttlSecondsAfterFinished");
    }
    for (const char* key :
         {"helm.sh/hook-delete-policy", "argocd.argoproj.io/hook-delete-policy"}) {
        auto it = w.annotations.find(key);
        if (it != w.annotations.end() &&
            (it->second.value.find("hook-failed") != std::string::npos ||
             it->second.value.find("HookFailed") != std::string::npos)) {
            out.report(it->second.loc,
                       fmt::format("{}: {} deletes a failed migration Job, and the evidence of "
                                   "why it failed, right away",
                                   key, it->second.value),
                       key);
        }
    }
}

void run_pod_failure_policy(const Workload& w, const Objects& all, const LintSettings&,
                            Emitter& out) {
    if (is_migration_job(w, all) && !w.pod_failure_policy) {
        out.report(where(w),
                   "no podFailurePolicy: a node drain, eviction or preemption counts as a "
                   "failed migration attempt and burns a retry",
                   "podFailurePolicy");
    }
}

}  // namespace

const Check k_migration_job_backoff_limit = {
    "migration-job-backoff-limit",
    Severity::warning,
    false,
    "A migration Job retries a failed migration too often (backoffLimit unset, so 6, or high)",
    "A DDL that failed half-way is rarely fixed by running it again six times; each retry "
    "takes locks again and may leave the schema in a new state",
    "Set backoffLimit to what the migration can safely repeat (0 to 2 for most); envgate's "
    "gate counts every failed pod exactly once against it",
    "For Jobs and CronJobs that run a migration (found by their command or by a name "
    "containing `migrat`): `backoffLimit` absent (Kubernetes defaults to 6) or above "
    "`lint.thresholds.backoff_limit` (default 3).\n\n"
    "A Job is the right home for a migration: it is a run-to-completion workload with one "
    "lifecycle, its own logs, explicit retry semantics and a clear moment of completion. The "
    "retry semantics are only explicit if someone chose them.",
    run_backoff,
};

const Check k_migration_job_parallel = {
    "migration-job-parallel",
    Severity::error,
    false,
    "A migration Job runs more than one pod at a time (parallelism or completions above 1, "
    "a CronJob allowing overlapping runs)",
    "The point of a migration Job is that exactly one process changes the schema; several "
    "bring back the race the Job was meant to remove",
    "Leave parallelism and completions at 1; give a migration CronJob concurrencyPolicy: "
    "Forbid",
    "For Jobs and CronJobs that run a migration: `parallelism` or `completions` above 1, or a "
    "CronJob whose `concurrencyPolicy` is `Allow` (its default).\n\n"
    "A release step that changes the schema must be one step: one process, its own logs and "
    "a clear end. Two pods of the same migration use the database as a distributed lock "
    "manager without saying so, just as replicas migrating at start-up do.",
    run_parallel,
};

const Check k_migration_job_no_deadline = {
    "migration-job-no-deadline",
    Severity::warning,
    false,
    "A migration Job has no activeDeadlineSeconds",
    "A migration waiting on a lock never fails by itself; without a deadline the release "
    "waits as long as the lock does",
    "Set activeDeadlineSeconds to the longest the migration may take; envgate's gate also "
    "takes a --timeout",
    "For Jobs and CronJobs that run a migration: `activeDeadlineSeconds` absent.\n\n"
    "Schema migrations lock, wait and re-check. A Job with a deadline turns \"the release is "
    "stuck\" into a failure with a reason (`DeadlineExceeded`) that the gate reports and the "
    "on-call can act on.",
    run_deadline,
};

const Check k_migration_job_evidence_deleted = {
    "migration-job-evidence-deleted",
    Severity::warning,
    false,
    "A migration Job is deleted soon after it fails (ttlSecondsAfterFinished, a Helm or Argo "
    "CD hook-delete-policy on failure)",
    "When the Job and its pods are gone, so are the logs that say why the migration failed, "
    "usually before the person paged at 3 a.m. looks",
    "Keep failed migration Jobs: drop hook-failed from the delete policy (before-hook-creation "
    "cleans up on the next run) and keep ttlSecondsAfterFinished at a day or more",
    "For Jobs and CronJobs that run a migration: `ttlSecondsAfterFinished` below "
    "`lint.thresholds.evidence_ttl` (default 24h), or a `helm.sh/hook-delete-policy` / "
    "`argocd.argoproj.io/hook-delete-policy` that deletes failed hooks (`hook-failed`, "
    "`HookFailed`).\n\n"
    "A migration Job's own lifecycle and its own logs are what make it better than a "
    "migration hidden in start-up; deleting it on failure throws that away.",
    run_evidence,
};

const Check k_migration_job_no_pod_failure_policy = {
    "migration-job-no-pod-failure-policy",
    Severity::info,
    false,
    "A migration Job has no podFailurePolicy",
    "Without one, a pod lost to a node drain, eviction or preemption counts against "
    "backoffLimit as if the migration had failed",
    "Add a podFailurePolicy that ignores DisruptionTarget conditions (and fails the Job at "
    "once on a known fatal exit code); it needs restartPolicy: Never",
    "For Jobs and CronJobs that run a migration: no `podFailurePolicy` (batch/v1, stable "
    "since Kubernetes 1.31).\n\n"
    "Retries should be spent on the migration, not on the cluster's housekeeping. With "
    "`action: Ignore` for `DisruptionTarget`, an evicted pod is replaced without using up a "
    "retry, which matters most when backoffLimit is kept low as it should be.",
    run_pod_failure_policy,
};

}  // namespace envgate::lint
