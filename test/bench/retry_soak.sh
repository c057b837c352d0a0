#!/usr/bin/env bash
# Retry accounting under load on the real control plane (issue 11): runs the e2e
# scenario retry_accounting (an always-failing migration under restartPolicy Never and
# OnFailure, backoffLimit 4) RUNS times against one control plane while two CPU burners
# run, and prints what the retry lines and events said. The scenario itself fails a run
# when a retry line repeats or skips back, names a run beyond its count, says "N left"
# with N > 0 for the run that exhausted the budget, or the events differ from the count.
# Usage: test/bench/retry_soak.sh [RUNS] [BUILD_DIR]   (default 50, build)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-50}
build=${2:-build}
bin=$build/test/controlplane/envgate-controlplane
[[ -x $bin ]] || { echo "retry_soak: $bin is missing (build with -DENVGATE_CONTROLPLANE=ON)" >&2; exit 2; }
state=$(mktemp -d /tmp/envgate-soak.XXXXXX)
burners=()
cleanup() {
    for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
    test/controlplane/run.sh stop "$bin" "$state" || true
    rm -rf "$state"
}
trap cleanup EXIT
test/controlplane/run.sh start "$bin" "$state"
for _ in 1 2; do
    (while :; do :; done) &
    burners+=($!)
done
export ENVGATE_TEST_CLUSTER=controlplane ENVGATE_CONTROLPLANE_BIN=$bin ENVGATE_CONTROLPLANE_STATE=$state
export PATH=$PWD/$build/test/controlplane/bin:$PATH
figures=$state/figures.txt
failed=0
start=$(date +%s)
for i in $(seq 1 "$runs"); do
    if ! bash test/e2e/gate_e2e.sh "$build/runner/envgate" "$build/test/kubesim/kubesim" retry_accounting \
        >"$state/run-$i.log" 2>&1; then
        failed=$((failed + 1))
        echo "run $i FAILED:" >&2
        grep -E "^FAIL" "$state/run-$i.log" >&2 || tail -5 "$state/run-$i.log" >&2
    fi
    grep '^retry-figures' "$state/run-$i.log" >>"$figures" || true
done
elapsed=$(($(date +%s) - start))
echo "retry_soak: $runs runs on the real control plane under two CPU burners in ${elapsed}s; $failed failed"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for policy in Never OnFailure; do
    grep "policy=$policy " "$figures" | awk -v policy="$policy" '
        { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          n++; lines += v["retry_lines"]; runs += v["runs"]; ev += v["retry_events"]
          if (v["retry_lines"] == v["last_count"]) every++
          hist[v["runs"]]++ }
        END { printf "%-9s %d gates: %d retry lines, %d retry events (= the counts the lines gave), %d container runs;", policy, n, lines, ev, runs
              printf " gates whose every failed run before the last had its own line: %d of %d; runs per gate:", every, n
              for (r in hist) printf " %s runs x%d", r, hist[r]; printf "\n" }'
done
exit $((failed > 0))
