#!/usr/bin/env bash
# kubectl is the referee: drives the real kubectl against a fresh kubesim (plain HTTP,
# or TLS with the generated CA and bearer token when $2 is "tls") through the
# scenarios of the kubesim issue. Exits non-zero with the first failed check.
# --time-scale 0.5 keeps the 10 s CrashLoopBackOff window at 5 s: room for two kubectl
# calls on a loaded machine.
set -euo pipefail
BIN=$1
MODE=${2:-plain}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$HERE/testdata
TMP=$(mktemp -d)
PID=
WATCHERS=()
cleanup() {
    for w in "${WATCHERS[@]}"; do kill "$w" 2>/dev/null || true; done
    if [[ -n $PID ]]; then kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
    echo "FAIL ($MODE): $*" >&2
    echo "--- kubesim log" >&2; tail -20 "$TMP/kubesim.log" >&2 || true
    exit 1
}
pass() { echo "ok ($MODE): $*"; }
# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
    local secs=$1 what=$2; shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        (( SECONDS < end )) || fail "timed out waiting for $what"
        sleep 0.05
    done
}

TLS_FLAG=()
[[ $MODE == tls ]] && TLS_FLAG=(--tls)
"$BIN" --port 0 --write-kubeconfig "$TMP/kubeconfig" --time-scale 0.5 "${TLS_FLAG[@]}" \
    >"$TMP/port" 2>"$TMP/kubesim.log" &
PID=$!
wait_for 30 "kubesim to print its port" test -s "$TMP/port"
PORT=$(head -1 "$TMP/port")
export KUBECONFIG=$TMP/kubeconfig HOME=$TMP
K=(kubectl --request-timeout=30s)
"${K[@]}" version >/dev/null || fail "kubectl version"
pass "kubesim on port $PORT, kubectl version"

if [[ $MODE == tls ]]; then
    grep -q 'server: https://127.0.0.1:' "$KUBECONFIG" || fail "kubeconfig server is not https"
    grep -q 'certificate-authority-data:' "$KUBECONFIG" || fail "no CA data in kubeconfig"
    grep -q 'token:' "$KUBECONFIG" || fail "no token in kubeconfig"
    grep 'certificate-authority-data:' "$KUBECONFIG" | awk '{print $2}' | base64 -d >"$TMP/ca.crt"
    code=$(curl -s -o "$TMP/401.json" -w '%{http_code}' --cacert "$TMP/ca.crt" \
        "https://127.0.0.1:$PORT/apis/batch/v1/namespaces/default/jobs")
    [[ $code == 401 ]] || fail "request without token answered $code, want 401"
    [[ $(jq -r .reason "$TMP/401.json") == Unauthorized ]] || fail "401 body is not a Status"
    code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/ca.crt" \
        -H 'Authorization: Bearer wrong' "https://127.0.0.1:$PORT/api/v1/namespaces/default/pods")
    [[ $code == 401 ]] || fail "wrong token answered $code, want 401"
    pass "TLS verified with the generated CA; requests without the token get 401 Status"
fi

"${K[@]}" get jobs -w >"$TMP/jobs-watch.txt" 2>&1 &
WATCHERS+=($!)
"${K[@]}" get pods -w -o json >"$TMP/pods-watch.json" 2>&1 &
WATCHERS+=($!)
sleep 0.5  # let the watches open (their output is checked with deadlines below)

"${K[@]}" create -f "$DATA/crash-job.yaml" | grep -q 'job.batch/crash created' || fail "create -f"
pass "create -f crash-job.yaml"

clbo() {
    "${K[@]}" get pod -l job-name=crash -o json >"$TMP/pod.json" &&
        [[ $(jq -r '.items[0].status.containerStatuses[0].state.waiting.reason' "$TMP/pod.json") == CrashLoopBackOff ]]
}
wait_for 30 "CrashLoopBackOff" clbo
[[ $(jq -r '.items[0].status.containerStatuses[0].lastState.terminated.exitCode' "$TMP/pod.json") == 3 ]] ||
    fail "lastState.terminated.exitCode is not 3"
jq -r '.items[0].status.containerStatuses[0].state.waiting.message' "$TMP/pod.json" |
    grep -Eq '^back-off 10s restarting failed container=c pod=crash-[a-z0-9]+_default\(' ||
    fail "CrashLoopBackOff message format"
pass "get pod -o json: CrashLoopBackOff, lastState.terminated.exitCode 3"

out=$("${K[@]}" logs job/crash -c c --previous) || fail "logs --previous"
[[ $out == try ]] || fail "logs --previous printed '$out'"
pass "logs job/crash -c c --previous prints the previous run's output"

"${K[@]}" wait --for=condition=Failed job/crash --timeout=60s >/dev/null || fail "wait Failed"
"${K[@]}" get job crash -o json >"$TMP/crash.json"
[[ $(jq -r '[.status.conditions[].type] | join(",")' "$TMP/crash.json") == FailureTarget,Failed ]] ||
    fail "conditions are not FailureTarget then Failed"
[[ $(jq -r '[.status.conditions[].reason] | unique | join(",")' "$TMP/crash.json") == BackoffLimitExceeded ]] ||
    fail "reason is not BackoffLimitExceeded"
pass "wait --for=condition=Failed; conditions FailureTarget -> Failed, BackoffLimitExceeded"

rising() {
    jq -s -e '[.[] | select(.metadata.labels["job-name"] == "crash") | .status.containerStatuses[0].restartCount // empty]
              | (. == sort) and (max >= 2) and (min == 0)' "$TMP/pods-watch.json"
}
wait_for 20 "pod watch to show restartCount rising 0..2" rising
pass "get pods -w -o json: restartCount rises 0 -> 2"

"${K[@]}" describe job crash >"$TMP/describe.txt" || fail "describe job"
for want in SuccessfulCreate SuccessfulDelete BackoffLimitExceeded job-controller \
    'Pods Statuses:'; do
    grep -q "$want" "$TMP/describe.txt" || fail "describe job lacks '$want'"
done
pass "describe job lists the controller's events"

"${K[@]}" create -f "$DATA/ok-job.yaml" >/dev/null || fail "create ok job"
"${K[@]}" wait --for=condition=complete job/ok --timeout=60s >/dev/null || fail "wait complete"
[[ $("${K[@]}" logs job/ok) == migrated ]] || fail "logs job/ok"
"${K[@]}" describe job ok | grep -q Completed || fail "describe ok lacks Completed"
pass "wait --for=condition=complete returns for a Job that succeeds"

wait_for 20 "get jobs -w to stream both outcomes" \
    bash -c "grep -Eq '^crash +Failed' '$TMP/jobs-watch.txt' && grep -Eq '^ok +Complete' '$TMP/jobs-watch.txt'"
[[ $(grep -c '^crash ' "$TMP/jobs-watch.txt") -ge 3 ]] || fail "get jobs -w streamed too few changes"
pass "get jobs -w streams the changes"

"${K[@]}" create -f "$DATA/lease.yaml" >/dev/null || fail "create lease"
"${K[@]}" get lease envgate-lock -o json >"$TMP/lease-v1.json"
"${K[@]}" annotate lease envgate-lock envgate/step=one >/dev/null || fail "annotate (merge patch)"
if "${K[@]}" replace -f "$TMP/lease-v1.json" >"$TMP/replace.txt" 2>&1; then
    fail "replace with a stale resourceVersion was accepted"
fi
grep -q 'the object has been modified' "$TMP/replace.txt" || fail "stale replace: $(cat "$TMP/replace.txt")"
if "${K[@]}" create -f "$DATA/lease.yaml" >"$TMP/create2.txt" 2>&1; then
    fail "second create accepted"
fi
grep -q 'AlreadyExists' "$TMP/create2.txt" || fail "second create: $(cat "$TMP/create2.txt")"
"${K[@]}" get lease envgate-lock -o json >"$TMP/lease-v2.json"
jq '.spec.holderIdentity = "pipeline-2"' "$TMP/lease-v2.json" >"$TMP/lease-v3.json"
"${K[@]}" replace -f "$TMP/lease-v3.json" >/dev/null || fail "replace with the current resourceVersion"
pass "Lease: stale replace -> Conflict, second create -> AlreadyExists, fresh replace ok"

"$BIN" ctl fail --code 503 --verb get --resource leases --count 1 >/dev/null || fail "ctl fail"
if "${K[@]}" get lease envgate-lock >"$TMP/503.txt" 2>&1; then fail "injected 503 not seen"; fi
grep -q 'ServiceUnavailable' "$TMP/503.txt" || fail "503: $(cat "$TMP/503.txt")"
"${K[@]}" get lease envgate-lock >/dev/null || fail "get lease after the fault"
"$BIN" ctl counters >"$TMP/counters.json" || fail "ctl counters"
[[ $(jq '.requests["get leases"]' "$TMP/counters.json") -ge 2 ]] || fail "counters: $(cat "$TMP/counters.json")"
pass "kubesim ctl: an injected 503 reaches kubectl once; counters count it"

"${K[@]}" delete job crash ok >/dev/null || fail "delete jobs"
"${K[@]}" delete lease envgate-lock >/dev/null || fail "delete lease"
"${K[@]}" get job crash >"$TMP/gone.txt" 2>&1 && fail "job still there after delete"
grep -q 'NotFound' "$TMP/gone.txt" || fail "get after delete: $(cat "$TMP/gone.txt")"
wait_for 20 "pods of deleted jobs to go" \
    bash -c "[[ -z \$(kubectl get pods -o name 2>/dev/null) ]]"
pass "delete job and lease; pods garbage-collected"

kill -TERM "$PID"
wait "$PID" || fail "kubesim exited with $? on SIGTERM"
PID=
pass "kubesim exits 0 on SIGTERM"
