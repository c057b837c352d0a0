#!/usr/bin/env bash
# End-to-end test of kubeconfig exec credential plugins: `envgate gate` against
# `kubesim --tls` whose only credential comes from a plugin script that counts its
# runs and keeps each KUBERNETES_EXEC_INFO it was given.
#   1. provideClusterInfo: the plugin sees the cluster (server, the CA as
#      certificate-authority-data, tls-server-name, the cluster's exec extension as
#      config) with interactive false;
#   2. a 401 (kubesim told to answer one request so; then one watch): the plugin
#      runs again once, the request (the watch) is retried once, and the gate passes;
#      two 401s in a row: the gate fails (exit 4) after exactly one re-run, no loop;
#   3. a plugin that is not installed: the gate fails before any Job, naming the
#      command and printing the kubeconfig's installHint.
# The token the plugin hands out appears in no log or report.
# Usage: exec_plugin_e2e.sh ENVGATE KUBESIM
ENVGATE=$1 KUBESIM=$2 SCENARIO=exec_plugin
source "$(dirname "$0")/lib.sh"
start_kubesim --tls
NS=e2e
read -r SERVER CA_DATA TOKEN < <(python3 -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
print(c["clusters"][0]["cluster"]["server"], c["clusters"][0]["cluster"]["certificate-authority-data"],
      c["users"][0]["user"]["token"])' "$KUBECONFIG")
[[ -n $TOKEN && $SERVER == https://127.0.0.1:* ]] || fail "cannot read kubesim's kubeconfig"

cat >"$T/plugin.sh" <<EOF
#!/bin/sh
$(count_runs "$T/runs")
printf '%s' "\$KUBERNETES_EXEC_INFO" >"$T/exec-info-\$n.json"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}\n' "$TOKEN"
EOF
chmod +x "$T/plugin.sh"
# exec_kubeconfig FILE COMMAND: kubesim's cluster (verified as localhost, the name its
# certificate has) and a user whose credential comes from COMMAND.
exec_kubeconfig() {
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: sim
clusters:
- name: sim
  cluster:
    server: $SERVER
    certificate-authority-data: $CA_DATA
    tls-server-name: localhost
    extensions:
    - name: client.authentication.k8s.io/exec
      extension: {audience: envgate-e2e, replicas: 2}
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: $2
      provideClusterInfo: true
      interactiveMode: Never
      installHint: |
        example-auth-plugin is missing: apt-get install example-auth-plugin
contexts:
- name: sim
  context: {cluster: sim, user: plugin}
EOF
}
exec_kubeconfig "$T/exec.kubeconfig" ./plugin.sh

# run_gate NAME KUBECONFIG: `envgate gate` of a fresh Job NAME that passes; sets RC.
run_gate() {
    local name=$1
    job_manifest "$T/$name.yaml" "$name" OnFailure 2 "$(job_script "$name" 'echo migrated')"
    RC=0
    timeout -s KILL 120 "$ENVGATE" gate --env e1 --gate pre-migrations --manifest "$T/$name.yaml" \
        --namespace "$NS" --report-dir "$T/rep-$name" --kubeconfig "$2" >"$T/$name.log" 2>&1 || RC=$?
    [[ $RC != 137 ]] || fail "envgate did not finish within 120s"
}
runs() { cat "$T/runs" 2>/dev/null || echo 0; }
no_faults_left() { [[ $("$KUBESIM" ctl faults | jq '.rules | length') == 0 ]]; }

# --- 1 and 2: one 401, the cluster handed over -----------------------------------
ctl fail --code 401 --count 1
run_gate once "$T/exec.kubeconfig"
expect_rc 0 "one 401: the plugin runs again and the request is retried: $(tail -5 "$T/once.log")"
no_faults_left || fail "kubesim did not answer the 401: $("$KUBESIM" ctl faults)"
[[ $(runs) == 2 ]] || fail "the plugin ran $(runs) times, want 2 (once, then once after the 401)"
info=$T/exec-info-1.json
jq -e --arg server "$SERVER" '.apiVersion == "client.authentication.k8s.io/v1"
    and .kind == "ExecCredential" and .spec.interactive == false
    and .spec.cluster.server == $server and .spec.cluster["tls-server-name"] == "localhost"
    and .spec.cluster.config == {"audience": "envgate-e2e", "replicas": 2}
    and (.spec.cluster | has("proxy-url") | not)' "$info" >/dev/null ||
    fail "KUBERNETES_EXEC_INFO: $(cat "$info")"
[[ $(jq -r '.spec.cluster["certificate-authority-data"] | @base64d' "$info") == \
    "$(base64 -d <<<"$CA_DATA")" ]] || fail "certificate-authority-data is not kubesim's CA"
cmp -s "$T/exec-info-1.json" "$T/exec-info-2.json" || fail "the re-run was told another cluster"
ok "provideClusterInfo: the plugin saw server, CA, tls-server-name and the exec extension"
ok "one 401: the plugin ran once more, the request was retried, the gate passed"

# --- 2: a 401 on opening a watch: the same, for the watch ----------------------
rm -f "$T/runs"
ctl fail --code 401 --verb watch --count 1
run_gate watch "$T/exec.kubeconfig"
expect_rc 0 "a 401 on a watch: the plugin runs again and the watch is reopened: $(tail -5 "$T/watch.log")"
no_faults_left || fail "kubesim did not answer the watch with 401: $("$KUBESIM" ctl faults)"
[[ $(runs) == 2 ]] || fail "the plugin ran $(runs) times, want 2 (once, then once after the 401)"
ok "a 401 on a watch: the plugin ran once more, the watch was reopened, the gate passed"

# --- 2: two 401s in a row: one re-run, then the error ----------------------------
rm -f "$T/runs"
ctl fail --code 401 --count 2
run_gate twice "$T/exec.kubeconfig"
expect_rc 4 "a 401 after the re-run is the cluster refusing envgate: $(tail -5 "$T/twice.log")"
[[ $(runs) == 2 ]] || fail "the plugin ran $(runs) times, want 2: one re-run after a 401, no loop"
log_has "$T/twice.log" "401"
ok "401 after the re-run: exit 4 after exactly one re-run"

# --- 3: no such plugin --------------------------------------------------------------
rm -f "$T/runs"
exec_kubeconfig "$T/missing.kubeconfig" envgate-e2e-no-such-plugin
run_gate missing "$T/missing.kubeconfig"
[[ $RC != 0 ]] || fail "the gate passed without its credential plugin"
log_has "$T/missing.log" "exec credential plugin envgate-e2e-no-such-plugin: not found on PATH"
log_has "$T/missing.log" "example-auth-plugin is missing: apt-get install example-auth-plugin"
[[ $(runs) == 0 ]] || fail "a plugin ran"
! "${K[@]}" get job missing -n "$NS" >/dev/null 2>&1 || fail "a Job was created without credentials"
ok "missing plugin: exit $RC, the installHint printed, no Job"

for f in "$T"/*.log "$T"/rep-*/*; do
    [[ -f $f && $f != */kubesim.log ]] || continue
    ! grep -qF -- "$TOKEN" "$f" || fail "$f contains the plugin's token"
done
ok "the plugin's token is in no log or report"
