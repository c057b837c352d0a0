#!/usr/bin/env bash
# Starts or stops the one control plane of a test run (the CTest fixture `controlplane`).
#   run.sh start BIN STATE_DIR [FLAG...]   starts it detached (with BIN's FLAGs, e.g.
#                                          --container-restart-backoff=2s); returns once
#                                          it is ready
#   run.sh stop  BIN STATE_DIR   SIGTERM, then checks that no container process is left
# STATE_DIR gets kubeconfig (+ kubeconfig.control), pid, port and controlplane.log.
set -euo pipefail
action=$1 bin=$2 state=$3
shift 3

stop_running() {
    local pid
    pid=$(cat "$state/pid" 2>/dev/null) || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "control plane (pid $pid) still running 30 s after SIGTERM; killing it" >&2
            kill -KILL "$pid"
            return 1
        fi
    fi
    rm -f "$state/pid"
}

# Container processes of the node agent run with their pod directory as cwd.
leftovers() {
    local p cwd
    for p in /proc/[0-9]*; do
        cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
        [[ $cwd == "$state/work/pods/"* ]] && echo "${p#/proc/} $cwd"
    done
    return 0
}

case $action in
start)
    mkdir -p "$state"
    stop_running || true
    rm -rf "$state/work" "$state/kubeconfig" "$state/kubeconfig.control" "$state/port"
    t0=$(date +%s%N)
    setsid "$bin" --port 0 --write-kubeconfig "$state/kubeconfig" --workdir "$state/work" "$@" \
        >"$state/port" 2>"$state/controlplane.log" </dev/null &
    echo $! >"$state/pid"
    for _ in $(seq 1 1200); do
        [[ -s $state/port ]] && break
        kill -0 "$(cat "$state/pid")" 2>/dev/null || { tail -30 "$state/controlplane.log" >&2; exit 1; }
        sleep 0.1
    done
    [[ -s $state/port ]] || { echo "control plane not ready after 120 s" >&2; tail -30 "$state/controlplane.log" >&2; exit 1; }
    KUBECONFIG=$state/kubeconfig kubectl get --raw /readyz >/dev/null
    echo "control plane ready on port $(head -1 "$state/port") in $((($(date +%s%N) - t0) / 1000000)) ms"
    grep -m1 'ready in' "$state/controlplane.log" || true
    ;;
stop)
    stop_running
    left=$(leftovers)
    if [[ -n $left ]]; then
        echo "container processes left behind after shutdown:" >&2
        echo "$left" >&2
        exit 1
    fi
    echo "control plane stopped; no container process left"
    ;;
*)
    echo "usage: run.sh start|stop BIN STATE_DIR" >&2
    exit 2
    ;;
esac
