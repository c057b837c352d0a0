#!/usr/bin/env bash
# `envgate status --output prometheus --textfile`: a held lock with one waiter, a free
# one and a failed one (file store) written into a node-exporter textfile-collector
# directory; the .prom file passes `promtool check metrics` (format and naming lint),
# is replaced atomically (no temporary file left, a reader never sees a partial one)
# and carries each lock's state, holder age and queue length.
# Usage: status_prometheus_test.sh ENVGATE
set -euo pipefail
ENVGATE=$1
for v in $(env | sed -n 's/^\(CI\|CI_[A-Z_]*\|GITLAB_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
T=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || fail "promtool is missing (Debian package prometheus: scripts/install-deps --test)"

cat >"$T/envgate.yml" <<YML
version: 1
defaults:
  namespace: gitlab
  lock: { store: file, path: $T/locks, on_failure: hold, wait_timeout: 10m }
environments:
  - name: gstg
  - name: gprd
YML
cd "$T"
"$ENVGATE" lock acquire gstg --holder pipeline-1 >/dev/null
"$ENVGATE" lock acquire gstg --holder pipeline-2 >"$T/waiter.log" 2>&1 &
pids+=($!)
"$ENVGATE" lock acquire gprd --holder pipeline-3 >/dev/null
"$ENVGATE" lock fail gprd --holder pipeline-3 --step pre-migrations --reason MigrationsJobFailed \
    --message "backoffLimit reached" >/dev/null
for _ in $(seq 1 300); do
    grep -qs '"pipeline-2"' "$T"/locks/gstg.queue/*.json && break
    sleep 0.1
done
grep -qs '"pipeline-2"' "$T"/locks/gstg.queue/*.json || fail "the waiter never queued"

mkdir -p "$T/textfile"
"$ENVGATE" status --output prometheus --textfile "$T/textfile/envgate.prom"
prom=$T/textfile/envgate.prom
[[ -s $prom ]] || fail "no $prom"
[[ $(find "$T/textfile" -type f | wc -l) == 1 ]] || fail "a temporary file was left: $(ls "$T/textfile")"
lint=$(promtool check metrics <"$prom" 2>&1) || fail "promtool check metrics: $lint"
[[ -z $lint ]] || fail "promtool check metrics has remarks: $lint"
has() { grep -qxF -- "$1" "$prom" || fail "$prom lacks: $1"; }
has 'envgate_lock_state{environment="gstg",state="held"} 1'
has 'envgate_lock_state{environment="gprd",state="failed"} 1'
has 'envgate_lock_state{environment="qa",state="free"} 1'
has 'envgate_lock_queue_length{environment="gstg"} 1'
has 'envgate_lock_read_success{environment="qa"} 1'
grep -qE '^envgate_lock_holder_age_seconds\{environment="gstg"\} [0-9.e+-]+$' "$prom" ||
    fail "no holder age for gstg"
[[ $(tail -1 "$prom") == "# EOF" ]] || fail "the last line is not # EOF"

# A second write replaces the file by rename: a reader holding the old one keeps it whole.
exec 3<"$prom"
"$ENVGATE" lock release gstg --holder pipeline-1 >/dev/null
for _ in $(seq 1 300); do
    "$ENVGATE" status gstg --output prometheus --textfile "$prom"
    grep -qxF 'envgate_lock_state{environment="gstg",state="held"} 1' "$prom" &&
        grep -qxF 'envgate_lock_queue_length{environment="gstg"} 0' "$prom" && break
    sleep 0.1
done
grep -qxF 'envgate_lock_queue_length{environment="gstg"} 0' "$prom" || fail "the waiter never took over"
grep -qxF 'envgate_lock_queue_length{environment="gstg"} 1' /dev/fd/3 ||
    fail "the old file, read through an open descriptor, changed"
exec 3<&-
promtool check metrics <"$prom" >/dev/null 2>&1 || fail "promtool rejects the second file"
echo "OK: textfile $prom passes promtool check metrics; held/failed/free, queue and holder age correct"
