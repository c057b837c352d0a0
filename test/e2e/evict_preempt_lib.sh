# shellcheck shell=bash
# Sourced after lib.sh by gate_e2e.sh (kubesim, the control plane's node agent) and
# test/node/gate_node.sh (the real kubelet and kube-scheduler): the evict_preempt
# scenario's body, one for every cluster; only how a pod is evicted and how it is
# preempted differ. The caller defines gate_on_running_pod (sets JOB and POD).

# replacement_pod NS JOB OLD: a running pod of the Job other than OLD.
replacement_pod() {
    pods_of "$1" "$2" | jq -er --arg old "$3" '[.items[] | select(.status.phase == "Running"
        and .metadata.deletionTimestamp == null and .metadata.name != $old)][0].metadata.name'
}

# evict_then_preempt MANIFEST EVICT PREEMPT EVICTED: restartPolicy Never, backoffLimit 1
# (MANIFEST's Job): a background gate; `EVICT NS/POD` evicts its running pod, whose retry
# must name the eviction (EVICTED, an ERE); `PREEMPT NS/POD` preempts the replacement,
# past the limit. Checks exit code 1, the last failure named as the preemption, the
# gate's events, the reports and the printed next commands. Sets JOB.
evict_then_preempt() {
    local manifest=$1 evict=$2 preempt=$3 evicted=$4
    gate_on_running_pod "$manifest"
    local job=$JOB pod=$POD
    "$evict" "$NS/$pod"
    wait_for 30 "the eviction retry" grep -q "retrying (RetryingPreMigrations)" "$T/gate.log"
    wait_for 30 "a replacement pod" replacement_pod "$NS" "$job" "$pod"
    pod=$(replacement_pod "$NS" "$job" "$pod")
    "$preempt" "$NS/$pod"
    wait_exit "$GATE_PID" 60
    expect_rc 1 "a preempted pod past the limit"
    log_has "$T/gate.log" "pod 1 of 2 failed, 1 left"
    grep -E "^pre-migrations: retrying.*$evicted" "$T/gate.log" >/dev/null ||
        fail "the retry does not name the eviction"
    grep -E "^pre-migrations: failed \(MigrationsJobFailed\).*Last failure: .*PreemptionByScheduler" "$T/gate.log" >/dev/null ||
        fail "the last failure is not the preemption"
    gate_events "$NS" "$job" | cut -f1 | sort | uniq -c | sed 's/^ *//' >"$T/events.log"
    # The eviction records one retry event; the preemption records one more only when a
    # pass saw it before the Job's FailureTarget (the count rose), else just the failure.
    grep -qxE "[12] MigrationsRetrying" "$T/events.log" || fail "want one or two MigrationsRetrying events"
    grep -qx "1 MigrationsFailed" "$T/events.log" || fail "want one MigrationsFailed event"
    check_reports "$T/rep" e1 failed MigrationsJobFailed
    check_failure_golden preempt_past_limit "$T/gate.log" "$T/rep" '^pre-migrations: retrying .*pod 1 of 2 failed'
    # describe job: the gate's events on the Job name the preemption.
    run_next "$T/gate.log" 'PreemptionByScheduler'
}
