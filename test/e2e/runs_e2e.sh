#!/usr/bin/env bash
# Issue 23: a gate pass works from runs, each identified by (pod UID, container, restart
# number) or by its pod's failure, and every line, event and report entry is derived
# from exactly one run. Usage runs_e2e.sh ENVGATE KUBESIM SCENARIO. On kubesim, or on the
# real control plane with ENVGATE_TEST_CLUSTER=controlplane (CTest cp_e2e_runs_*).
# Each scenario checks that the job log, the events on the Job, run.json, junit.xml and
# summary.md agree run for run (check_runs).
ENVGATE=$1 KUBESIM=$2 SCENARIO=$3
source "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
start_kubesim

NS=$(test_ns runs)
gate_args() { echo --env e1 --gate pre-migrations --manifest "$1" --namespace "$NS" --report-dir "$T/rep"; }

# The words of each retry line (after "retrying (Reason): "), one per line.
retry_words() { sed -nE 's/^pre-migrations: retrying \([A-Za-z]+\): (.*)$/\1/p' "$1"; }

# check_runs LOG JOB ENDED: every retry line names a distinct run; the non-indexed
# counts rise strictly; one MigrationsRetrying event per retry line, with that line's
# words; run.json lists one counted failed run per retry line (plus the one an ending
# line names when ENDED=1), each with its own key; junit.xml and summary.md carry
# them; no "attempt 0", no event "seen together with a later one".
check_runs() {
    local log=$1 job=$2 ended=${3:-0} lines events runs keys words prev=0 n
    retry_words "$log" >"$T/words"
    lines=$(wc -l <"$T/words")
    ((lines > 0)) || fail "no retry line"
    [[ $(sort "$T/words" | uniq -d | wc -l) == 0 ]] || fail "a retry line repeats: $(sort "$T/words" | uniq -d)"
    log_lacks "$log" "attempt 0 of"
    local kind
    for kind in attempt pod; do # each count rises strictly (an OnFailure pod's failure
        prev=0                  # is counted against the pod limit)
        while read -r n; do
            ((n > prev)) || fail "$kind counts do not rise strictly: $(cat "$T/words")"
            prev=$n
        done < <(sed -nE "s/^$kind ([0-9]+) of .*/\\1/p" "$T/words")
    done
    gate_events "$NS" "$job" >"$T/events"
    events=$(grep -c '^MigrationsRetrying' "$T/events" || true)
    [[ $events == "$lines" ]] || fail "$events MigrationsRetrying events for $lines retry lines: $(cat "$T/events")"
    grep -q "seen together with a later one" "$T/events" && fail "an event without its run's text"
    while IFS= read -r words; do
        [[ $(grep -cF -- "$words" "$T/events") == 1 ]] || fail "no single event for the line: $words"
    done <"$T/words"
    runs=$(jq '[.steps[] | select(.name == "pre-migrations") | .failed_runs[] | select(.counted)] | length' "$T/rep/run.json")
    [[ $runs == $((lines + ended)) ]] || fail "run.json lists $runs counted failed runs for $lines retry lines (+$ended)"
    keys=$(jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[].key' "$T/rep/run.json")
    [[ $(sort <<<"$keys" | uniq -d | wc -l) == 0 ]] || fail "run.json lists a run twice: $keys"
    local failed_runs_junit attempts
    failed_runs_junit=$(grep -c 'pre-migrations failed run [0-9]' "$T/rep/junit.xml" || true)
    ((failed_runs_junit >= runs)) || fail "junit.xml names $failed_runs_junit failed runs, run.json $runs"
    attempts=$(jq '.steps[] | select(.name == "pre-migrations") | .attempts' "$T/rep/run.json")
    grep -qE "\| pre-migrations \|.*\| $attempts \|" "$T/rep/summary.md" ||
        fail "summary.md lacks attempts $attempts: $(grep pre-migrations "$T/rep/summary.md" | head -3)"
    echo "runs agree: $lines retry lines, $events events, $runs counted runs in run.json"
}

# fail_times COUNTER N CODE: a job script fragment that fails its first N runs (per
# COUNTER file, one per container; it may name $HOSTNAME, the pod), each after 0.2 s.
fail_times() {
    echo "n=\$(cat \"$1\" 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > \"$1\"
echo \"run \$n of \$HOSTNAME\"
if [ \$n -le $2 ]; then sleep 0.2; echo \"run \$n failed\" > \"\${KUBESIM_TERMINATION_LOG:-/dev/termination-log}\" 2>/dev/null; exit $3; fi
sleep 0.2; echo migrated"
}

# Defect 3: two parallel pods (completions 2, parallelism 2, OnFailure) failing close
# together: each failed run its line, its event and its report entry.
scenario_parallel_pods() {
    job_manifest "$T/par.yaml" par OnFailure 8 "$(job_script par "$(fail_times "$T/par.\$HOSTNAME.count" 3 3)")" \
        "  completions: 2
  parallelism: 2"
    # shellcheck disable=SC2046
    run_envgate 120 "$T/gate.log" gate $(gate_args "$T/par.yaml")
    expect_rc 0 "6 failed runs within backoffLimit 8, then both pods pass"
    check_runs "$T/gate.log" "$(job_of "$T/gate.log")"
    [[ $(retry_words "$T/gate.log" | wc -l) == 6 ]] || fail "want 6 retry lines: $(retry_words "$T/gate.log")"
    ok "two parallel pods: 6 runs, 6 lines, 6 events, 6 report entries"
}

# Defect 3: two crashing containers in one pod.
scenario_two_containers() {
    local a b
    a=$(job_script a "$(fail_times "$T/a.count" 3 3)")
    b=$(job_script b "$(fail_times "$T/b.count" 3 4)")
    cat >"$T/two.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: two
spec:
  backoffLimit: 8
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "$a"]
        - name: seeds
          image: registry.example.com/migrations:1.0
          command: ["sh", "$b"]
YAML
    # shellcheck disable=SC2046
    run_envgate 120 "$T/gate.log" gate $(gate_args "$T/two.yaml")
    expect_rc 0 "6 failed runs within backoffLimit 8, then both containers pass"
    check_runs "$T/gate.log" "$(job_of "$T/gate.log")"
    [[ $(retry_words "$T/gate.log" | wc -l) == 6 ]] || fail "want 6 retry lines: $(retry_words "$T/gate.log")"
    [[ $(retry_words "$T/gate.log" | grep -c 'container seeds') == 3 ]] || fail "want 3 lines of container seeds"
    ok "two crashing containers: 6 runs, each its line, event and report entry"
}

# Defect 4: an Indexed Job (backoffLimitPerIndex 1, maxFailedIndexes 1) whose indexes 0
# and 1 always fail: every line names the index of the pod it shows; the failure that
# takes the failed indexes past 1 fails the gate, no retry line or event for it.
scenario_indexed() {
    job_manifest "$T/idx.yaml" idx Never 2147483647 "$(job_script idx "echo \"index \$JOB_COMPLETION_INDEX\"
if [ \"\$JOB_COMPLETION_INDEX\" != 2 ]; then sleep 0.3; exit 1; fi; sleep 1; echo done")" "  completionMode: Indexed
  completions: 3
  parallelism: 3
  backoffLimitPerIndex: 1
  maxFailedIndexes: 1"
    # shellcheck disable=SC2046
    run_envgate 120 "$T/gate.log" gate $(gate_args "$T/idx.yaml")
    expect_rc 1 "two indexes failed, maxFailedIndexes 1"
    local job words idx pod
    job=$(job_of "$T/gate.log")
    while IFS= read -r words; do
        idx=$(sed -nE 's/^index ([0-9]+): .*/\1/p' <<<"$words")
        pod=$(sed -nE 's/.*: pod ([a-z0-9.-]+) failed.*/\1/p' <<<"$words")
        [[ -n $idx && -n $pod ]] || fail "a retry line names no index or pod: $words"
        [[ $(kubectl get pod -n "$NS" "$pod" -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}') == "$idx" ]] ||
            fail "the line names index $idx and pod $pod of another index: $words"
    done < <(retry_words "$T/gate.log")
    grep -qE "^pre-migrations: failed \(MigrationsJobFailed\).*MaxFailedIndexesExceeded" "$T/gate.log" ||
        fail "no MaxFailedIndexesExceeded failure"
    grep -qE "^pre-migrations: failing .*MaxFailedIndexesExceeded" "$T/gate.log" ||
        fail "the run past maxFailedIndexes was not reported as failing: $(grep '^pre-migrations' "$T/gate.log")"
    [[ $(grep -c '^pre-migrations: failing ' "$T/gate.log") == 1 ]] ||
        fail "the run past maxFailedIndexes is told more than once: $(grep '^pre-migrations: failing ' "$T/gate.log")"
    local line
    while IFS= read -r line; do # the ending lines count the index of the pod they name
        idx=$(sed -nE 's/.*\(index ([0-9]+): attempt .*/\1/p' <<<"$line")
        pod=$(sed -nE 's/.*Last failure: pod ([a-z0-9.-]+) failed.*/\1/p' <<<"$line")
        [[ -n $idx && -n $pod ]] || fail "an ending line names no index or pod: $line"
        [[ $(kubectl get pod -n "$NS" "$pod" -o jsonpath='{.metadata.annotations.batch\.kubernetes\.io/job-completion-index}') == "$idx" ]] ||
            fail "the ending line counts index $idx and names pod $pod of another index: $line"
    done < <(grep -E '^pre-migrations: (failing|failed) ' "$T/gate.log")
    check_runs "$T/gate.log" "$job" 1
    ok "Indexed: each line names its own index, the run past maxFailedIndexes is failing"
}

# Defect 1 and 7: OnFailure, backoffLimit 3; runs 1-2 crash, the pod is deleted during
# run 3; the replacement passes. The deletion is a line of its own ("pod 1 of 4"),
# says why the restart count fell, no "attempt 0"; 3 events for 3 failed runs.
scenario_deleted_mid_run() {
    local release=$T/release
    job_manifest "$T/dmr.yaml" dmr OnFailure 3 "$(job_script dmr "$(count_runs "$T/dmr.count")
echo \"run \$n\"
if [ \$n -le 2 ]; then sleep 0.3; exit 3; fi
if [ \$n -eq 3 ]; then sleep 60; fi
until [ -f '$release' ]; do sleep 0.05; done; echo migrated")"
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args "$T/dmr.yaml")
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    local job pod
    job=$(job_of "$T/gate.log")
    wait_for 60 "run 3" grep -qx 3 "$T/dmr.count"
    wait_for 30 "the second retry line" grep -q "attempt 2 of 3 failed" "$T/gate.log"
    pod=$(live_pod "$NS" "$job")
    "${K[@]}" delete pod -n "$NS" "$pod" --wait=false >/dev/null
    wait_for 60 "the deletion's line" grep -qE "^pre-migrations: retrying .*pod 1 of 4 failed, 3 left: pod $pod was deleted" "$T/gate.log"
    touch "$release"
    wait_exit "$GATE_PID" 60
    expect_rc 0 "the replacement passes"
    [[ $(log_count "$T/gate.log" "pod $pod was deleted") == 1 ]] || fail "the deletion is told more than once"
    log_has "$T/gate.log" "restart(s) no longer count against backoffLimit"
    check_runs "$T/gate.log" "$job"
    [[ $(retry_words "$T/gate.log" | wc -l) == 3 ]] || fail "want 3 retry lines: $(retry_words "$T/gate.log")"
    ok "deleted mid-run: its own line, why the count fell, 3 runs 3 events"
}

# Defect 5: a pod evicted under a podFailurePolicy that Ignores DisruptionTarget: not
# counted, but told (a line, run.json counted false with why, junit.xml, summary.md).
scenario_ignored_eviction() {
    job_manifest "$T/ign.yaml" ign Never 2 "$(job_script ign "$(count_runs "$T/ign.count")
echo \"run \$n\"; if [ \$n -le 1 ]; then trap '' TERM; sleep 60; fi; sleep 0.3; echo done")" "  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]" "      terminationGracePeriodSeconds: $(cluster_secs 2)"
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args "$T/ign.yaml")
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    local job pod
    job=$(job_of "$T/gate.log")
    wait_for 30 "a running pod" live_pod "$NS" "$job"
    pod=$(live_pod "$NS" "$job")
    ctl evict "$NS/$pod" --message "node low on memory"
    wait_exit "$GATE_PID" 90
    expect_rc 0 "the ignored eviction's replacement passes"
    grep -qE "^pre-migrations: not counted: pod $pod was evicted.*podFailurePolicy rule 0 \(Ignore\)" "$T/gate.log" ||
        fail "no line tells the ignored run: $(grep '^pre-migrations' "$T/gate.log")"
    [[ $(jq '[.steps[] | select(.name == "pre-migrations") | .failed_runs[] | select(.counted == false and (.ignored_why | test("rule 0")))] | length' "$T/rep/run.json") == 1 ]] ||
        fail "run.json does not list the ignored run: $(jq -c '.steps[].failed_runs' "$T/rep/run.json")"
    grep -q "not counted: podFailurePolicy rule 0" "$T/rep/junit.xml" || fail "junit.xml lacks the ignored run"
    grep -q "not counted: podFailurePolicy rule 0" "$T/rep/summary.md" || fail "summary.md lacks the ignored run"
    [[ $(gate_events "$NS" "$job" | grep -c '^MigrationsRetrying' || true) == 0 ]] || fail "an ignored run recorded a Retrying event"
    ok "ignored eviction: told as not counted, and why, in the log and every report"
}

# Defect 6: a gate killed with -9 mid-way through a Never Job (backoffLimit 3: four
# failed pods fail it), then the same command again. The rerun re-attaches; its job log
# and its reports list every failed run (runs 1-2, which the first process reported,
# their pods still there, and runs 3-4), each once with its own text; every run has one
# event with its own text: the rerun records none a second time. A third run, after the
# Job failed, lists the runs its memory holds.
scenario_rerun_never() {
    local go=$T/go
    job_manifest "$T/rn.yaml" rn Never 3 "$(job_script rn "$(count_runs "$T/rn.count")
echo \"run \$n: migrating\"
if [ \$n -eq 3 ]; then until [ -f '$go' ]; do sleep 0.05; done; fi
sleep 0.2; echo \"run \$n failed\" > \"\${KUBESIM_TERMINATION_LOG:-/dev/termination-log}\" 2>/dev/null; exit 3")"
    # shellcheck disable=SC2046
    gate_bg "$T/first.log" $(gate_args "$T/rn.yaml" | sed "s|$T/rep|$T/rep1|")
    wait_for 30 "the Job" grep -q "created Job" "$T/first.log"
    local job
    job=$(job_of "$T/first.log")
    wait_for 60 "run 2's line" grep -q "pod 2 of 4 failed" "$T/first.log"
    wait_for 30 "run 2's event" bash -c "[[ \$(kubectl get events -n $NS -o json | jq '[.items[] | select(.reason == \"MigrationsRetrying\")] | length') == 2 ]]"
    wait_for 60 "run 3" grep -qx 3 "$T/rn.count"
    kill -KILL "$GATE_PID"
    wait_exit "$GATE_PID" 10
    gate_events "$NS" "$job" >"$T/events.before"
    # shellcheck disable=SC2046
    gate_bg "$T/second.log" $(gate_args "$T/rn.yaml")
    wait_for 30 "the re-attach" grep -q "re-attached to Job $NS/$job" "$T/second.log"
    touch "$go"
    wait_exit "$GATE_PID" 90
    expect_rc 1 "four failed pods, backoffLimit 3"
    [[ $(jobs_in "$NS") == "$job" ]] || fail "jobs: $(jobs_in "$NS" | tr '\n' ' '), want only $job"
    # The earlier runs' pods are still there: four failed pods.
    pods_of "$NS" "$job" | jq -r '.items[] | select(.status.phase == "Failed") | .metadata.uid' | sort >"$T/uids"
    [[ $(wc -l <"$T/uids") == 4 ]] || fail "want 4 failed pods: $(pods_of "$NS" "$job" | jq -c '[.items[] | [.metadata.name, .status.phase]]')"
    # The rerun's reports: every failed run once, oldest first, each with its own text.
    local rj=$T/rep/run.json n
    jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[].key' "$rj" | sort >"$T/keys"
    diff -u "$T/uids" "$T/keys" >&2 || fail "run.json's failed runs are not the 4 failed pods, each once"
    for n in 1 2 3 4; do
        jq -e --argjson i $((n - 1)) --arg want "run $n failed" '.steps[] | select(.name == "pre-migrations")
            | .failed_runs[$i] | .counted and .run == ($i + 1) and (.description | contains($want))' "$rj" >/dev/null ||
            fail "run.json's failed run $n is not run $n: $(jq -c --argjson i $((n - 1)) '.steps[].failed_runs[$i] | {run, key, description}' "$rj")"
        grep -qE "pre-migrations failed run $n \(attempt $n of 4\):.*run $n failed" "$T/rep/junit.xml" ||
            fail "junit.xml lacks failed run $n: $(grep -o 'pre-migrations failed run [^<]*' "$T/rep/junit.xml")"
        grep -qE "^\*\*pre-migrations, failed run $n\*\* \(attempt $n of 4.*run $n failed" "$T/rep/summary.md" ||
            fail "summary.md lacks failed run $n: $(grep -F '**pre-migrations' "$T/rep/summary.md")"
    done
    # Every run one event, with its own text (runs 1-3 a retry, run 4 the failure); the
    # rerun recorded no second one for runs 1-2.
    gate_events "$NS" "$job" >"$T/events"
    for n in 1 2 3; do
        [[ $(grep -cE "^MigrationsRetrying.*: run $n failed" "$T/events") == 1 ]] ||
            fail "want one MigrationsRetrying event for run $n: $(cat "$T/events")"
    done
    [[ $(event_summary "$NS" "$job" | tr '\n' ' ') == "1 MigrationsFailed 3 MigrationsRetrying " ]] ||
        fail "events: $(event_summary "$NS" "$job" | tr '\n' ' '), want 3 MigrationsRetrying and 1 MigrationsFailed"
    grep -qF "$(grep -E ': run 1 failed' "$T/events.before" | cut -f2)" "$T/events" || fail "run 1's event changed"
    # The rerun's job log agrees with its reports and the events, run for run.
    check_runs "$T/second.log" "$job" 1
    grep -qE "^pre-migrations: failed \(MigrationsJobFailed\).*run 4 failed" "$T/second.log" ||
        fail "the failed line does not name run 4: $(grep '^pre-migrations' "$T/second.log")"
    # Once more, on the failed Job whose memory the rerun wrote at its end: the reports
    # list the four runs the memory holds (their pods still there), and no event is new.
    event_summary "$NS" "$job" >"$T/events.2"
    # shellcheck disable=SC2046
    run_envgate 60 "$T/third.log" gate $(gate_args "$T/rn.yaml" | sed "s|$T/rep|$T/rep3|")
    expect_rc 1 "the same failed Job"
    log_has "$T/third.log" "4 failed run(s) an earlier run of the gate counted on this Job"
    jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[].key' "$T/rep3/run.json" | sort >"$T/keys3"
    diff -u "$T/uids" "$T/keys3" >&2 || fail "the third run's run.json does not list the 4 failed pods, each once"
    for n in 1 2 3 4; do
        jq -e --argjson i $((n - 1)) --arg want "run $n failed" '.steps[] | select(.name == "pre-migrations")
            | .failed_runs[$i] | .counted and .attempt == ($i + 1) and (.description | contains($want))' "$T/rep3/run.json" >/dev/null ||
            fail "the third run's failed run $n is not run $n: $(jq -c '.steps[].failed_runs[] | {run, attempt, description}' "$T/rep3/run.json")"
    done
    [[ $(event_summary "$NS" "$job") == "$(cat "$T/events.2")" ]] || fail "events changed on the third run: $(event_summary "$NS" "$job")"
    ok "kill -9 + rerun of a Never Job: 4 runs in the reports, one event each; a later run lists the runs remembered"
}

# Reruns list remembered runs: an OnFailure Job (backoffLimit 6) whose pod crashes twice,
# is deleted by hand during its third run, and whose replacement crashes once: four
# failed runs, three of them in a pod that is gone. envgate (CI job 101) is killed -9
# once its memory holds the four and the pod is gone, then run again (CI job 102): the
# rerun's job log, run.json, junit.xml and summary.md list the four runs once each, in
# the order the first run listed them; the three whose pod is gone from the gate's
# memory, with their text and counts, "pod gone; its log tail is in the report of the
# job that saw it: <job 101>" (the deletion: "... kept no log tail of it" when its log
# was gone before job 101 could read it, as on kubesim); the fourth read from its pod as
# before. No event twice.
scenario_rerun_pods_gone() {
    local release=$T/release first=https://gitlab.example/acme/app/-/jobs/101
    local second=https://gitlab.example/acme/app/-/jobs/102
    job_manifest "$T/rg.yaml" rg OnFailure 6 "$(job_script rg "$(count_runs "$T/rg.count")
echo \"run \$n: migrating\"
if [ \$n -eq 3 ]; then sleep 60; fi
if [ \$n -le 4 ]; then sleep 0.2; echo \"run \$n failed\" > \"\${KUBESIM_TERMINATION_LOG:-/dev/termination-log}\" 2>/dev/null; exit 3; fi
until [ -f '$release' ]; do sleep 0.05; done; echo migrated")"
    # shellcheck disable=SC2046
    CI_JOB_URL=$first gate_bg "$T/first.log" $(gate_args "$T/rg.yaml" | sed "s|$T/rep|$T/rep1|")
    wait_for 30 "the Job" grep -q "created Job" "$T/first.log"
    local job pod uid
    job=$(job_of "$T/first.log")
    wait_for 60 "run 3" grep -qx 3 "$T/rg.count"
    wait_for 30 "the second retry line" grep -q "attempt 2 of 6 failed" "$T/first.log"
    pod=$(live_pod "$NS" "$job")
    uid=$("${K[@]}" get pod -n "$NS" "$pod" -o jsonpath='{.metadata.uid}')
    "${K[@]}" delete pod -n "$NS" "$pod" --wait=false >/dev/null
    wait_for 60 "the deletion's line" grep -qE "^pre-migrations: retrying .*pod $pod was deleted" "$T/first.log"
    wait_for 60 "run 5" grep -qx 5 "$T/rg.count"
    wait_for 30 "four retry lines" bash -c "[[ \$(grep -c '^pre-migrations: retrying' '$T/first.log') == 4 ]]"
    wait_for 90 "pod $pod to be gone" bash -c "! kubectl get pod -n $NS $pod >/dev/null 2>&1"
    # The memory patch that counts the fourth run (the one write that carries the runs).
    wait_for 30 "the memory of four failed runs" bash -c "[[ \$(kubectl get job -n $NS $job -o json | jq -r '.metadata.annotations[\"envgate.dev/observed-failures\"] // \"{}\" | fromjson | .observed_failures // 0') == 4 ]]"
    kill -KILL "$GATE_PID"
    wait_exit "$GATE_PID" 10
    gate_events "$NS" "$job" >"$T/events.before"
    local other want
    other=$(live_pod "$NS" "$job")
    want=$(printf '%s\n' "$uid/migrations/1" "$uid/migrations/2" "$uid" \
        "$("${K[@]}" get pod -n "$NS" "$other" -o jsonpath='{.metadata.uid}')/migrations/1")
    # shellcheck disable=SC2046
    CI_JOB_URL=$second gate_bg "$T/second.log" $(gate_args "$T/rg.yaml")
    wait_for 30 "the re-attach" grep -q "re-attached to Job $NS/$job" "$T/second.log"
    touch "$release"
    wait_exit "$GATE_PID" 90
    expect_rc 0 "the replacement passes"
    log_has "$T/second.log" "4 failed run(s) an earlier run of the gate counted on this Job"
    local gone="pod gone; its log tail is in the report of the job that saw it: $first" n
    local no_tail="pod gone; the job that saw it kept no log tail of it: $first" deletion
    for n in 1 2; do
        grep -qxF "failed run $n (pod $pod, container migrations): $gone" "$T/second.log" ||
            fail "the rerun's log does not list run $n as remembered: $(grep -E '^(log of )?failed run' "$T/second.log")"
    done
    # The deletion's log: read by job 101 while the pod terminated (the control plane),
    # or already gone (kubesim deletes at once): the rerun says which.
    deletion=$no_tail
    grep -q "^log of failed run 3 " "$T/first.log" && deletion=$gone
    grep -qxF "failed run 3 (pod $pod): $deletion" "$T/second.log" ||
        fail "the rerun's log does not list the deletion as remembered ($deletion): $(grep -E '^(log of )?failed run' "$T/second.log")"
    grep -qE "^(log of )?failed run 4 \(pod $other, container migrations\): .*read when the gate saw the failure" "$T/second.log" ||
        fail "the rerun's log does not read run 4 from its pod: $(grep -E '^(log of )?failed run' "$T/second.log")"
    [[ $(grep -cE '^(log of )?failed run [0-9]' "$T/second.log") == 4 ]] ||
        fail "the rerun's log lists another number of runs than 4: $(grep -E '^(log of )?failed run' "$T/second.log")"
    # run.json: the four runs once each, in the first run's order, the first three
    # remembered (their text, their counts, who saw them), the fourth read again.
    local rj=$T/rep/run.json
    diff -u <(echo "$want") <(jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[].key' "$rj") >&2 ||
        fail "run.json's failed runs are not the four, once each, in order"
    jq -e --arg first "$first" '[.steps[] | select(.name == "pre-migrations") | .failed_runs[]] as $r
        | ($r | map(.run)) == [1, 2, 3, 4]
        and ($r[0:3] | all(.remembered and .seen_by == $first and .log_tail == "" and .log_command == ""))
        and ($r[0].description | contains("run 1 failed")) and ($r[1].description | contains("run 2 failed"))
        and ($r[2].description | contains("was deleted")) and ($r[3].description | contains("run 4 failed"))
        and ($r[0:2] | map(.attempt)) == [1, 2] and ($r | map(.limit) | all(. > 0))
        and ($r[3] | (.remembered | not) and (.log_tail | contains("run 4: migrating")))' "$rj" >/dev/null ||
        fail "run.json: $(jq -c '.steps[].failed_runs[] | {run, key, attempt, limit, remembered, seen_by, description, log_note}' "$rj")"
    for n in 1 2 3 4; do
        [[ $(grep -cE "pre-migrations failed run $n \(attempt [0-9]+ of [0-9]+\)" "$T/rep/junit.xml") == 1 ]] ||
            fail "junit.xml does not name failed run $n once: $(grep -o 'pre-migrations failed run [^<]*' "$T/rep/junit.xml")"
        [[ $(grep -cE "^\*\*pre-migrations, failed run $n\*\*" "$T/rep/summary.md") == 1 ]] ||
            fail "summary.md does not list failed run $n once: $(grep -F '**pre-migrations' "$T/rep/summary.md")"
    done
    local f kept=3
    [[ $deletion == "$gone" ]] || kept=2
    for f in junit.xml summary.md; do
        [[ $(grep -cF "$gone" "$T/rep/$f") == "$kept" && $(grep -cF "$no_tail" "$T/rep/$f") == $((3 - kept)) ]] ||
            fail "$f does not say where the 3 remembered runs' tails are: $(grep -F "pod gone" "$T/rep/$f")"
    done
    grep -A3 -F '**pre-migrations, failed run 1**' "$T/rep/summary.md" | grep -qF "run 1 failed" || fail "summary.md's run 1 lacks its text"
    # Four runs, four Retrying events, each its own; the rerun recorded none again.
    [[ $(event_summary "$NS" "$job" | tr '\n' ' ') == "4 MigrationsRetrying " ]] ||
        fail "events: $(event_summary "$NS" "$job" | tr '\n' ' '), want 4 MigrationsRetrying"
    [[ $(gate_events "$NS" "$job") == "$(cat "$T/events.before")" ]] || fail "the rerun changed the events"
    ok "kill -9 + rerun, failed pods gone: 4 runs listed once each, in order, 3 from memory"
}

# Defect 8: --timeout while an OnFailure Job retries: exit 1 GateTimeout; the message
# says the migration still runs and how to stop it, the exact command printed on a line
# of its own (as every command the log prints, to be copied whole), which the test runs
# (it exits 0 within 5 s and the Job and its pods go); run.json's exit_code is 1;
# run.json, junit.xml and summary.md carry the message with the command. (The retry lines' logs commands are
# commands_e2e.sh's subject: on a crash loop of 1 s runs under load, one printed late
# already shows the next run.)
scenario_timeout_retrying() {
    job_manifest "$T/tr.yaml" tr OnFailure 1000 "$(job_script tr "$(count_runs "$T/tr.count")
echo \"run \$n: migrating\"; sleep 1; exit 3")"
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args "$T/tr.yaml") --timeout 12s
    wait_exit "$GATE_PID" 60
    expect_rc 1 "the gate's timeout"
    local job stop line
    job=$(job_of "$T/gate.log")
    grep -q "retrying (RetryingPreMigrations)" "$T/gate.log" || fail "the Job did not retry before the timeout"
    line=$(grep -E "^pre-migrations: GateTimeout: " "$T/gate.log") || fail "no GateTimeout line"
    [[ $line == *"its migration still runs (and retries). To stop it:" ]] || fail "the timeout does not say the migration still runs, and how to stop it: $line"
    # The command on the next line of its own, alone and indented, as failure lines print
    # theirs (JobLog::command).
    stop=$(awk '/^pre-migrations: GateTimeout: / { on = 1; next } on && NF { print; exit }' "$T/gate.log")
    [[ $stop == "    kubectl -n $NS delete job/$job" ]] || fail "the timeout prints no command of its own to stop the Job: $(grep -A3 GateTimeout "$T/gate.log")"
    stop=${stop#    }
    [[ $("${K[@]}" get job -n "$NS" "$job" -o jsonpath='{.status.active}') == 1 ]] || fail "the Job does not run on after the timeout"
    timeout 5 bash -c "$stop" >"$T/stop.out" 2>&1 || fail "the printed command failed: $stop: $(cat "$T/stop.out")"
    wait_for 60 "the Job to be gone" bash -c "! kubectl get job -n $NS $job 2>/dev/null"
    wait_for 60 "its pods to be gone" bash -c "[[ \$(kubectl get pods -n $NS -l job-name=$job -o json | jq '.items | length') == 0 ]]"
    local rj=$T/rep/run.json
    jq -e '.steps[] | select(.name == "pre-migrations") | .state == "failed" and .reason == "GateTimeout" and .exit_code == 1' "$rj" >/dev/null ||
        fail "run.json: $(jq -c '.steps[] | {name, state, reason, exit_code}' "$rj")"
    [[ $(jq -r '.steps[] | select(.name == "pre-migrations") | .message' "$rj") == *"To stop it: $stop" ]] ||
        fail "run.json's message lacks the stop command"
    check_reports "$T/rep" e1 failed GateTimeout
    grep -qF "To stop it: $stop" "$T/rep/junit.xml" || fail "junit.xml lacks the stop command"
    grep -qE "^\| e1 \| pre-migrations \| failed \|.*its migration still runs \(and retries\)\. To stop it: kubectl" "$T/rep/summary.md" ||
        fail "summary.md's row lacks the message: $(grep pre-migrations "$T/rep/summary.md" | head -3)"
    ok "timeout while retrying: exit 1, the migration still runs, the command stops it"
}

# Defect 8: the summary table keeps each message's run identity: a failed Never Job
# whose last failure carries a long message (a termination message of 600 bytes): the
# gate's row names the pod and its count ("pod 2 of 2 failed"), and the failure's whole
# text is in the report too (its failed runs).
scenario_summary_identity() {
    job_manifest "$T/si.yaml" si Never 1 "$(job_script si "$(count_runs "$T/si.count")
echo \"run \$n: migrating\"; sleep 0.2
printf 'run %s failed: ' \$n > \"\${KUBESIM_TERMINATION_LOG:-/dev/termination-log}\"
for i in \$(seq 40); do printf 'PG::LockNotAvailable %s ' \$i; done >> \"\${KUBESIM_TERMINATION_LOG:-/dev/termination-log}\"
exit 3")"
    # shellcheck disable=SC2046
    run_envgate 120 "$T/gate.log" gate $(gate_args "$T/si.yaml")
    expect_rc 1 "two failed pods, backoffLimit 1"
    local job pod row
    job=$(job_of "$T/gate.log")
    pod=$(jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[1].pod' "$T/rep/run.json")
    row=$(grep -E "^\| e1 \| pre-migrations \|" "$T/rep/summary.md") || fail "no pre-migrations row in summary.md"
    [[ $row == *"pod $pod "* && $row == *"pod 2 of 2 failed, 0 left"* ]] ||
        fail "summary.md's row lacks the run identity (pod $pod, pod 2 of 2): $row"
    grep -qF "$(jq -r '.steps[] | select(.name == "pre-migrations") | .failed_runs[-1].description' "$T/rep/run.json")" "$T/rep/summary.md" ||
        fail "summary.md lacks the last failure's whole text"
    # (An event holds at most 1 KB of the message: check_runs' word-for-word match of
    # the events does not apply to a message this long.)
    [[ $(event_summary "$NS" "$job" | tr '\n' ' ') == "1 MigrationsFailed 1 MigrationsRetrying " ]] ||
        fail "events: $(event_summary "$NS" "$job" | tr '\n' ' ')"
    [[ $(jq '[.steps[] | select(.name == "pre-migrations") | .failed_runs[] | select(.counted)] | length' "$T/rep/run.json") == 2 ]] ||
        fail "run.json does not list 2 failed runs"
    ok "summary.md: the row names the pod and its count; the failure's whole text is there"
}

# Defect 8: a suspended Job is said once: one "suspended" line however many passes see
# it suspended (its pods stopping, the Suspended condition, a pass at every progress
# interval), and the gate goes on once it is resumed.
scenario_suspended_once() {
    job_manifest "$T/so.yaml" so OnFailure 2 "$(job_script so "$(count_runs "$T/so.count")
echo \"run \$n: migrating\"; if [ \$n -le 1 ]; then sleep 60; fi
until [ -f '$T/go' ]; do sleep 0.05; done; echo migrated")" "" "      terminationGracePeriodSeconds: $(cluster_secs 2)"
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args "$T/so.yaml") --progress-interval 200ms
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    local job
    job=$(job_of "$T/gate.log")
    wait_for 30 "a running pod" live_pod "$NS" "$job"
    "${K[@]}" patch job -n "$NS" "$job" --type merge -p '{"spec":{"suspend":true}}' >/dev/null
    wait_for 30 "the suspended line" grep -q "^pre-migrations: suspended" "$T/gate.log"
    wait_for 60 "the pods to go" bash -c "[[ \$(kubectl get pods -n $NS -l job-name=$job -o json | jq '.items | length') == 0 ]]"
    wait_for 30 "the Suspended condition" bash -c "kubectl get job -n $NS $job -o json | jq -e '.status.conditions[]? | select(.type == \"Suspended\" and .status == \"True\")'"
    # A pass at every progress interval: five more passes see it suspended.
    wait_for 30 "five passes after the condition" bash -c "[[ \$(tail -n +$(($(wc -l <"$T/gate.log") + 1)) '$T/gate.log' | grep -c 'still running after') -ge 5 ]]"
    [[ $(log_count "$T/gate.log" '^pre-migrations: suspended') == 1 ]] ||
        fail "want one suspended line: $(grep '^pre-migrations: suspended' "$T/gate.log")"
    "${K[@]}" patch job -n "$NS" "$job" --type merge -p '{"spec":{"suspend":false}}' >/dev/null
    wait_for 30 "a new pod" live_pod "$NS" "$job"
    touch "$T/go"
    wait_exit "$GATE_PID" 60
    expect_rc 0 "resumed and passed"
    [[ $(log_count "$T/gate.log" '^pre-migrations: suspended') == 1 ]] ||
        fail "want one suspended line: $(grep '^pre-migrations: suspended' "$T/gate.log")"
    [[ $(jq '[.steps[] | select(.name == "pre-migrations") | .history[] | select(.state == "suspended")] | length' "$T/rep/run.json") == 1 ]] ||
        fail "run.json's history tells the suspension more than once: $(jq -c '.steps[].history' "$T/rep/run.json")"
    ok "suspended: one line however many passes, then resumed and passed"
}

"scenario_$SCENARIO"
