#!/usr/bin/env bash
# End-to-end test of kubeconfig proxy-url and of HTTPS_PROXY/NO_PROXY: `envgate gate`
# against `kubesim --tls` through a local HTTP CONNECT proxy (test/e2e/connect_proxy.py)
# that wants a user and password. With proxy-url the gate passes, every connection
# went through the proxy (its log has CONNECT to kubesim with the credentials), and
# the password is printed nowhere; the same kubeconfig with a proxy that is not
# listening fails with exit 4. With HTTPS_PROXY, a server name that only the proxy
# can reach (kube.example.test, tls-server-name localhost) works; NO_PROXY for that
# name sends envgate direct, where it cannot resolve it: exit 4.
# Usage: gate_proxy_e2e.sh ENVGATE KUBESIM
ENVGATE=$1 KUBESIM=$2 SCENARIO=proxy_url
source "$(dirname "$0")/lib.sh"
start_kubesim --tls
NS=e2e
PASSWORD=pr0xy-s3cret
python3 "$(dirname "$0")/connect_proxy.py" "$T/proxy.log" --user "ops:$PASSWORD" >"$T/proxy.port" &
PROXY_PID=$!
trap 'kill $PROXY_PID 2>/dev/null; cleanup' EXIT  # lib.sh's cleanup stops kubesim
wait_for 30 "the proxy to print its port" test -s "$T/proxy.port"
PROXY_PORT=$(head -1 "$T/proxy.port")

# kubesim's kubeconfig with a proxy-url under its cluster (next to server:).
with_proxy() {
    sed -E "s|^( *)server: (.*)$|\1server: \2\n\1proxy-url: $1|" "$KUBECONFIG" >"$2"
    grep -q "proxy-url: $1" "$2" || fail "no proxy-url in $2"
}
with_proxy "http://ops:$PASSWORD@127.0.0.1:$PROXY_PORT" "$T/proxied.kubeconfig"

# run_gate NAME KUBECONFIG [VAR=VALUE...]: `envgate gate` of a fresh Job NAME that
# passes, with that kubeconfig and environment; log in $T/NAME.log; sets RC.
run_gate() {
    local name=$1 kubeconfig=$2
    shift 2
    job_manifest "$T/$name.yaml" "$name" OnFailure 2 "$(job_script "$name" 'echo migrated')"
    RC=0
    env "$@" timeout -s KILL 120 "$ENVGATE" gate --env e1 --gate pre-migrations \
        --manifest "$T/$name.yaml" --namespace "$NS" --report-dir "$T/rep-$name" \
        --kubeconfig "$kubeconfig" >"$T/$name.log" 2>&1 || RC=$?
    [[ $RC != 137 ]] || fail "envgate did not finish within 120s"
}

run_gate ok "$T/proxied.kubeconfig"
expect_rc 0 "the gate passes through the proxy: $(tail -5 "$T/ok.log")"
grep -q "^CONNECT 127.0.0.1:$KUBESIM_PORT Basic " "$T/proxy.log" ||
    fail "the proxy saw no authenticated CONNECT to kubesim: $(cat "$T/proxy.log")"
! grep -v "^CONNECT 127.0.0.1:$KUBESIM_PORT Basic " "$T/proxy.log" | grep -q . ||
    fail "a connection bypassed the proxy's credentials: $(cat "$T/proxy.log")"
for f in "$T/ok.log" "$T"/rep-ok/*; do
    [[ -f $f ]] || continue
    ! grep -qF -- "$PASSWORD" "$f" || fail "$f contains the proxy password"
done
ok "proxy-url: the gate passed, every connection tunnelled through the proxy"

# A proxy that is not there: the API is unreachable, exit 4, no Job.
with_proxy "http://127.0.0.1:1" "$T/dead-proxy.kubeconfig"
run_gate ok2 "$T/dead-proxy.kubeconfig"
expect_rc 4 "the proxy is not listening: $(tail -5 "$T/ok2.log")"
! "${K[@]}" get job ok2 -n "$NS" >/dev/null 2>&1 || fail "the Job was created without the proxy"
ok "proxy-url to a dead proxy: exit 4, no Job"

# HTTPS_PROXY: a server name that does not resolve here; only the proxy reaches it
# (it tunnels every CONNECT to kubesim). kubesim's certificate names localhost.
python3 "$(dirname "$0")/connect_proxy.py" "$T/proxy2.log" --user "ops:$PASSWORD" \
    --upstream "127.0.0.1:$KUBESIM_PORT" >"$T/proxy2.port" &
PROXY2_PID=$!
trap 'kill $PROXY_PID $PROXY2_PID 2>/dev/null; cleanup' EXIT
wait_for 30 "the second proxy to print its port" test -s "$T/proxy2.port"
PROXY2_PORT=$(head -1 "$T/proxy2.port")
sed -E "s|^( *)server: https://127.0.0.1:(.*)$|\1server: https://kube.example.test:\2\n\1tls-server-name: localhost|" \
    "$KUBECONFIG" >"$T/named.kubeconfig"
grep -q "tls-server-name: localhost" "$T/named.kubeconfig" || fail "no tls-server-name in the kubeconfig"
run_gate viaenv "$T/named.kubeconfig" "HTTPS_PROXY=http://ops:$PASSWORD@127.0.0.1:$PROXY2_PORT" NO_PROXY=other.test
expect_rc 0 "the gate passes through HTTPS_PROXY: $(tail -5 "$T/viaenv.log")"
grep -q "^CONNECT kube.example.test:$KUBESIM_PORT Basic " "$T/proxy2.log" ||
    fail "the proxy saw no CONNECT to kube.example.test: $(cat "$T/proxy2.log")"
! grep -qF -- "$PASSWORD" "$T/viaenv.log" || fail "the job log contains the proxy password"
ok "HTTPS_PROXY: the gate reached kube.example.test through the proxy, verified as localhost"

: >"$T/proxy2.log"
run_gate noproxy "$T/named.kubeconfig" "HTTPS_PROXY=http://ops:$PASSWORD@127.0.0.1:$PROXY2_PORT" NO_PROXY=.example.test
expect_rc 4 "NO_PROXY sends it direct, where kube.example.test does not resolve"
[[ ! -s $T/proxy2.log ]] || fail "NO_PROXY ignored: the proxy saw $(cat "$T/proxy2.log")"
ok "NO_PROXY: envgate went direct (and could not resolve the name): exit 4"
