#!/usr/bin/env bash
# kubectl is the referee on the real control plane: TLS verified against the generated
# CA, 401 without the token, then create / get / describe / logs --previous /
# wait --for=condition=Failed / delete of a crash-looping Job, in a namespace of its own.
# Usage: kubectl_referee.sh BIN STATE_DIR (the control plane started by run.sh).
set -euo pipefail
bin=$1 state=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export KUBECONFIG=$state/kubeconfig HOME=$T
K=(kubectl --request-timeout=30s)
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
wait_for() {
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || fail "timed out after ${secs}s waiting for $what"
        sleep 0.1
    done
}

server=$("${K[@]}" config view --minify -o jsonpath='{.clusters[0].cluster.server}')
[[ $server == https://127.0.0.1:* ]] || fail "server $server is not https on 127.0.0.1"
"${K[@]}" config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d >"$T/ca.crt"
token=$("${K[@]}" config view --raw --minify -o jsonpath='{.users[0].user.token}')
curl -sf --cacert "$T/ca.crt" -H "Authorization: Bearer $token" "$server/readyz" >/dev/null ||
    fail "curl does not verify the serving certificate with the kubeconfig's CA"
localhost_server=${server/127.0.0.1/localhost}
curl -sf --cacert "$T/ca.crt" -H "Authorization: Bearer $token" "$localhost_server/version" >/dev/null ||
    fail "the serving certificate is not valid for localhost"
code=$(curl -s -o "$T/401.json" -w '%{http_code}' --cacert "$T/ca.crt" "$server/apis/batch/v1/jobs")
[[ $code == 401 || $code == 403 ]] || fail "request without token answered $code"
code=$(curl -s -o "$T/401.json" -w '%{http_code}' --cacert "$T/ca.crt" -H 'Authorization: Bearer wrong' "$server/api/v1/pods")
[[ $code == 401 && $(jq -r .reason "$T/401.json") == Unauthorized ]] || fail "wrong token answered $code"
refused=$("${K[@]}" --context controlplane-restricted get jobs -n default 2>&1 || true)
grep -q Forbidden <<<"$refused" || fail "the restricted user is not refused by RBAC: $refused"
"${K[@]}" version -o json >"$T/version.json"
version=$(jq -r .serverVersion.gitVersion "$T/version.json")
client=$(jq -r .clientVersion.gitVersion "$T/version.json")
[[ $version == v1.* ]] || fail "server version $version"
# The referee is kubectl of the same release, within its supported skew.
[[ ${client%.*} == "${version%.*}" ]] || fail "kubectl $client is not of the server's release $version"
pass "TLS verified (127.0.0.1 and localhost), 401 without/with a wrong token, RBAC Forbidden, server $version, kubectl $client"

NS=referee-$RANDOM$RANDOM
"${K[@]}" create namespace "$NS" >/dev/null
cat >"$T/job.yaml" <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: crashloop
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: OnFailure
      terminationGracePeriodSeconds: 1
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "-c", "echo \"attempt \$KUBESIM_RESTART_COUNT\"; echo 'PG::LockNotAvailable' > \$KUBESIM_TERMINATION_LOG; sleep 1; exit 3"]
YAML
"${K[@]}" -n "$NS" create -f "$T/job.yaml" | grep -q 'job.batch/crashloop created' || fail "kubectl create"
"${K[@]}" -n "$NS" get job crashloop >/dev/null || fail "kubectl get job"
restarts() { "${K[@]}" -n "$NS" get pods -l job-name=crashloop -o jsonpath='{.items[0].status.containerStatuses[0].restartCount}'; }
restarted() { [[ $(restarts) -ge 1 ]]; }
wait_for 60 "a restart" restarted
# Its name now: under load the Job may have failed, and the controller deleted the pod, by
# the time it is described below.
pod=$("${K[@]}" -n "$NS" get pods -l job-name=crashloop -o jsonpath='{.items[0].metadata.name}')
"${K[@]}" -n "$NS" logs job/crashloop -c migrations --previous >"$T/prev.log" || fail "kubectl logs --previous"
grep -q '^attempt ' "$T/prev.log" || fail "logs --previous: $(cat "$T/prev.log")"
"${K[@]}" -n "$NS" get pods -l job-name=crashloop -o json |
    jq -e '.items[0].status.containerStatuses[0].lastState.terminated
      | .exitCode == 3 and .reason == "Error" and (.message | test("PG::LockNotAvailable"))' >/dev/null ||
    fail "lastState.terminated lacks exit code 3 and the termination message"
pass "crash loop: restartCount rises, logs --previous, lastState.terminated has exit 3 and its message"
"${K[@]}" -n "$NS" describe job crashloop >"$T/describe.txt"
grep -q 'SuccessfulCreate' "$T/describe.txt" || fail "describe job lacks the controller's events"
"${K[@]}" -n "$NS" describe pod "$pod" >"$T/describe-pod.txt" 2>/dev/null || true
"${K[@]}" -n "$NS" wait --for=condition=Failed job/crashloop --timeout=90s >/dev/null ||
    fail "kubectl wait --for=condition=Failed"
"${K[@]}" -n "$NS" get job crashloop -o json | jq -e '
    ([.status.conditions[] | select(.status == "True") | .type] | index("FailureTarget") != null
      and index("Failed") != null)
    and ([.status.conditions[] | select(.type == "Failed")][0].reason == "BackoffLimitExceeded")' >/dev/null ||
    fail "the Job's conditions are not FailureTarget + Failed/BackoffLimitExceeded"
"${K[@]}" -n "$NS" get events -o json | jq -e '[.items[] | select(.reason == "BackoffLimitExceeded"
    and .involvedObject.kind == "Job")] | length >= 1' >/dev/null || fail "no BackoffLimitExceeded event"
grep -q 'BackOff' "$T/describe-pod.txt" || "${K[@]}" -n "$NS" get events -o json |
    jq -e '[.items[] | select(.reason == "BackOff" and .source.component == "kubelet")] | length >= 1' >/dev/null ||
    fail "no kubelet BackOff event"
pass "wait --for=condition=Failed: FailureTarget then Failed (BackoffLimitExceeded), controller and kubelet events"
"${K[@]}" -n "$NS" delete job crashloop --wait=true --timeout=60s >/dev/null || fail "kubectl delete job"
wait_for 60 "the Job's pods to go (garbage collector)" \
    bash -c "[[ -z \$(kubectl -n $NS get pods -l job-name=crashloop -o name) ]]"
pass "delete job: the Job and (cascade) its pods are gone"
"${K[@]}" delete namespace "$NS" --wait=false >/dev/null
