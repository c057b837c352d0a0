#!/usr/bin/env bash
# End-to-end tests of `envgate run` against kubesim: usage run_e2e.sh ENVGATE KUBESIM
# SCENARIO. Each scenario writes an envgate.yml (file lock store, steps that echo, gate
# Jobs that run as local processes), runs the real binary and checks its exit code, the
# lock (envgate status --output json), the log and the reports. What a run decides
# without needing processes, a cluster or real time (exit codes, the failure policy, the
# order of steps, messages, reports) is unit cases on the fakes: test/run/README.md maps
# the scenarios that moved there and says why these stay.
ENVGATE=$1 KUBESIM=$2 SCENARIO=$3
source "$(dirname "$0")/lib.sh"
if [[ $SCENARIO == secrets ]]; then start_kubesim --tls; else start_kubesim; fi

NS=$(test_ns e2e)
CFG=$T/envgate.yml
# config_head: envgate.yml's version, defaults (file lock store) and environment e1.
config_head() {
    cat <<EOF
version: 1
defaults:
  namespace: $NS
  lock: { store: file, path: $T/locks, on_failure: hold, local_unlock: true }
environments:
  - name: e1
EOF
}
# write_config DEPLOY_COMMAND: envgate.yml with pre- and post-migrations gates.
write_config() {
    config_head >"$CFG"
    cat >>"$CFG" <<EOF
gates:
  pre-migrations: { job: $T/pre.yaml }
  post-migrations: { job: $T/post.yaml }
steps:
  deploy: "$1"
EOF
}
ok_job() { job_manifest "$T/$1.yaml" "$1" OnFailure 2 "$(job_script "$1" "echo $1 done")"; }

lock_state() {
    "$ENVGATE" status e1 --config "$CFG" --output json |
        jq -r '.locks[] | select(.lock.name == "e1") | .lock.state'
}
expect_lock() {
    local got
    got=$(lock_state)
    [[ $got == "$1" ]] || fail "lock state $got, want $1"
}
# run_bg LOG ARGS...: envgate run in the background; sets RUN_PID.
run_bg() {
    local log=$1
    shift
    "$ENVGATE" run --env e1 --config "$CFG" "$@" >"$log" 2>&1 &
    RUN_PID=$!
    BG_PIDS+=("$RUN_PID")
}
junit_xpath() { xmllint --xpath "$2" "$1/junit.xml"; }

scenario_cancel() {
    job_manifest "$T/pre.yaml" pre OnFailure 2 "$(job_script pre 'sleep 60')"
    ok_job post
    write_config 'echo deploying'
    run_bg "$T/run.log" --report-dir "$T/rep"
    wait_for 30 "the gate to run" grep -q "running (RunningPreMigrations)" "$T/run.log"
    kill -TERM "$RUN_PID"
    wait_exit "$RUN_PID" 30
    expect_rc 143 "SIGTERM mid-gate"
    expect_lock failed
    "$ENVGATE" status e1 --config "$CFG" --output json >"$T/status.json"
    check_reports "$T/rep" e1 cancelled
    ok "cancelled run: exit 143, lock failed (on_failure: hold)"
}

waiting_on_lock() {
    "$ENVGATE" status e1 --config "$CFG" --output json |
        jq -e '.locks[] | select(.lock.name == "e1") | .lock.waiters | length > 0'
}

# run_behind_other LOG: the lock taken by "other", then envgate run in the background
# (reports in $T/rep), queued behind it; sets RUN_PID. The job log must say so while it
# waits (CI shows the log live, through a pipe).
run_behind_other() {
    "$ENVGATE" lock acquire e1 --holder other --config "$CFG" >"$T/acquire.log" 2>&1 ||
        fail "lock acquire for other: $(cat "$T/acquire.log")"
    expect_lock held
    run_bg "$1" --report-dir "$T/rep"
    wait_for 30 "the run to queue for the lock" waiting_on_lock
    wait_for 10 "the waiting line in the log" grep -q "waiting for lock e1: held by other" "$1"
}
release_other() {
    "$ENVGATE" lock release e1 --holder other --config "$CFG" >"$T/release.log" 2>&1 ||
        fail "lock release for other: $(cat "$T/release.log")"
}

scenario_lock_wait() {
    ok_job pre
    ok_job post
    write_config 'echo deploying'
    run_behind_other "$T/run.log"
    log_lacks "$T/run.log" "created Job"
    release_other
    wait_exit "$RUN_PID" 90
    expect_rc 0 "the run proceeds once the lock is released"
    log_has "$T/run.log" "created Job"
    expect_lock free
    ok "lock held by another holder: the run waited, then proceeded, exit 0"
}

scenario_lock_held() {
    ok_job pre
    ok_job post
    write_config 'exit 3'
    run_envgate 90 "$T/first.log" run --env e1 --config "$CFG" --report-dir "$T/rep1"
    expect_rc 1 "the failing run"
    expect_lock failed
    write_config 'echo deploying'
    run_envgate 60 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep" --wait-timeout 2s
    expect_rc 3 "the lock stays held after the failure"
    grep -E '^ +envgate unlock e1 ' "$T/run.log" >/dev/null || fail "the unlock command is not printed"
    log_lacks "$T/run.log" "deploying"
    check_reports "$T/rep" e1 failed
    check_failure_golden lock_held "$T/run.log" "$T/rep"
    keep_reports # for the screenshots: the store as the failure left it, before the unlock
    run_next "$T/run.log" 'unlocked'
    expect_lock free
    ok "lock held after a failure: --wait-timeout 2s -> exit 3, the printed unlock command frees it"
}

# Preflight: a gate Job the API rejects (a misspelt field, refused by the server-side
# dry run) and an unreachable API end the run before the lock is taken: exit 2 and 4,
# nothing created, the lock never written, so no unlock is needed.
scenario_preflight() {
    ok_job pre
    job_manifest "$T/post.yaml" post OnFailure 2 "$(job_script post 'echo post')" \
        "  backofLimit: 3"
    write_config 'echo deploying'
    run_envgate 60 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 2 "a post-migrations Job the API rejects"
    log_has "$T/run.log" "preflight, before the lock: post-migrations ($T/post.yaml)"
    log_has "$T/run.log" "backofLimit"
    log_has "$T/run.log" "nothing was touched"
    log_lacks "$T/run.log" "deploying"
    [[ ! -e $T/locks/e1.json ]] || fail "the lock was written: $(cat "$T/locks/e1.json")"
    [[ -z $(jobs_in "$NS") ]] || fail "Jobs were created: $(jobs_in "$NS" | tr '\n' ' ')"
    ok_job post
    sed "s|server: .*|server: http://127.0.0.1:1|" "$KUBECONFIG" >"$T/unreachable.kubeconfig"
    run_envgate 120 "$T/run2.log" run --env e1 --config "$CFG" --report-dir "$T/rep2" \
        --kubeconfig "$T/unreachable.kubeconfig"
    expect_rc 4 "an unreachable API"
    log_has "$T/run2.log" "preflight, before the lock"
    grep -qE "Connection refused.* \(kubeconfig context \"[^\"]+\", server https?://127\.0\.0\.1:1\); nothing was touched" "$T/run2.log" ||
        fail "the unreachable API's error does not name the kubeconfig context and server"
    [[ ! -e $T/locks/e1.json ]] || fail "the lock was written with the API unreachable"
    check_failure_golden api_unreachable "$T/run2.log" "$T/rep2" 'preflight, before the lock'
    if [[ $CLUSTER == controlplane ]]; then
        # A user without RBAC bindings: the access review names what it may not do.
        cp "$KUBECONFIG" "$T/restricted.kubeconfig"
        KUBECONFIG=$T/restricted.kubeconfig "${K[@]}" config use-context controlplane-restricted >/dev/null
        run_envgate 60 "$T/run3.log" run --env e1 --config "$CFG" --report-dir "$T/rep3" \
            --kubeconfig "$T/restricted.kubeconfig"
        expect_rc 2 "credentials without RBAC"
        log_has "$T/run3.log" "the credentials may not create jobs.batch in namespace $NS"
        log_has "$T/run3.log" "get pods/log in namespace $NS"
        log_has "$T/run3.log" "kubectl auth can-i --list -n $NS"
        local lines="preflight, before the lock"
        GOLDEN_ON=controlplane check_failure_golden rbac_forbidden "$T/run3.log" "$T/rep3" "$lines"
        # With the same credentials, what on-call would paste lists what they may do.
        KUBECONFIG=$T/restricted.kubeconfig run_next "$T/run3.log" "selfsubjectaccessreviews" "$lines"
        [[ ! -e $T/locks/e1.json ]] || fail "the lock was written without RBAC"
        [[ -z $(jobs_in "$NS") ]] || fail "Jobs were created without RBAC"
    fi
    ok "preflight: a rejected Job exits 2, an unreachable API 4 (and no RBAC 2), before the lock, nothing created"
}

# A holder that vanished (its lease of 1 s ran out, nothing renewed it: a killed runner):
# under policy hold the next run marks the lock failed (HolderVanished) and waits for an
# unlock; the unlock command it prints frees the lock.
scenario_stale_holder() {
    ok_job pre
    ok_job post
    write_config 'echo deploying'
    "$ENVGATE" lock acquire e1 --holder other --hold-for 1s --config "$CFG" >"$T/acquire.log" 2>&1 ||
        fail "lock acquire for other: $(cat "$T/acquire.log")"
    run_envgate 60 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep" --wait-timeout 3s
    expect_rc 3 "the vanished holder's lock is held (failed) until an unlock"
    log_has "$T/run.log" "HolderVanished"
    log_lacks "$T/run.log" "deploying"
    expect_lock failed
    check_reports "$T/rep" e1 failed
    check_failure_golden stale_holder "$T/run.log" "$T/rep" 'marked failed \\(HolderVanished|not obtained within'
    run_next "$T/run.log" 'unlocked'
    expect_lock free
    ok "stale holder: marked failed (HolderVanished), exit 3, the printed unlock command frees it"
}

# write_store_config STORE DEPLOY_COMMAND: write_config with the lock in STORE (file, or
# kubernetes: Leases in the namespace of the test, which exists on both clusters).
write_store_config() {
    write_config "$2"
    if [[ $1 == kubernetes ]]; then
        sed -i "s|lock: { store: file, path: $T/locks, on_failure: hold, local_unlock: true }|lock: { store: kubernetes, namespace: $NS, on_failure: hold, local_unlock: true }|" "$CFG"
    fi
}

# Planted secrets: a value named in ENVGATE_SECRET_VARS, GitLab's CI_JOB_TOKEN,
# CI_REGISTRY_PASSWORD and CI_DEPLOY_PASSWORD, and the kubeconfig's bearer token. A step
# prints them all; a gate's container prints them into its termination message, so its
# failure carries them into the lock record, the Events and the reports. Then no
# output, report, lock record (file or Lease) or object in the cluster (Jobs, Events,
# Leases) holds any of them; and ${CI_JOB_TOKEN} in a manifest is refused, not expanded.
# A bearer token (kubesim --tls) and a value of a variable named in ENVGATE_SECRET_VARS are
# planted where envgate sees them: the secret in the Job's env (termination message and
# logs) and in the deploy step's output, the token in the step's output too. Neither may
# appear in any output or report file.
scenario_secrets() {
    local token
    token=$(sed -nE 's/^ *token: *"?([^" ]+)"?.*/\1/p' "$KUBECONFIG" | head -1)
    [[ -n $token ]] || fail "no token in the TLS kubeconfig"
    export ENVGATE_SECRET_VARS=CI_DB_PASSWORD CI_DB_PASSWORD=planted-db-s3cr3t-1 \
        CI_JOB_TOKEN=glcbt-planted-job-token-2 CI_REGISTRY_PASSWORD=planted-registry-pw-3 \
        CI_DEPLOY_PASSWORD=planted-deploy-pw-4 PLANTED_TOKEN=$token
    local planted=("$CI_DB_PASSWORD" "$CI_JOB_TOKEN" "$CI_REGISTRY_PASSWORD" "$CI_DEPLOY_PASSWORD" "$token")
    mkdir -p "$T/in"
    printf 'auth failed: %s %s %s %s %s\n' "${planted[@]}" >"$T/in/secret.txt"
    ok_job pre
    # backoffLimit 2, every run 0.5 s: the pod runs on for half a second after its first
    # run failed, so a pass reads that run's log (and its planted secrets) before the
    # controller deletes the pod; with 1 the pod is deleted as soon as run 1 failed.
    job_manifest "$T/post.yaml" post OnFailure 2 "$(job_script post "cat '$T/in/secret.txt' >\"\$KUBESIM_TERMINATION_LOG\"; cat '$T/in/secret.txt'; sleep 0.5; exit 1")"
    local store
    for store in file kubernetes; do
        write_store_config "$store" 'echo db $CI_DB_PASSWORD job $CI_JOB_TOKEN reg $CI_REGISTRY_PASSWORD deploy $CI_DEPLOY_PASSWORD kube $PLANTED_TOKEN'
        run_envgate 90 "$T/run-$store.log" run --env e1 --config "$CFG" --report-dir "$T/rep-$store"
        expect_rc 1 "post-migrations fails ($store store)"
        log_has "$T/run-$store.log" "db [MASKED] job [MASKED] reg [MASKED] deploy [MASKED] kube [MASKED]"
        "$ENVGATE" status --config "$CFG" >"$T/status-$store.log" 2>&1 || true
        "$ENVGATE" status e1 --config "$CFG" --output json >"$T/status-$store.json" 2>&1 || true
        grep -qF "[MASKED]" "$T/status-$store.json" || fail "status --output json lacks the masked failure"
        # The first run saw the post-migrations Job's runs fail (1 on kubesim, a few on
        # the control plane) and kept their logs, masked (the second re-attaches to that
        # finished Job; the last run's pod may be deleted before its log is read).
        [[ $store != file ]] || jq -e '[.steps[] | select(.name == "post-migrations")
            | .failed_runs[].log_tail | select(. != "")] | length >= 1 and
            all(startswith("auth failed: [MASKED] [MASKED] [MASKED] [MASKED] [MASKED]"))' \
            "$T/rep-$store/run.json" >/dev/null ||
            fail "run.json: the failed run's kept log is missing or not masked"
        # An operator's unlock from a shell (no CI job token there), as lock.local_unlock allows.
        env -u CI_JOB_TOKEN "$ENVGATE" unlock e1 --reason "checked by hand" --config "$CFG" >"$T/unlock-$store.log" 2>&1 ||
            fail "unlock ($store store) failed: $(cat "$T/unlock-$store.log")"
    done
    # A manifest that names a secret is refused before anything is created.
    sed 's|command: \["sh"|env: [{name: T, value: "${CI_JOB_TOKEN}"}]\n          command: ["sh"|' \
        "$T/pre.yaml" >"$T/in/token.yaml"
    local jobs_before
    jobs_before=$(jobs_in "$NS" | wc -l)
    run_envgate 30 "$T/gate-token.log" gate --env e1 --gate pre-migrations --manifest "$T/in/token.yaml" \
        --namespace "$NS" --report-dir "$T/rep-gate"
    expect_rc 2 "\${CI_JOB_TOKEN} in a manifest"
    log_has "$T/gate-token.log" "\${CI_JOB_TOKEN} holds a secret and is never expanded into a Job"
    [[ $(jobs_in "$NS" | wc -l) == "$jobs_before" ]] || fail "a Job was created from the refused manifest"
    # Every object envgate wrote to the cluster, as the API serves it.
    local kind
    for kind in jobs pods events events.events.k8s.io leases; do
        "${K[@]}" get "$kind" -A -o json >"$T/cluster-$kind.json"
    done
    local f n total=0 files=0 leaked=()
    while IFS= read -r -d '' f; do
        files=$((files + 1))
        n=$({ grep -oF -e "${planted[0]}" -e "${planted[1]}" -e "${planted[2]}" \
            -e "${planted[3]}" -e "${planted[4]}" "$f" || true; } | wc -l)
        if ((n > 0)); then leaked+=("$f:$n"); total=$((total + n)); fi
    done < <(find "$T" \( -path "$T/in" -o -name kubeconfig -o -name '*.sh' -o -name '*.yaml' \
        -o -name 'kubesim.log' -o -path "$T/.kube" -o -name 'cluster-pods.json' \) -prune -o -type f -print0)
    [[ ${#leaked[@]} == 0 ]] || fail "planted secrets found ($total occurrences) in: ${leaked[*]}"
    [[ -f $T/rep-file/junit.xml && -f $T/rep-kubernetes/junit.xml && -s $T/locks/e1.json ]] ||
        fail "no reports or lock record to check"
    grep -qF "[MASKED]" "$T/locks/e1.json" || fail "the file lock record lacks the masked failure"
    jq -e '[.items[] | select(.metadata.name == "envgate-e1")] | length == 1' "$T/cluster-leases.json" >/dev/null ||
        fail "no Lease envgate-e1 to check"
    echo "planted-secret occurrences: $total in $files files (outputs, reports, lock records, Jobs, Events, Leases)"
    ok "5 planted secrets: 0 occurrences in every output, report, lock record and cluster object"
}

# Hold only what is broken: an API that refuses the first gate's Job (403, after the
# preflight passed and the lock was taken, before any Job or deploy) leaves nothing to
# inspect, so the lock is released with a warning and the run exits 4; the error names
# the kubeconfig context and the server. (The refusal comes while the run waits for the
# lock, after its preflight's dry runs.)
scenario_infra_before_change() {
    ok_job pre
    ok_job post
    write_config 'echo deploying $ENVGATE_ENV'
    run_behind_other "$T/run.log"
    ctl fail --code 403 --verb create --resource jobs --count -1
    release_other
    wait_exit "$RUN_PID" 90
    expect_rc 4 "the API refused the Job"
    expect_lock free
    log_has "$T/run.log" "e1 was released, not held: the error came before anything changed"
    grep -qE "^pre-migrations: KubernetesApiError: .*\(kubeconfig context \"[^\"]+\", server https?://127\.0\.0\.1:[0-9]+\)" "$T/run.log" ||
        fail "the API error does not name the kubeconfig context and server"
    log_lacks "$T/run.log" "deploying e1"
    check_reports "$T/rep" e1 failed KubernetesApiError
    grep -qx "ENVGATE_LOCK_STATE=free" "$T/rep/envgate.env" || fail "envgate.env: the lock is not free"
    check_failure_golden api_refused "$T/run.log" "$T/rep"
    ok "infra error before any change: exit 4, lock released with a warning, cluster named"
}

# Once a gate's Job exists, an infrastructure error holds the lock as any failure does:
# the Job is there to inspect.
scenario_infra_after_job() {
    job_manifest "$T/pre.yaml" pre OnFailure 2 \
        "$(job_script pre "until [ -f '$T/go' ]; do sleep 0.05; done; echo pre done")"
    ok_job post
    write_config 'echo deploying $ENVGATE_ENV'
    run_bg "$T/run.log" --report-dir "$T/rep"
    wait_for 30 "the pre-migrations Job" grep -q "created Job" "$T/run.log"
    # Every request for Jobs refused, then the watches end: the gate cannot act on its
    # caches alone (they may no longer be the store), so it asks again, refused.
    ctl fail --code 403 --resource jobs --count -1
    ctl close-watches
    touch "$T/go"
    wait_exit "$RUN_PID" 90
    expect_rc 4 "the API refused the Job's read"
    ctl clear-faults
    expect_lock failed
    log_lacks "$T/run.log" "was released, not held"
    ok "infra error after the Job exists: exit 4, lock held (failed)"
}

# A gate and a step the config adds: seed-check, a Job gate after deploy that fails
# once and then passes, and smoke, a shell step after post-migrations. Both run in
# their place and show in the job log, the Job's events, junit.xml, summary.md/.html,
# envgate.env, run.json, `status --output prometheus`, `config check`, `explain --gate`
# and `envgate gate --gate`; a second run whose smoke step fails shows it in
# annotations.json and as the failed step.
write_added_config() {
    config_head >"$CFG"
    cat >>"$CFG" <<EOF
gates:
  pre-migrations: { job: $T/pre.yaml }
  seed-check: { job: $T/seed.yaml, after: deploy }
  post-migrations: { job: $T/post.yaml }
steps:
  deploy: "echo deploying \$ENVGATE_ENV"
  smoke: { run: "$1", after: post-migrations }
EOF
}
check_added_in_reports() {
    local rep=$1 names want="lock pre-migrations deploy seed-check post-migrations smoke"
    names=$(junit_xpath "$rep" '//testcase[not(contains(@name, " failed run "))]/@name' |
        sed -E 's/ *name="([^"]+)"/\1 /g' | xargs)
    [[ $names == "$want" ]] || fail "junit testcases in this order: '$names'"
    [[ $(jq -r '.steps | map(.name) | join(" ")' "$rep/run.json") == "$want" ]] ||
        fail "run.json step order: $(jq -c '.steps | map(.name)' "$rep/run.json")"
    for step in seed-check smoke; do
        grep -qE "^\| e1 \| \`?$step\`? \|" "$rep/summary.md" || fail "summary.md has no $step row"
        grep -qF ">$step<" "$rep/summary.html" || fail "summary.html has no $step entry"
    done
    jq -e '.steps[] | select(.name == "seed-check") | .kind == "gate"' "$rep/run.json" >/dev/null ||
        fail "run.json: seed-check is not a gate"
    grep -qE "^ENVGATE_JOB_SEED_CHECK=seed-[0-9a-f]{8}$" "$rep/envgate.env" ||
        fail "envgate.env lacks ENVGATE_JOB_SEED_CHECK: $(cat "$rep/envgate.env")"
}

scenario_added_gate_and_step() {
    ok_job pre
    ok_job post
    job_manifest "$T/seed.yaml" seed OnFailure 2 "$(job_script seed "$(count_runs "$T/seed.count")
if [ \$n -lt 2 ]; then echo 'seed rows missing' > \"\$KUBESIM_TERMINATION_LOG\"; exit 1; fi; echo seeded")"
    write_added_config 'echo smoke $ENVGATE_STEP on $ENVGATE_ENV'
    run_envgate 60 "$T/check.log" config check --config "$CFG"
    expect_rc 0 "config check of the added gate and step"
    log_has "$T/check.log" "# Run order: lock -> pre-migrations -> deploy -> seed-check -> post-migrations -> smoke -> release."
    run_envgate 60 "$T/check.json" config check --config "$CFG" -o json
    expect_rc 0 "config check -o json"
    [[ $(jq -r '[.order[] | .name + (if .builtin then "" else "+" end)] | join(" ")' "$T/check.json") == \
        "pre-migrations deploy seed-check+ post-migrations smoke+" ]] || fail "config check -o json: $(cat "$T/check.json")"
    run_envgate 120 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 0 "a run with an added gate and step"
    # Whether a pass sees the container in back-off (a retrying verdict) depends on
    # timing; every run counts the failed attempt, and the derived names show.
    grep -qE '^seed-check: (retrying \(RetryingSeedCheck\)|(running \(RunningSeedCheck\)|succeeded \(SeedCheckComplete\)): .*after 1 failed attempt)' \
        "$T/run.log" || fail "no verdict counts seed-check's failed attempt"
    grep -qE '^seed-check: succeeded \(SeedCheckComplete\)' "$T/run.log" || fail "no SeedCheckComplete verdict"
    log_has "$T/run.log" "smoke smoke on e1"
    local at prev=0 what
    for what in '^pre-migrations: succeeded' '^deploying e1$' '^seed-check: succeeded' \
        '^post-migrations: succeeded' '^smoke smoke on e1$'; do
        at=$(grep -nE -m1 "$what" "$T/run.log" | cut -d: -f1)
        [[ -n $at && $at -gt $prev ]] || fail "the job log does not show '$what' after the step before it"
        prev=$at
    done
    check_reports "$T/rep" e1 success
    check_added_in_reports "$T/rep"
    junit_xpath "$T/rep" '//testcase[starts-with(@name, "seed-check failed run 1 ")]/skipped' >/dev/null ||
        fail "junit: no skipped testcase for seed-check's retried run"
    local seed_job
    seed_job=$(sed -nE 's/^ENVGATE_JOB_SEED_CHECK=//p' "$T/rep/envgate.env")
    # One Warning event for the one failed run (the gate's derived event reason), also
    # when the pass that first saw it saw the Job complete.
    local want_events="1 SeedCheckRetrying"
    [[ $(event_summary "$NS" "$seed_job") == "$want_events" ]] ||
        fail "events on $seed_job: '$(event_summary "$NS" "$seed_job")', want '$want_events'"
    "${K[@]}" get job -n "$NS" "$seed_job" -o json >"$T/seed-job.json"
    run_envgate 30 "$T/explain.json" explain --gate seed-check --job "$T/seed-job.json" --config "$CFG"
    expect_rc 0 "explain --gate seed-check"
    [[ $(jq -r '.gate + " " + .progressing.reason' "$T/explain.json") == "seed-check SeedCheckComplete" ]] ||
        fail "explain: $(cat "$T/explain.json")"
    run_envgate 30 "$T/explain-typo.log" explain --gate seed-chek --job "$T/seed-job.json" --config "$CFG"
    expect_rc 2 "explain --gate with a typo"
    log_has "$T/explain-typo.log" 'did you mean "seed-check"?'
    run_envgate 60 "$T/status.prom" status --config "$CFG" --output prometheus
    expect_rc 0 "status --output prometheus"
    grep -qxF 'envgate_gate_last_run_result{environment="e1",gate="seed-check",result="succeeded"} 1' \
        "$T/status.prom" || fail "status: $(grep last_run_result "$T/status.prom")"
    grep -qxF 'envgate_gate_last_run_retries{environment="e1",gate="seed-check"} 1' "$T/status.prom" ||
        fail "status retries: $(grep last_run_retries "$T/status.prom")"
    # With envgate.yml a gate runs under the environment's lock: refused while nobody
    # holds it, run once this holder (local:USER@HOST) took it.
    run_envgate 60 "$T/gate-unlocked.log" gate --env e1 --gate seed-check --config "$CFG" --report-dir "$T/rep-gate"
    expect_rc 3 "envgate gate without the lock"
    log_has "$T/gate-unlocked.log" "does not hold it"
    run_envgate 30 "$T/gate-acquire.log" lock acquire e1 --config "$CFG"
    expect_rc 0 "lock acquire before envgate gate"
    run_envgate 60 "$T/gate.log" gate --env e1 --gate seed-check --config "$CFG" --report-dir "$T/rep-gate"
    expect_rc 0 "envgate gate --gate seed-check"
    expect_lock held
    run_envgate 30 "$T/gate-release.log" lock release e1 --config "$CFG"
    expect_rc 0 "lock release after envgate gate"
    log_has "$T/gate.log" "re-attached to Job $NS/$seed_job"
    [[ $(junit_xpath "$T/rep-gate" "count(//testcase[@name='seed-check'])") == 1 ]] || fail "gate junit"
    grep -qx "ENVGATE_JOB_SEED_CHECK=$seed_job" "$T/rep-gate/envgate.env" || fail "gate envgate.env"

    run_envgate 30 "$T/bad-ns.log" run --env e1 --config "$CFG" -n Not_A_Namespace
    expect_rc 2 "run -n with a bad namespace"
    log_has "$T/bad-ns.log" 'envgate run: -n "Not_A_Namespace": not a Kubernetes namespace name'
    write_added_config 'echo smoke failed; exit 3'
    # --context and -n name what the config does: the same cluster and namespace.
    CI_JOB_URL=https://gitlab.example.com/p/-/jobs/7 CI_PIPELINE_URL=https://gitlab.example.com/p/-/pipelines/5 \
        run_envgate 120 "$T/run2.log" run --env e1 --config "$CFG" --report-dir "$T/rep2" \
        --context "$("${K[@]}" config current-context)" -n "$NS"
    expect_rc 1 "the added smoke step fails"
    log_has "$T/run2.log" "step smoke exited 3"
    check_reports "$T/rep2" e1 failed StepFailed
    check_added_in_reports "$T/rep2"
    grep -qx "ENVGATE_FAILED_STEP=smoke" "$T/rep2/envgate.env" || fail "envgate.env: the failed step"
    jq -e '.envgate[] | select(.external_link.label == "failed smoke job")
        | .external_link.url == "https://gitlab.example.com/p/-/jobs/7"' "$T/rep2/annotations.json" >/dev/null ||
        fail "annotations.json: $(cat "$T/rep2/annotations.json")"
    expect_lock failed
    # status wraps the failure to $COLUMNS at spaces, each continuation under the value,
    # and cuts nothing; --wide keeps it on one line.
    COLUMNS=40 "$ENVGATE" status e1 --config "$CFG" >"$T/status-40.txt"
    local want_failure="step smoke exited 3: echo smoke failed; exit 3"
    awk 'length($0) > 40 && /^  [a-z ]/ && !/envgate unlock|--expect-holder/ { bad = 1 } END { exit bad }' \
        "$T/status-40.txt" || fail "status at COLUMNS=40 has longer lines: $(cat "$T/status-40.txt")"
    [[ $(sed -n '/^  failure /,/^  [a-z]/p' "$T/status-40.txt" | sed '$d' | cut -c12- | xargs) == *"$want_failure"* ]] ||
        fail "status at COLUMNS=40 lost part of the failure: $(cat "$T/status-40.txt")"
    "$ENVGATE" status e1 --config "$CFG" --wide >"$T/status-wide.txt"
    grep -qE "^  failure  .*$want_failure" "$T/status-wide.txt" ||
        fail "status --wide: the failure is not on one line: $(cat "$T/status-wide.txt")"
    ok "added gate and step: run in place, in every report, status, explain and gate"
}

# gone_within SECS PID: PID has ended within SECS; prints how long it took, in ms.
gone_within() {
    local start now
    start=$(date +%s%N)
    while kill -0 "$2" 2>/dev/null && [[ $(ps -o stat= -p "$2") != Z* ]]; do
        now=$(date +%s%N)
        (((now - start) / 1000000 < $1 * 1000)) || fail "process $2 still runs after ${1}s"
        sleep 0.01
    done
    echo $((($(date +%s%N) - start) / 1000000))
}

# A step never outlives envgate: kill -9 of envgate, or of its whole process group (a
# runner that kills only envgate's group), ends the step at once; SIGSTOP of envgate
# alone ends it within lease_duration / 6, before the lease can run out.
scenario_step_guardian() {
    config_head >"$CFG"
    sed -i 's/local_unlock: true }/local_unlock: true, lease_duration: 3s }/' "$CFG"
    printf 'steps:\n  deploy: "echo $$ > %s/step.pid; exec sleep 60"\n' "$T" >>"$CFG"
    local how ms pid step
    for how in kill group stop; do
        rm -f "$T/step.pid"
        "$ENVGATE" unlock e1 --config "$CFG" --reason "next case" >/dev/null 2>&1 || true
        setsid "$ENVGATE" run --env e1 --config "$CFG" --report-dir "$T/rep-$how" >"$T/run-$how.log" 2>&1 &
        pid=$!
        BG_PIDS+=("$pid")
        wait_for 20 "the step to start ($how)" test -s "$T/step.pid"
        step=$(cat "$T/step.pid")
        case $how in
            kill) kill -KILL "$pid" ;;
            group) kill -KILL -- "-$pid" ;;
            stop) kill -STOP "$pid" ;;
        esac
        ms=$(gone_within 3 "$step")
        echo "step ended ${ms} ms after envgate's $how"
        if [[ $how == stop ]]; then
            ((ms <= 500 + 300)) || fail "the step outlived a stopped envgate by ${ms} ms (lease 3s / 6 = 500 ms)"
            kill -CONT "$pid"
            wait_exit "$pid" 20
            expect_rc 1 "the resumed envgate finds its step killed"
            expect_lock failed
        else
            ((ms <= 300)) || fail "the step outlived envgate ($how) by ${ms} ms"
        fi
    done
    ok "the step ended with envgate (kill -9, kill of its group) and within lease/6 of a SIGSTOP"
}

"scenario_$SCENARIO"
