#!/usr/bin/env bash
# End-to-end test of `envgate gate` against `kubesim --tls` with a kubeconfig that trusts
# an unrelated CA (made here with openssl): usage gate_tls_e2e.sh ENVGATE KUBESIM.
# The gate must stop at once with exit 4 (API unreachable), name the server and the TLS
# verification failure, create no Job, and never print the bearer token.
ENVGATE=$1 KUBESIM=$2 SCENARIO=wrong_ca
source "$(dirname "$0")/lib.sh"
start_kubesim --tls

NS=e2e
TOKEN=$(sed -nE "s/^ *token: *//p" "$KUBECONFIG")
[[ ${#TOKEN} -ge 16 ]] || fail "no bearer token in kubesim's kubeconfig"
SERVER=$(sed -nE 's/^ *server: *//p' "$KUBECONFIG")
[[ $SERVER == https://127.0.0.1:* ]] || fail "kubesim --tls serves $SERVER, want https"

# The right kubeconfig works (so the failure below is the CA's alone).
"${K[@]}" get jobs -n "$NS" >/dev/null 2>&1 || fail "kubectl cannot reach kubesim with its own CA"

# A self-signed CA unrelated to kubesim's, put in place of certificate-authority-data.
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=unrelated-ca" \
    -keyout "$T/other-ca.key" -out "$T/other-ca.crt" 2>"$T/openssl.err" ||
    fail "openssl: $(cat "$T/openssl.err")"
OTHER_CA=$(base64 -w0 "$T/other-ca.crt")
sed -E "s|^( *certificate-authority-data:).*|\1 $OTHER_CA|" "$KUBECONFIG" >"$T/wrong-ca.kubeconfig"
grep -qF "$OTHER_CA" "$T/wrong-ca.kubeconfig" || fail "the wrong CA did not replace kubesim's"
grep -qF "$TOKEN" "$T/wrong-ca.kubeconfig" || fail "the wrong-CA kubeconfig lost the token"

job_manifest "$T/ok.yaml" ok OnFailure 2 "$(job_script ok 'echo migrated')"
"$KUBESIM" ctl counters --reset >/dev/null
RC=0
timeout -s KILL 60 "$ENVGATE" gate --env e1 --gate pre-migrations --manifest "$T/ok.yaml" \
    --namespace "$NS" --report-dir "$T/rep" --kubeconfig "$T/wrong-ca.kubeconfig" \
    >"$T/gate.out" 2>"$T/gate.err" || RC=$?
cat "$T/gate.out" "$T/gate.err" >"$T/gate.log"
[[ $RC != 137 ]] || fail "envgate did not finish within 60s"
expect_rc 4 "the API is unreachable: the server's certificate is not trusted"

# The error names the server and the TLS verification problem, and where to fix it.
log_has "$T/gate.log" "KubernetesApiError"
log_has "$T/gate.log" "$SERVER"
log_has "$T/gate.log" "certificate verify failed"
grep -qiE "TLS certificate .*could not be verified" "$T/gate.log" ||
    fail "the error does not say the server's TLS certificate could not be verified"
log_has "$T/gate.log" "wrong-ca.kubeconfig"

# No Job was created: kubesim answered no request of envgate (none passed the handshake).
"$KUBESIM" ctl counters >"$T/counters.json"
jq -e '.total == 0' "$T/counters.json" >/dev/null ||
    fail "kubesim answered envgate's requests: $(cat "$T/counters.json")"
[[ -z $(jobs_in "$NS") ]] || fail "a Job exists: $(jobs_in "$NS" | tr '\n' ' ')"

# The token appears nowhere: stdout, stderr, nor the reports.
for f in "$T/gate.out" "$T/gate.err" "$T"/rep/*; do
    [[ -f $f ]] || continue
    ! grep -qF -- "$TOKEN" "$f" || fail "$f contains the bearer token"
done
check_reports "$T/rep" e1 failed KubernetesApiError
ok "wrong CA: exit 4, the TLS verification failure and the server named, no Job, no token"
