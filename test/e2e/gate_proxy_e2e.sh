#!/usr/bin/env bash
# End-to-end test of kubeconfig proxy-url: `envgate gate` against `kubesim --tls`
# through a local HTTP CONNECT proxy (test/e2e/connect_proxy.py) that wants a user
# and password. The gate passes, every connection went through the proxy (its log
# has CONNECT to kubesim with the credentials), and the password is printed nowhere;
# the same kubeconfig with a proxy that is not listening fails with exit 4.
# Usage: gate_proxy_e2e.sh ENVGATE KUBESIM
ENVGATE=$1 KUBESIM=$2 SCENARIO=proxy_url
source "$(dirname "$0")/lib.sh"
start_kubesim --tls
NS=e2e
PASSWORD=pr0xy-s3cret
python3 "$(dirname "$0")/connect_proxy.py" "$T/proxy.log" --user "ops:$PASSWORD" >"$T/proxy.port" &
PROXY_PID=$!
trap 'kill $PROXY_PID 2>/dev/null' EXIT
wait_for 30 "the proxy to print its port" test -s "$T/proxy.port"
PROXY_PORT=$(head -1 "$T/proxy.port")

# kubesim's kubeconfig with a proxy-url under its cluster (next to server:).
with_proxy() {
    sed -E "s|^( *)server: (.*)$|\1server: \2\n\1proxy-url: $1|" "$KUBECONFIG" >"$2"
    grep -q "proxy-url: $1" "$2" || fail "no proxy-url in $2"
}
with_proxy "http://ops:$PASSWORD@127.0.0.1:$PROXY_PORT" "$T/proxied.kubeconfig"

job_manifest "$T/ok.yaml" ok OnFailure 2 "$(job_script ok 'echo migrated')"
RC=0
timeout -s KILL 60 "$ENVGATE" gate --env e1 --gate pre-migrations --manifest "$T/ok.yaml" \
    --namespace "$NS" --report-dir "$T/rep" --kubeconfig "$T/proxied.kubeconfig" \
    >"$T/gate.log" 2>&1 || RC=$?
[[ $RC != 137 ]] || fail "envgate did not finish within 60s"
expect_rc 0 "the gate passes through the proxy: $(tail -5 "$T/gate.log")"
grep -q "^CONNECT 127.0.0.1:$KUBESIM_PORT Basic " "$T/proxy.log" ||
    fail "the proxy saw no authenticated CONNECT to kubesim: $(cat "$T/proxy.log")"
! grep -v "^CONNECT 127.0.0.1:$KUBESIM_PORT Basic " "$T/proxy.log" | grep -q . ||
    fail "a connection bypassed the proxy's credentials: $(cat "$T/proxy.log")"
for f in "$T/gate.log" "$T"/rep/*; do
    [[ -f $f ]] || continue
    ! grep -qF -- "$PASSWORD" "$f" || fail "$f contains the proxy password"
done
ok "proxy-url: the gate passed, every connection tunnelled through the proxy"

# A proxy that is not there: the API is unreachable, exit 4, no Job.
with_proxy "http://127.0.0.1:1" "$T/dead-proxy.kubeconfig"
job_manifest "$T/ok2.yaml" ok2 OnFailure 2 "$(job_script ok2 'echo migrated')"
RC=0
timeout -s KILL 120 "$ENVGATE" gate --env e1 --gate pre-migrations --manifest "$T/ok2.yaml" \
    --namespace "$NS" --report-dir "$T/rep2" --kubeconfig "$T/dead-proxy.kubeconfig" \
    >"$T/dead.log" 2>&1 || RC=$?
[[ $RC != 137 ]] || fail "envgate did not finish within 120s"
expect_rc 4 "the proxy is not listening: $(tail -5 "$T/dead.log")"
! "${K[@]}" get job ok2 -n "$NS" >/dev/null 2>&1 || fail "the Job was created without the proxy"
ok "proxy-url to a dead proxy: exit 4, no Job"
