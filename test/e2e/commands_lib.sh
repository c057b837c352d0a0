# Sourced after lib.sh: the watcher that runs every command a gate prints the moment it
# is printed, and the checks of what it saw and of the reports' commands (issue 23).
# Used by commands_e2e.sh (kubesim, the control plane) and test/node/gate_node.sh (the
# real kubelet).

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
