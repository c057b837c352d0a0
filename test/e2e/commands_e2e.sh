#!/usr/bin/env bash
# Issue 23: every command a gate prints works when it is printed. Usage commands_e2e.sh
# ENVGATE KUBESIM SCENARIO. A watcher runs each command the gate prints on a line of its
# own the moment it appears (and the reports' commands once the gate ended): each must
# exit 0 within 5 s, and a `kubectl logs` must show the run its line names ("run N:"),
# or the line must say the pod is gone. On kubesim, or on the real control plane with
# ENVGATE_TEST_CLUSTER=controlplane (CTest cp_e2e_commands_*).
ENVGATE=$1 KUBESIM=$2 SCENARIO=$3
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/commands_lib.sh"
# shellcheck disable=SC2119
start_kubesim

NS=$(test_ns cmds)
gate_args() { echo --env e1 --gate "$1" --manifest "$2" --namespace "${3:-$NS}" --report-dir "$4"; }

# A container that fails twice (each run 1 s), then passes: two retry lines, each with
# the command that shows its run, run by the watcher at once.
scenario_crashloop() {
    local script
    script=$(job_script crash "$(count_runs "$T/crash.count")
echo \"run \$n: migrating users\"
if [ \$n -le 2 ]; then sleep 1; echo 'PG::LockNotAvailable' > \"\$KUBESIM_TERMINATION_LOG\"; exit 1; fi
sleep 1; echo migrated")
    job_manifest "$T/crash.yaml" crash OnFailure 3 "$script"
    start_watch "$T/gate.log"
    # shellcheck disable=SC2046
    run_envgate 90 "$T/gate.log" gate $(gate_args pre-migrations "$T/crash.yaml" "$NS" "$T/rep")
    stop_watch
    expect_rc 0 "crash twice, then pass"
    check_printed "$T/gate.log"
    [[ $(log_count "$T/gate.log" "^    kubectl .* logs pod/") -ge 2 ]] || fail "want a logs command per retry line"
    log_lacks "$T/gate.log" "logs job/"
    local job
    job=$(job_of "$T/gate.log")
    gate_events "$NS" "$job" >"$T/events.log"
    [[ $(log_count "$T/events.log" '^MigrationsRetrying') == 2 ]] || fail "want 2 retry events: $(cat "$T/events.log")"
    [[ $(log_count "$T/events.log" "logs pod/$job-[a-z0-9]+ -c migrations --previous") == 2 ]] ||
        fail "retry events do not name the pod with --previous: $(cat "$T/events.log")"
    check_reported "$T/rep" pre-migrations
    ok "crash-loop: each printed command named the pod and showed its run, when printed and in the reports"
}

# The restart limit (backoffLimit 1): the controller deletes the pod; the failing and
# failed lines then say the pod is gone and name commands that work (no `logs job/`,
# which waited ~20 s and timed out).
scenario_restart_limit() {
    local script
    script=$(job_script limit "$(count_runs "$T/limit.count")
echo \"run \$n: relation users missing\"; sleep 0.5; echo 'relation users missing' > \"\$KUBESIM_TERMINATION_LOG\"; exit 7")
    job_manifest "$T/limit.yaml" limit OnFailure 1 "$script"
    start_watch "$T/gate.log"
    # shellcheck disable=SC2046
    run_envgate 90 "$T/gate.log" gate $(gate_args pre-migrations "$T/limit.yaml" "$NS" "$T/rep")
    stop_watch
    expect_rc 1 "past the restart limit"
    check_printed "$T/gate.log"
    log_lacks "$T/gate.log" "logs job/"
    grep -qE "^pre-migrations: failed .*is gone|^pre-migrations: failing .* is gone" "$T/gate.log" ||
        fail "no line says the failed run's pod is gone"
    check_reported "$T/rep" pre-migrations
    ok "restart limit: every printed command worked when printed; the lines say the pod is gone"
}

# restartPolicy Never, the running pod deleted by hand: the line about it says the pod
# is gone (it is), and names a command that works.
scenario_never_deleted() {
    local script release=$T/release
    script=$(job_script dbh "$(count_runs "$T/dbh.count")
echo \"run \$n: migrating\"
if [ \$n -le 1 ]; then sleep 60; fi
until [ -f '$release' ]; do sleep 0.05; done; echo migrated")
    job_manifest "$T/dbh.yaml" dbh Never 3 "$script"
    start_watch "$T/gate.log"
    # shellcheck disable=SC2046
    gate_bg "$T/gate.log" $(gate_args pre-migrations "$T/dbh.yaml" "$NS" "$T/rep")
    wait_for 30 "the Job" grep -q "created Job" "$T/gate.log"
    local job pod
    job=$(job_of "$T/gate.log")
    wait_for 30 "a running pod" live_pod "$NS" "$job"
    pod=$(live_pod "$NS" "$job")
    "${K[@]}" delete pod -n "$NS" "$pod" --wait=false >/dev/null
    wait_for 60 "the retry line" grep -qE "^pre-migrations: retrying .*pod $pod was deleted" "$T/gate.log"
    touch "$release"
    wait_exit "$GATE_PID" 60
    stop_watch
    expect_rc 0 "the replacement passes"
    check_printed "$T/gate.log"
    grep -qE "^pre-migrations: retrying .*pod $pod was deleted.*; pod $pod is gone" "$T/gate.log" ||
        fail "the line does not say the deleted pod is gone: $(grep '^pre-migrations: retrying' "$T/gate.log")"
    [[ $(log_count "$T/gate.log" "^pre-migrations: retrying .*pod $pod was deleted") == 1 ]] ||
        fail "the deleted pod's line is printed more than once"
    check_reported "$T/rep" pre-migrations
    # One run however the Job's count and the pod's deletion reach the gate (issue 23):
    # one retry line, one Retrying event, one failed run in run.json, junit.xml, summary.md.
    [[ $(log_count "$T/gate.log" '^pre-migrations: retrying') == 1 ]] ||
        fail "retry lines: $(grep '^pre-migrations: retrying' "$T/gate.log"), want one"
    gate_events "$NS" "$job" >"$T/events.log"
    [[ $(log_count "$T/events.log" '^MigrationsRetrying') == 1 ]] || fail "want 1 retry event: $(cut -f1 "$T/events.log")"
    [[ $(jq '.steps[] | select(.name == "pre-migrations") | .failed_runs | length' "$T/rep/run.json") == 1 &&
        $(grep -c 'name="pre-migrations failed run ' "$T/rep/junit.xml") == 1 &&
        $(grep -c '^\*\*pre-migrations, failed run ' "$T/rep/summary.md") == 1 ]] ||
        fail "the reports do not list one failed run"
    ok "deleted by hand: the line says the pod is gone, its command works"
}

"scenario_$SCENARIO"
