#!/usr/bin/env bash
# The gate scenarios of test/e2e/gate_e2e.sh on the real node (test/node/run.sh): the
# same manifests, pinned to the kubelet's Node, run by containerd + runc from the
# busybox image made at start (tagged as the manifests' registry.example.com/
# migrations:1.0). The scripts the containers run live in the test's temp dir, which
# is mounted at the same path (hostPath), so the counters they keep are shared with
# the test; /dev/termination-log is the termination log the node agent calls
# $KUBESIM_TERMINATION_LOG.
#   gate_node.sh ENVGATE SCENARIO
# with ENVGATE_CONTROLPLANE_STATE and ENVGATE_NODE_STATE set (CTest does).
# shellcheck disable=SC2034 # lib.sh uses them
ENVGATE=$1 SCENARIO=$2 KUBESIM=
export ENVGATE_TEST_CLUSTER=controlplane
# shellcheck source=../e2e/lib.sh
source "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=../e2e/commands_lib.sh
source "$(dirname "$0")/../e2e/commands_lib.sh"
# shellcheck source=../e2e/evict_preempt_lib.sh
source "$(dirname "$0")/../e2e/evict_preempt_lib.sh"
# shellcheck disable=SC2119
start_kubesim
NODE=$(cat "${ENVGATE_NODE_STATE:?the node tier needs ENVGATE_NODE_STATE}/node-name") ||
    fail "no real node is running ($ENVGATE_NODE_STATE/node-name missing)"
[[ $("${K[@]}" get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]] ||
    fail "node $NODE is not Ready"
# The namespace prefix the goldens of test/golden/failures/ were written with.
NS=$(test_ns e2e)
gate_args() { echo --env e1 --gate "$1" --manifest "$2" --namespace "${3:-$NS}" --report-dir "$4"; }

# node_job_manifest FILE NAME RESTART_POLICY BACKOFF_LIMIT SCRIPT [ENV_YAML [POD_YAML]]:
# lib.sh's job_manifest, on the real node, with the temp dir mounted, the termination log
# where it is, ENV_YAML's entries (lines "            - ...") added to the container's
# env and POD_YAML to the pod's spec.
node_job_manifest() {
    local file=$1 env=${6:-} pod=${7:-}
    job_manifest "$1" "$2" "$3" "$4" "$5" "" "      nodeName: $NODE
      volumes:
        - {name: tmp, hostPath: {path: $T, type: Directory}}
$pod"
    cat >>"$file" <<EOF
          env:
            - {name: KUBESIM_TERMINATION_LOG, value: /dev/termination-log}
$env
          volumeMounts:
            - {name: tmp, mountPath: $T}
EOF
}

# As gate_e2e.sh's: fails FAILS times (1 s each, the termination message set), then passes.
crash_then_pass() {
    local file=$1 name=$2 fails=$3 counter=$T/$2.count
    local script
    script=$(job_script "$name" "$(count_runs "$counter")
echo \"run \$n: migrating users\"
if [ \$n -le $fails ]; then sleep 1; echo 'PG::LockNotAvailable' > \"\$KUBESIM_TERMINATION_LOG\"; exit 1; fi
sleep 1; echo migrated")
    node_job_manifest "$file" "$name" OnFailure 6 "$script"
}

# The kubelet's own record of the crash loop, read back from the API: restartCount,
# lastState.terminated (exit code, reason, message) of the pod that passed at last.
check_pod_record() {
    local job=$1 restarts=$2 pod
    pod=$(pods_of "$NS" "$job" | jq -c '[.items[] | select(.spec.nodeName == "'"$NODE"'")][0]')
    [[ $pod != null ]] || fail "no pod of $job ran on $NODE"
    jq -e --argjson r "$restarts" '.status.containerStatuses[0] | .restartCount == $r
        and .lastState.terminated.exitCode == 1 and .lastState.terminated.reason == "Error"
        and (.lastState.terminated.message | startswith("PG::LockNotAvailable"))
        and .state.terminated.exitCode == 0 and .state.terminated.reason == "Completed"' <<<"$pod" >/dev/null ||
        fail "the kubelet's record is not $restarts restarts then a pass: $(jq -c .status.containerStatuses <<<"$pod")"
    echo "kubelet record: $(jq -c '.status.containerStatuses[0] | {restartCount, last: .lastState.terminated | {exitCode, reason, message}, state: .state.terminated | {exitCode, reason}}' <<<"$pod")"
}

# crashloop_gate: the crash loop of gate_e2e.sh's scenario_crashloop through envgate gate;
# sets JOB.
crashloop_gate() {
    crash_then_pass "$T/crash.yaml" crash 2
    start_watch "$T/gate.log"
    # shellcheck disable=SC2046
    run_envgate 180 "$T/gate.log" gate $(gate_args pre-migrations "$T/crash.yaml" "$NS" "$T/rep")
    stop_watch
    JOB=$(job_of "$T/gate.log")
    [[ -n $JOB ]] || fail "no Job name in the log"
}

# The verdict, exit code, retry lines and events, and the kubelet's own record.
scenario_crashloop() {
    crashloop_gate
    expect_rc 0 "crash twice, then pass"
    log_has "$T/gate.log" "attempt 1 of 6 failed, 5 left: container migrations exited 1 (Error): PG::LockNotAvailable"
    log_has "$T/gate.log" "attempt 2 of 6 failed, 4 left"
    log_has "$T/gate.log" "succeeded (PreMigrationsComplete)"
    gate_events "$NS" "$JOB" >"$T/events.log"
    [[ $(log_count "$T/events.log" '^MigrationsRetrying') == 2 ]] ||
        fail "want exactly 2 MigrationsRetrying events (one per failed run)"
    [[ $(wc -l <"$T/events.log") == 2 ]] || fail "unexpected envgate events"
    "${K[@]}" get events -n "$NS" -o json | jq -e --arg j "$JOB" '[.items[]
        | select(.reason == "MigrationsRetrying" and .type == "Warning"
          and .involvedObject.name == $j)] | length == 2' >/dev/null ||
        fail "retry events are not Warnings on the Job"
    check_reports "$T/rep" e1 success
    check_pod_record "$JOB" 2
    # The kubelet's BackOff events: the crash loop went through CrashLoopBackOff.
    "${K[@]}" get events -n "$NS" -o json | jq -e '[.items[] | select(.reason == "BackOff"
        and .source.component == "kubelet")] | length >= 1' >/dev/null ||
        fail "no BackOff event from the kubelet"
    # Each printed logs command, run the moment it was printed, through the API server's
    # pods/log proxy to the real kubelet: its run's log.
    check_printed "$T/gate.log"
    # logs of the pod that passed, from the kubelet's log files: run 3. (Its logs
    # --previous, run 2, may be gone: the kubelet keeps one exited container per container
    # name and removes older ones when it sees a container exit; in one tier run of three
    # it answered "unable to retrieve container logs for containerd://…". The node agent
    # keeps them all. Not checked here: when it goes is the kubelet's race.)
    "${K[@]}" logs -n "$NS" "job/$JOB" -c migrations >"$T/current.out" 2>&1 ||
        fail "kubectl logs: $(cat "$T/current.out")"
    [[ $(cat "$T/current.out") == $'run 3: migrating users\nmigrated' ]] ||
        fail "kubectl logs shows $(cat "$T/current.out"), want run 3's"
    ok "crash-loop on the real kubelet: 2 retries, one Warning event per failed run, the kubelet's record, its logs, exit 0"
}

# kubectl logs --previous through the API server's pods/log proxy to the real kubelet,
# the command envgate prints for a container that restarted: run 1 fails, run 2 waits
# for the test; while run 2 runs, --previous is run 1's log and the current log run 2's.
scenario_logs_previous() {
    local release=$T/release-run2
    node_job_manifest "$T/prev.yaml" prev OnFailure 2 "$(job_script prev "$(count_runs "$T/prev.count")
echo \"run \$n: migrating users\"
if [ \$n -le 1 ]; then exit 1; fi
until [ -f '$release' ]; do sleep 0.05; done; echo migrated")"
    "${K[@]}" apply -n "$NS" -f "$T/prev.yaml" >/dev/null
    # shellcheck disable=SC2317 # run by wait_for
    restarted_and_running() {
        pods_of "$NS" prev | jq -e '.items[0].status.containerStatuses[0]
            | .restartCount == 1 and .state.running != null' >/dev/null
    }
    wait_for 60 "the container's restart" restarted_and_running
    [[ $("${K[@]}" logs -n "$NS" job/prev -c migrations --previous) == "run 1: migrating users" ]] ||
        fail "logs --previous: $("${K[@]}" logs -n "$NS" job/prev -c migrations --previous 2>&1)"
    wait_for 30 "run 2's log" bash -c "[[ \$(${K[*]} logs -n $NS job/prev -c migrations) == 'run 2: migrating users' ]]"
    touch "$release"
    wait_for 60 "the Job to complete" bash -c \
        "[[ \$(${K[*]} get job -n $NS prev -o jsonpath='{.status.succeeded}') == 1 ]]"
    ok "kubectl logs --previous through the real kubelet: run 1's log while run 2 runs"
}

# What gate_e2e.sh's scenario_crashloop also checks on the node agent: each failed run's
# kept log is that run's, and the retry events name logs pod/… --previous. Once the pod
# passed, the kubelet keeps only the last run's container (one exited container per
# name), so the reports give no command for runs 1-2 and say why, and each command the
# reports do give works (run 2's `--previous` worked when it was printed: check_printed).
scenario_crashloop_logs() {
    crashloop_gate
    expect_rc 0 "crash twice, then pass"
    gate_events "$NS" "$JOB" >"$T/events.log"
    check_kept_logs_node "$T/gate.log" "$T/rep" pre-migrations 2 "run %d: migrating users"
    [[ $(log_count "$T/events.log" "logs pod/$JOB-[a-z0-9]+ -c migrations --previous") == 2 ]] ||
        fail "retry events lack the logs --previous command naming the pod"
    check_printed "$T/gate.log"
    check_reported "$T/rep" pre-migrations
    ok "crash-loop on the real kubelet: each failed run's own log kept, logs --previous printed and run when printed"
}

# gate_e2e.sh's scenario_pending_causes, the kubelet's part: a missing Secret
# (CreateContainerConfigError until it exists) and an image that cannot be pulled (a real
# pull: registry.example.com does not resolve), each named as it happens and each
# against the golden excerpt of the node agent's run (test/golden/failures/).
scenario_pending_causes() {
    node_job_manifest "$T/secret.yaml" needsecret OnFailure 2 "$(job_script needsecret 'echo migrated')" \
        "            - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db-creds, key: password}}}"
    # shellcheck disable=SC2046
    gate_bg "$T/secret.log" $(gate_args pre-migrations "$T/secret.yaml" "$NS" "$T/rep-secret") \
        --progress-interval 300ms
    wait_for 60 "the missing Secret named" grep -qE \
        "^pre-migrations: running \(RunningPreMigrations\): .* is waiting: CreateContainerConfigError" "$T/secret.log"
    wait_for 60 "a progress line naming the cause" grep -qE \
        "^pre-migrations: still running after .*Pending \(CreateContainerConfigError\)" "$T/secret.log"
    local lines='^pre-migrations: (running .* is waiting: CreateContainerConfigError|succeeded)'
    run_next "$T/secret.log" 'secret "db-creds" not found' "$lines"
    "${K[@]}" create secret generic db-creds -n "$NS" --from-literal=password=not-a-real-one >/dev/null
    wait_exit "$GATE_PID" 60
    expect_rc 0 "the Secret exists now"
    GOLDEN_ON=controlplane check_failure_golden missing_secret "$T/secret.log" "$T/rep-secret" "$lines"

    local image=registry.example.com/never-pulled:$NS
    node_job_manifest "$T/image.yaml" noimage OnFailure 2 "$(job_script noimage 'echo migrated')"
    sed -i "s|image: registry.example.com/migrations:1.0|image: $image|" "$T/image.yaml"
    # shellcheck disable=SC2046
    run_envgate 60 "$T/image.log" gate $(gate_args pre-migrations "$T/image.yaml" "$NS" "$T/rep-image") \
        --timeout 5s
    expect_rc 1 "an image that never starts"
    grep -qE "^pre-migrations: running .* is waiting: (ErrImagePull|ImagePullBackOff)" "$T/image.log" ||
        fail "the image pull failure is not named"
    grep -qE "^pre-migrations: GateTimeout: .*(ErrImagePull|ImagePullBackOff)" "$T/image.log" ||
        fail "the timeout does not say why nothing ran"
    # Not against the golden: the node agent plays a registry that answers 404 ('"…":
    # not found'); here no registry answers at all (containerd: 'dial tcp: lookup
    # registry.example.com …: no such host'), the same verdict for another cause.
    grep -qE "^pre-migrations: GateTimeout: .* is waiting: (ErrImagePull: failed to pull and unpack image \"$image\"|ImagePullBackOff: Back-off pulling image \"$image\")" "$T/image.log" ||
        fail "the timeout does not carry the runtime's pull error"
    run_next "$T/image.log" "$image"
    ok "pending causes on the real kubelet: CreateContainerConfigError until the Secret exists, ErrImagePull named"
}

# gate_e2e.sh's scenario_pod_limit_never: restartPolicy Never, backoffLimit 2, a pod per
# run, each exiting 4; the third failed pod fails the gate.
scenario_pod_limit_never() {
    node_job_manifest "$T/never.yaml" podlimit Never 2 "$(job_script podlimit "$(count_runs "$T/podlimit.count")
echo \"run \$n: inserting users\"; sleep 0.3; echo 'duplicate key' > \"\$KUBESIM_TERMINATION_LOG\"; exit 4")"
    # shellcheck disable=SC2046
    run_envgate 180 "$T/gate.log" gate $(gate_args pre-migrations "$T/never.yaml" "$NS" "$T/rep")
    expect_rc 1 "the pod limit reached"
    log_has "$T/gate.log" "pod 1 of 3 failed, 2 left"
    log_has "$T/gate.log" "pod 2 of 3 failed, 1 left"
    grep -E "^pre-migrations: failed \(MigrationsJobFailed\).*BackoffLimitExceeded.*duplicate key.*exited 4" "$T/gate.log" >/dev/null ||
        fail "the failed line lacks BackoffLimitExceeded and the last failure: $(grep '^pre-migrations: failed' "$T/gate.log")"
    local job
    job=$(job_of "$T/gate.log")
    [[ $("${K[@]}" get job -n "$NS" "$job" -o jsonpath='{.status.failed}') == 3 ]] ||
        fail "the Job does not count 3 failed pods"
    gate_events "$NS" "$job" | cut -f1 >"$T/events.log"
    [[ $(log_count "$T/events.log" '^MigrationsRetrying$') -ge 2 && $(log_count "$T/events.log" '^MigrationsRetrying$') -le 3 ]] ||
        fail "want 2 or 3 MigrationsRetrying events: $(sort "$T/events.log" | uniq -c)"
    [[ $(log_count "$T/events.log" '^MigrationsFailed$') == 1 ]] || fail "want one MigrationsFailed event"
    check_reports "$T/rep" e1 failed MigrationsJobFailed
    # (Its golden was written on kubesim, in namespace "e2e": the longer namespace here
    # moves where the report cuts its messages, so it is not compared.)
    run_next "$T/gate.log" 'BackoffLimitExceeded'
    # A pod per run: the first failed run's command reads its own pod, from the kubelet.
    local first
    first=$(jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[0].log_command' "$T/rep/run.json")
    [[ $first == *" logs pod/"* ]] || fail "failed run 1's command does not name its pod: $first"
    (cd "$T" && bash -c "$first") >"$T/run1.out" 2>&1 || fail "$first: $(cat "$T/run1.out")"
    grep -qx "run 1: inserting users" "$T/run1.out" || fail "$first does not show run 1: $(cat "$T/run1.out")"
    ok "Never, backoffLimit 2 on the real kubelet: two retries, the third failed pod fails the gate, exit 1"
}

# gate_e2e.sh's scenario_restart_limit_pod_gone: OnFailure, backoffLimit 2, one container
# exiting 7; the Job controller deletes the pod; the verdict keeps the remembered failure.
scenario_restart_limit_pod_gone() {
    local script
    script=$(job_script limit "$(count_runs "$T/limit1.count")
echo \"run \$n: relation users missing\"; sleep 0.5; echo 'relation users missing' > \"\$KUBESIM_TERMINATION_LOG\"; exit 7")
    node_job_manifest "$T/limit.yaml" limit1 OnFailure 2 "$script"
    # shellcheck disable=SC2046
    run_envgate 180 "$T/gate.log" gate $(gate_args pre-migrations "$T/limit.yaml" "$NS" "$T/rep")
    expect_rc 1 "restart limit reached"
    local job
    job=$(job_of "$T/gate.log")
    wait_for 60 "the Job's pod to be deleted" bash -c "[[ \$(${K[*]} get pods -n $NS -l job-name=$job -o name) == '' ]]"
    grep -qx "    kubectl -n $NS describe job/$job" "$T/gate.log" || fail "describe command not printed"
    grep -E "^pre-migrations: failed \(MigrationsJobFailed\).*Last failure: container migrations exited 7 \(Error\): relation users missing" "$T/gate.log" >/dev/null ||
        fail "the failed verdict lost the remembered failure (exit 7) once the pod was gone: $(grep '^pre-migrations: failed' "$T/gate.log")"
    ok "restart limit, pod gone, on the real kubelet: failed with the remembered exit code 7, exit 1"
}

# gate_on_running_pod MANIFEST (gate_e2e.sh's): a background gate on MANIFEST's Job;
# returns once the Job has a running pod. Sets JOB and POD.
gate_on_running_pod() {
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args pre-migrations "$1" "$NS" "$T/rep")
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    JOB=$(job_of "$T/gate.log")
    wait_for 60 "a running pod" live_pod "$NS" "$JOB"
    POD=$(live_pod "$NS" "$JOB")
}

# gate_e2e.sh's scenario_deleted_by_hand: a pod deleted by hand ignores SIGTERM (the
# kubelet holds it terminating for its grace period), its replacement fails: the retry
# names the replacement's error, not "was deleted".
scenario_deleted_by_hand() {
    local script release=$T/release-first
    script=$(job_script dbh "$(count_runs "$T/dbh.count")
if [ \$n -le 1 ]; then trap '' TERM; until [ -f '$release' ]; do sleep 0.05; done; exit 0; fi
sleep 0.3; echo 'PG::DuplicateTable' > \"\$KUBESIM_TERMINATION_LOG\"; exit 1")
    node_job_manifest "$T/dbh.yaml" dbh Never 6 "$script" "" "      terminationGracePeriodSeconds: 60"
    gate_on_running_pod "$T/dbh.yaml"
    local job=$JOB pod=$POD
    "${K[@]}" delete pod -n "$NS" "$pod" --wait=false >/dev/null
    wait_for 90 "the replacement's failure" grep -qE "^pre-migrations: retrying .*pod 2 of 7 failed.*PG::DuplicateTable" "$T/gate.log"
    touch "$release"
    kill -TERM "$GATE_PID"
    wait_exit "$GATE_PID" 30
    log_has "$T/gate.log" "pod $pod was deleted"
    ok "deleted by hand on the real kubelet: the replacement's PG::DuplicateTable is the last failure"
}

# The Eviction API (policy/v1, through the API server; the kubelet then stops the pod
# within its grace period): an OnFailure pod evicted while it runs, its replacement
# passes. One failure, one retry, exit 0.
scenario_eviction_api() {
    local script
    script=$(job_script ev "$(count_runs "$T/ev.count")
if [ \$n -le 1 ]; then echo \"run 1: waiting for the lock on users\"; sleep 60; fi; echo migrated")
    node_job_manifest "$T/ev.yaml" ev OnFailure 6 "$script" "" "      terminationGracePeriodSeconds: 2"
    gate_on_running_pod "$T/ev.yaml"
    local job=$JOB pod=$POD
    "${K[@]}" create --raw "/api/v1/namespaces/$NS/pods/$pod/eviction" -f - >/dev/null <<EOF
{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "$pod", "namespace": "$NS"}}
EOF
    wait_exit "$GATE_PID" 90
    expect_rc 0 "the replacement passes"
    grep -qE "^pre-migrations: retrying .*pod 1 of 7 failed, 6 left: pod $pod " "$T/gate.log" ||
        fail "the retry does not name the evicted pod"
    log_lacks "$T/gate.log" "attempt 1 of 6"
    log_lacks "$T/gate.log" "2 of 7 failed"
    [[ $(event_summary "$NS" "$job") == "1 MigrationsRetrying" ]] ||
        fail "events: $(event_summary "$NS" "$job"), want one MigrationsRetrying"
    echo "retry line: $(grep -m1 '^pre-migrations: retrying' "$T/gate.log")"
    ok "Eviction API on the real kubelet: one failure, one retry line, one event, exit 0"
}

# gate_e2e.sh's scenario_evict_preempt on the real node, its Jobs placed by the real
# kube-scheduler (run.sh: profile SCHEDULER, this node only, 500m CPU allocatable):
# restartPolicy Never, backoffLimit 1, each pod asking for 300m CPU (the node holds one)
# and outliving its SIGTERM by its grace period (2 s). Pod 1 goes through the Eviction
# API (retried); its replacement, placed once pod 1 is gone, is preempted by a pod of
# PriorityClass HIGH that asks for 300m too (past the limit): exit 1, the last failure the
# preemption, the node agent's event counts; every printed command is run as printed.
SCHEDULER=envgate-node-scheduler HIGH=envgate-node-high
scenario_evict_preempt() {
    node_job_manifest "$T/never.yaml" never Never 1 "$(job_script never "$(count_runs "$T/never.count")
echo \"run \$n: waiting for the lock on users\"; trap '' TERM; sleep 60")" "" \
        "      terminationGracePeriodSeconds: 2"
    echo "          resources: {requests: {cpu: 300m}}" >>"$T/never.yaml"
    # Placed by the scheduler instead of pinned.
    sed -i "s|^      nodeName: $NODE\$|      schedulerName: $SCHEDULER|" "$T/never.yaml"
    start_watch "$T/gate.log"
    evict_then_preempt "$T/never.yaml" api_evict preempt_by_priority EvictionByEvictionAPI
    stop_watch
    check_printed "$T/gate.log"
    check_preemption
    ok "Never on the real kubelet and kube-scheduler: Eviction API retried, preemption past the limit failed the gate, exit 1"
}

# api_evict NS/POD: the Eviction API (policy/v1).
api_evict() {
    "${K[@]}" create --raw "/api/v1/namespaces/${1%/*}/pods/${1#*/}/eviction" -f - >/dev/null <<EOF
{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "${1#*/}", "namespace": "${1%/*}"}}
EOF
}

# preempt_by_priority NS/POD: a pod of PriorityClass HIGH asking for the CPU POD holds;
# the kube-scheduler preempts POD to place it. The Job's pods are watched from here on
# (the victim is gone soon after), to check the victim as the scheduler left it. Sets
# VICTIM.
preempt_by_priority() {
    VICTIM=${1#*/}
    "${K[@]}" get pods -n "$NS" -l "job-name=$JOB" -w --output-watch-events -o json >"$T/pods.watch" 2>&1 &
    BG_PIDS+=("$!")
    wait_for 30 "the watch of the Job's pods" grep -q "\"$VICTIM\"" "$T/pods.watch"
    cat >"$T/urgent.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  schedulerName: $SCHEDULER
  priorityClassName: $HIGH
  terminationGracePeriodSeconds: 1
  containers:
    - name: urgent
      image: envgate.test/busybox:1
      command: ["sleep", "3600"]
      resources: {requests: {cpu: 300m}}
EOF
    "${K[@]}" apply -n "$NS" -f "$T/urgent.yaml" >/dev/null
}

# check_preemption: what the real scheduler did, read back from the API: the victim got
# DisruptionTarget PreemptionByScheduler and a Preempted event naming the preemptor, and
# the high-priority pod runs on this node, placed by the scheduler.
check_preemption() {
    local uid cond
    wait_for 60 "the high-priority pod to run" bash -c \
        "[[ \$(${K[*]} get pod -n $NS urgent -o jsonpath='{.spec.nodeName} {.status.phase}') == '$NODE Running' ]]"
    uid=$("${K[@]}" get pod -n "$NS" urgent -o jsonpath='{.metadata.uid}')
    cond=$(jq -sc --arg p "$VICTIM" '[.[] | .object | select(.metadata.name == $p)
        | .status.conditions[]? | select(.type == "DisruptionTarget")] | last' "$T/pods.watch")
    jq -e --arg m "$SCHEDULER: preempting to accommodate a higher priority pod" '.status == "True"
        and .reason == "PreemptionByScheduler" and .message == $m' <<<"$cond" >/dev/null ||
        fail "the victim $VICTIM's DisruptionTarget: $cond"
    "${K[@]}" get events -n "$NS" -o json | jq -e --arg p "$VICTIM" --arg m "Preempted by pod $uid on node $NODE" '[.items[]
        | select(.involvedObject.name == $p and .reason == "Preempted" and .message == $m)] | length == 1' >/dev/null ||
        fail "no Preempted event on $VICTIM naming pod $uid: $("${K[@]}" get events -n "$NS" -o json |
            jq -c --arg p "$VICTIM" '[.items[] | select(.involvedObject.name == $p) | {reason, message}]')"
    "${K[@]}" get events -n "$NS" -o json | jq -e --arg s "$SCHEDULER" '[.items[]
        | select(.involvedObject.name == "urgent" and .reason == "Scheduled"
          and (.reportingComponent == $s or .source.component == $s))] | length == 1' >/dev/null ||
        fail "the high-priority pod was not placed by $SCHEDULER"
    echo "victim $VICTIM: DisruptionTarget $cond; urgent ($uid) runs on $NODE"
}

# gate_e2e.sh's scenario_onfailure_evict with a real kubelet eviction, provoked safely:
# run 1 writes 8 MiB into its container's writable layer past an ephemeral-storage limit
# of 2 MiB, the kubelet's eviction manager (every 10 s) evicts the pod ("Pod ephemeral
# local storage usage exceeds the total limit of containers 2Mi."); the replacement
# passes. One failure, one retry line, one event, exit 0.
scenario_kubelet_evict() {
    local script
    script=$(job_script ke "$(count_runs "$T/ke.count")
if [ \$n -le 1 ]; then dd if=/dev/zero of=/tmp/fill bs=1M count=8 2>/dev/null; echo \"run 1: filled\"; sleep 60; fi; echo migrated")
    node_job_manifest "$T/ke.yaml" ke OnFailure 6 "$script" "" "      terminationGracePeriodSeconds: 2"
    echo "          resources: {limits: {ephemeral-storage: 2Mi}}" >>"$T/ke.yaml"
    # Every status the API serves of the namespace's pods, in order: which writes of the
    # eviction there were to see (the gate may see any of them).
    "${K[@]}" get pods -n "$NS" -w -o json --output-watch-events >"$T/pods-watch.json" 2>/dev/null &
    local watch_pid=$!
    BG_PIDS+=("$watch_pid")
    gate_on_running_pod "$T/ke.yaml"
    local job=$JOB pod=$POD
    wait_exit "$GATE_PID" 120
    sleep 1
    kill "$watch_pid" 2>/dev/null || true
    # One line per write of the evicted pod (on a failure, the log shows them).
    jq -c --arg p "$pod" 'select(.object.metadata.name == $p) | .object |
        {rv: .metadata.resourceVersion, phase: .status.phase, reason: .status.reason,
         ready: [.status.conditions[]? | select(.type == "Ready") | {status, reason, lastTransitionTime}],
         containers: [.status.containerStatuses[]? | {restartCount, state, lastState}]}' \
        "$T/pods-watch.json" >"$T/evicted-pod-writes.log" 2>&1 || true
    expect_rc 0 "the replacement passes"
    [[ $(pods_of "$NS" "$job" | jq -r --arg p "$pod" '.items[] | select(.metadata.name == $p) | .status.reason') == Evicted ]] ||
        fail "pod $pod was not evicted by the kubelet: $(pods_of "$NS" "$job" | jq -c '[.items[].status | {phase, reason, message}]')"
    log_has "$T/gate.log" "pod 1 of 7 failed, 6 left: pod $pod was evicted"
    log_lacks "$T/gate.log" "attempt 1 of 6"
    log_lacks "$T/gate.log" "2 of 7 failed"
    # One retry line and one event, as on the node agent. The kubelet may publish an
    # eviction in two writes (the container's exit 137 from the kill, then phase
    # Failed/Evicted, or the other way round); the gate counts the killed run as part of
    # the pod's failure, not as a run of its own (gates/README.md, refinement 2).
    gate_events "$NS" "$job" >"$T/events.log"
    # On a failure, the evicted pod's status as the kubelet left it (its conditions'
    # times and its container's runs) goes into the log: what a unit case needs.
    pods_of "$NS" "$job" | jq -c --arg p "$pod" '.items[] | select(.metadata.name == $p) |
        .status | {phase, reason, conditions, containerStatuses}' >"$T/evicted-pod.log"
    [[ $(log_count "$T/events.log" '^MigrationsRetrying') == 1 &&
        $(log_count "$T/events.log" "pod 1 of 7 failed, 6 left: pod $pod was evicted") == 1 ]] ||
        fail "events: $(cut -f1 "$T/events.log" | sort | uniq -c), want one MigrationsRetrying, about pod 1"
    [[ $(log_count "$T/gate.log" '^pre-migrations: retrying') == 1 ]] ||
        fail "retry lines: $(grep '^pre-migrations: retrying' "$T/gate.log"), want one"
    grep '^pre-migrations: retrying' "$T/gate.log" | grep -qF "exit code 137 comes from the kill" ||
        fail "the retry line does not name the kill"
    # restartCount 1: the kubelet removed the killed container before it read it back,
    # and wrote its run as lastState ContainerStatusUnknown with one restart more, nothing
    # having restarted (gates/counting.cpp waits_after_unlocated_run), or it restarted the
    # killed container before it published the phase Failed (cut_by_pod_failure).
    echo "retry lines: $(log_count "$T/gate.log" '^pre-migrations: retrying'), events: $(log_count "$T/events.log" '^MigrationsRetrying'), evicted pod's restartCount: $(pods_of "$NS" "$job" | jq -r --arg p "$pod" '.items[] | select(.metadata.name == $p) | [.status.containerStatuses[].restartCount] | join(",")'), its writes: $(wc -l <"$T/evicted-pod-writes.log")"
    ok "kubelet eviction (ephemeral storage) on the real kubelet: one failure, retried once, exit 0"
}

# gate_e2e.sh's scenario_restart_limit: OnFailure, backoffLimit 2, migrations exits 7
# every run; a second container (proxy) ignores SIGTERM until the test releases it, so
# the kubelet holds the pod terminating and the Job at FailureTarget (not yet Failed)
# until the test has seen the gate report it.
scenario_restart_limit() {
    local release=$T/release-proxy name=limit script
    script=$(job_script "$name" "$(count_runs "$T/$name.count")
echo \"run \$n: relation users missing\"; sleep 0.5; echo 'relation users missing' > \"\$KUBESIM_TERMINATION_LOG\"; exit 7")
    node_job_manifest "$T/$name.yaml" "$name" OnFailure 2 "$script" "" "      terminationGracePeriodSeconds: 60"
    cat >>"$T/$name.yaml" <<EOF
        - name: proxy
          image: registry.example.com/proxy:1.0
          command: ["sh", "-c", "trap '' TERM; until [ -f '$release' ]; do sleep 0.05; done"]
          volumeMounts:
            - {name: tmp, mountPath: $T}
EOF
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args pre-migrations "$T/$name.yaml" "$NS" "$T/rep")
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    local job
    job=$(job_of "$T/gate.log")
    wait_for 90 "the failing line on FailureTarget" grep -qE \
        "^pre-migrations: failing \(RunningPreMigrations\): Job $NS/$job is failing: BackoffLimitExceeded" "$T/gate.log"
    "${K[@]}" get job -n "$NS" "$job" -o json | jq -e '[.status.conditions[]
        | select(.status == "True") | .type] | index("FailureTarget") != null and index("Failed") == null' \
        >/dev/null || fail "the Job is not held at FailureTarget alone while the gate says failing"
    log_lacks "$T/gate.log" "pre-migrations: failed"
    touch "$release"
    wait_exit "$GATE_PID" 90
    expect_rc 1 "restart limit reached"
    grep -E "^pre-migrations: failed \(MigrationsJobFailed\).*exited 7 \(Error\): relation users missing" "$T/gate.log" >/dev/null ||
        fail "the failed line lacks the remembered exit code 7"
    grep -qx "    kubectl -n $NS describe job/$job" "$T/gate.log" || fail "describe command not on its own line"
    gate_events "$NS" "$job" | cut -f1 >"$T/events.log"
    [[ $(log_count "$T/events.log" '^MigrationsFailed$') == 1 ]] || fail "want one MigrationsFailed event"
    check_reports "$T/rep" e1 failed MigrationsJobFailed
    run_next "$T/gate.log" 'BackoffLimitExceeded'
    ok "restart limit on the real kubelet: failing line while FailureTarget held, then failed with exit 7 remembered, exit 1"
}

# check_kept_logs (gate_e2e.sh's), the part that reads the job log and run.json.
check_kept_logs_node() {
    local log=$1 rep=$2 gate=$3 runs=$4 format=$5 i line
    [[ $(jq --arg g "$gate" '.steps[] | select(.name == $g) | .failed_runs | length' "$rep/run.json") == "$runs" ]] ||
        fail "run.json: want $runs failed runs of $gate"
    for ((i = 1; i <= runs; i++)); do
        # shellcheck disable=SC2059
        line=$(printf "$format" "$i")
        grep -qxF "    $line" "$log" || fail "the job log lacks the kept line '$line'"
        jq -e --arg g "$gate" --arg l "$line" --argjson i "$i" '.steps[] | select(.name == $g)
            | .failed_runs[$i - 1].log_tail | split("\n") | index($l) != null' "$rep/run.json" >/dev/null ||
            fail "run.json: failed run $i of $gate lacks '$line'"
    done
}

"scenario_$SCENARIO"
