#!/usr/bin/env bash
# Issue 23: every command a gate prints works when it is printed. Usage commands_e2e.sh
# ENVGATE KUBESIM SCENARIO. A watcher runs each command the gate prints on a line of its
# own the moment it appears (and the reports' commands once the gate ended): each must
# exit 0 within 5 s, and a `kubectl logs` must show the run its line names ("run N:"),
# or the line must say the pod is gone. On kubesim, or on the real control plane with
# ENVGATE_TEST_CLUSTER=controlplane (CTest cp_e2e_commands_*).
ENVGATE=$1 KUBESIM=$2 SCENARIO=$3
source "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2119
start_kubesim

NS=$(test_ns cmds)
gate_args() { echo --env e1 --gate "$1" --manifest "$2" --namespace "${3:-$NS}" --report-dir "$4"; }

# watch_commands LOG DIR: until DIR/stop exists and LOG is read to its end, runs every
# command LOG prints on a line of its own as it appears: DIR/N.line (the verdict line
# before it), DIR/N.cmd, DIR/N.out, DIR/N.rc ("exit-code milliseconds").
watch_commands() {
    local log=$1 dir=$2 n=0 seen=0 line verdict="" cmd rc start
    local -a lines
    while :; do
        local done=0
        [[ -f $dir/stop ]] && done=1
        mapfile -t lines < <(tail -n +$((seen + 1)) "$log" 2>/dev/null)
        for line in "${lines[@]}"; do
            seen=$((seen + 1))
            if [[ $line =~ ^\ +(kubectl\ .*)$ ]]; then
                n=$((n + 1))
                cmd=${BASH_REMATCH[1]}
                printf '%s\n' "$verdict" >"$dir/$n.line"
                printf '%s\n' "$cmd" >"$dir/$n.cmd"
                start=$(date +%s%N)
                rc=0
                timeout 5 bash -c "$cmd" >"$dir/$n.out" 2>&1 || rc=$?
                echo "$rc $((($(date +%s%N) - start) / 1000000))" >"$dir/$n.rc"
            elif [[ $line =~ ^[a-z-]+:\ (retrying|failing|failed)\  ]]; then
                verdict=$line
            fi
        done
        ((done)) && break
        sleep 0.02
    done
}

# start_watch LOG: the watcher in the background (CMDS: its directory).
start_watch() {
    CMDS=$T/cmds
    mkdir -p "$CMDS"
    : >"$1"
    watch_commands "$1" "$CMDS" &
    WATCH_PID=$!
    BG_PIDS+=("$WATCH_PID")
}

stop_watch() {
    touch "$CMDS/stop"
    wait "$WATCH_PID" || true
}

# check_printed LOG: every printed command exited 0 within 5 s; a logs command showed
# the run its line names (attempt N of a one-container OnFailure pod, or WANT_RUN). A
# command whose pod the Job controller deleted between the line and its run (the pod at
# the restart limit) may fail only when a later line of LOG says that pod is gone.
check_printed() {
    local log=$1 f n rc ms line cmd want pod
    local count=0
    for f in "$CMDS"/*.cmd; do
        [[ -e $f ]] || fail "the gate printed no command"
        n=$(basename "$f" .cmd)
        count=$((count + 1))
        read -r rc ms <"$CMDS/$n.rc"
        line=$(cat "$CMDS/$n.line")
        cmd=$(cat "$f")
        if [[ $rc != 0 ]]; then
            pod=$(sed -nE 's|.* pod/([a-z0-9.-]+) .*|\1|p' <<<"$cmd")
            [[ -n $pod ]] && grep -qi "not found" "$CMDS/$n.out" && grep -qF "; pod $pod is gone" "$log" ||
                fail "printed command failed (exit $rc): $cmd: $(head -5 "$CMDS/$n.out") (after: $line)"
            echo "printed command failed once its pod was gone, which a later line says: $cmd"
            continue
        fi
        ((ms < 5000)) || fail "printed command took ${ms}ms: $cmd"
        if [[ $cmd == *" logs "* ]]; then
            want=$(sed -nE 's/.*attempt ([0-9]+) of [0-9]+ failed.*/\1/p' <<<"$line")
            [[ -n $want ]] || want=${WANT_RUN:-}
            [[ -z $want ]] || grep -q "^run $want: " "$CMDS/$n.out" ||
                fail "printed '$cmd' after '$line' shows not run $want: $(head -5 "$CMDS/$n.out")"
        elif [[ $cmd == *" describe job/"* && $line == *"failed"* && $line != *" is gone"* &&
            $line != *"failed: "* ]]; then
            fail "a failed run described by its Job while the line does not say its pod is gone: $line"
        fi
        echo "printed command ok (${ms}ms): $cmd"
    done
    echo "$count printed commands run"
}

# check_reported REP GATE: once the gate ended, each failed run's log_command in
# run.json exits 0 within 5 s and shows that run (its container_run), or it is empty
# and its note says why; junit.xml carries the same commands.
check_reported() {
    local rep=$1 gate=$2 i runs cmd note crun out
    runs=$(jq --arg g "$gate" '.steps[] | select(.name == $g) | .failed_runs | length' "$rep/run.json")
    for ((i = 0; i < runs; i++)); do
        cmd=$(jq -r --arg g "$gate" --argjson i "$i" '.steps[] | select(.name == $g) | .failed_runs[$i].log_command' "$rep/run.json")
        note=$(jq -r --arg g "$gate" --argjson i "$i" '.steps[] | select(.name == $g) | .failed_runs[$i].log_note' "$rep/run.json")
        crun=$(jq -r --arg g "$gate" --argjson i "$i" '.steps[] | select(.name == $g) | .failed_runs[$i].container_run' "$rep/run.json")
        if [[ -z $cmd ]]; then
            [[ $note == *"no longer shows it"* || $note == *"is gone"* || $note == *"could not be read"* ]] ||
                fail "run.json failed run $((i + 1)): no command, and the note does not say why: $note"
            continue
        fi
        if [[ $cmd == *" get events "* ]]; then
            continue # the pod was gone before the gate read it: its events
        fi
        out=$(timeout 5 bash -c "$cmd" 2>&1) || fail "run.json failed run $((i + 1)): '$cmd' fails now: $out"
        if [[ $cmd == *" logs "* && $crun -gt 0 ]]; then
            grep -q "^run $crun: " <<<"$out" || fail "run.json failed run $((i + 1)): '$cmd' shows not run $crun: $out"
        fi
        grep -qF -- "$cmd" "$rep/junit.xml" || fail "junit.xml lacks failed run $((i + 1))'s command $cmd"
        echo "reported command ok: $cmd"
    done
}

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
    ok "deleted by hand: the line says the pod is gone, its command works"
}

"scenario_$SCENARIO"
