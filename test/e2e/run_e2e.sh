#!/usr/bin/env bash
# End-to-end tests of `envgate run` against kubesim: usage run_e2e.sh ENVGATE KUBESIM
# SCENARIO. Each scenario writes an envgate.yml (file lock store, steps that echo, gate
# Jobs that run as local processes), runs the real binary and checks its exit code, the
# lock (envgate status --output json), the log and the reports.
ENVGATE=$1 KUBESIM=$2 SCENARIO=$3
source "$(dirname "$0")/lib.sh"
if [[ $SCENARIO == secrets ]]; then start_kubesim --tls; else start_kubesim; fi

NS=$(test_ns e2e)
CFG=$T/envgate.yml
# write_config DEPLOY_COMMAND: envgate.yml with pre- and post-migrations gates.
write_config() {
    cat >"$CFG" <<EOF
version: 1
defaults:
  namespace: $NS
  lock: { store: file, path: $T/locks, on_failure: hold }
environments:
  - name: e1
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

scenario_clean() {
    ok_job pre
    ok_job post
    write_config 'echo deploying $ENVGATE_ENV'
    run_envgate 90 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 0 "a clean run"
    log_has "$T/run.log" "deploying e1"
    log_has "$T/run.log" "envgate run e1: success (exit 0)"
    expect_lock free
    check_reports "$T/rep" e1 success
    [[ $(junit_xpath "$T/rep" 'count(//testcase)') == 4 ]] || fail "want 4 testcases (lock, 2 gates, deploy)"
    [[ $(junit_xpath "$T/rep" 'count(//failure|//skipped)') == 0 ]] || fail "failures in a clean run"
    ok "clean run: exit 0, lock free, 4 passing testcases"
}

scenario_step_fails() {
    ok_job pre
    ok_job post
    write_config 'echo deploying; exit 3'
    run_envgate 90 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 1 "deploy exited 3"
    log_has "$T/run.log" "step deploy exited 3"
    log_lacks "$T/run.log" "created Job $NS/post"
    expect_lock failed
    check_reports "$T/rep" e1 failed
    junit_xpath "$T/rep" '//testcase[@name="deploy"]/failure' >/dev/null || fail "deploy has no junit failure"
    junit_xpath "$T/rep" '//testcase[@name="post-migrations"]/skipped' >/dev/null ||
        fail "post-migrations is not <skipped>"
    grep -qx "ENVGATE_FAILED_STEP=deploy" "$T/rep/envgate.env" || fail "envgate.env lacks the failed step"
    grep -qx "ENVGATE_LOCK_STATE=failed" "$T/rep/envgate.env" || fail "envgate.env lacks the lock state"
    ok "failing step: exit 1, junit failure, later steps skipped, lock failed"
}

scenario_post_exhausted() {
    ok_job pre
    job_manifest "$T/post.yaml" post OnFailure 1 \
        "$(job_script post "sleep 0.3; echo 'column missing' > \"\$KUBESIM_TERMINATION_LOG\"; exit 2")"
    write_config 'echo deploying'
    run_envgate 90 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 1 "post-migrations exhausted its retries"
    grep -E '^post-migrations: failed \(MigrationsJobFailed\)' "$T/run.log" >/dev/null ||
        fail "no failed verdict for post-migrations"
    grep -E '^ +envgate unlock e1 ' "$T/run.log" >/dev/null || fail "the unlock command is not printed"
    expect_lock failed
    check_reports "$T/rep" e1 failed MigrationsJobFailed
    ok "post-migrations exhausted: exit 1, lock failed, unlock command printed"
}

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

scenario_lock_wait() {
    ok_job pre
    ok_job post
    write_config 'echo deploying'
    "$ENVGATE" lock acquire e1 --holder other --config "$CFG" >"$T/acquire.log" 2>&1 ||
        fail "lock acquire for other: $(cat "$T/acquire.log")"
    expect_lock held
    run_bg "$T/run.log" --report-dir "$T/rep"
    wait_for 30 "the run to queue for the lock" waiting_on_lock
    # The job log must say so while it waits (CI shows the log live, through a pipe).
    wait_for 10 "the waiting line in the log" grep -q "waiting for lock e1: held by other" "$T/run.log"
    log_lacks "$T/run.log" "created Job"
    "$ENVGATE" lock release e1 --holder other --config "$CFG" >"$T/release.log" 2>&1 ||
        fail "lock release for other: $(cat "$T/release.log")"
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
    ok "lock held after a failure: --wait-timeout 2s -> exit 3, unlock command printed"
}

# A bearer token (kubesim --tls) and a value of a variable named in ENVGATE_SECRET_VARS are
# planted where envgate sees them: the secret in the Job's env (termination message and
# logs) and in the deploy step's output, the token in the step's output too. Neither may
# appear in any output or report file.
scenario_secrets() {
    local token secret=s3cr3t-planted-value-42
    token=$(sed -nE 's/^ *token: *"?([^" ]+)"?.*/\1/p' "$KUBECONFIG" | head -1)
    [[ -n $token ]] || fail "no token in the TLS kubeconfig"
    export CI_DB_PASSWORD=$secret ENVGATE_SECRET_VARS=CI_DB_PASSWORD PLANTED_TOKEN=$token
    local counter=$T/pre.count
    job_manifest "$T/pre.yaml" pre OnFailure 3 "$(job_script pre "$(count_runs "$counter")
echo \"connecting with \$DB_PASSWORD\"
if [ \$n -le 1 ]; then echo \"auth failed for \$DB_PASSWORD\" > \"\$KUBESIM_TERMINATION_LOG\"; sleep 0.5; exit 1; fi
sleep 0.5")"
    sed -i 's/^          command: \(.*\)/          command: \1\n          env:\n            - name: DB_PASSWORD\n              value: "${CI_DB_PASSWORD}"/' "$T/pre.yaml"
    ok_job post
    write_config 'echo password $CI_DB_PASSWORD token $PLANTED_TOKEN; exit 4'
    run_envgate 90 "$T/run.log" run --env e1 --config "$CFG" --report-dir "$T/rep"
    expect_rc 1 "the deploy step fails"
    log_has "$T/run.log" "retrying (RetryingPreMigrations)"
    "${K[@]}" get jobs -n "$NS" -o json | grep -qF "$secret" || fail "the secret was not planted in the Job"
    "$ENVGATE" status --config "$CFG" >"$T/status.log" 2>&1 || true
    "$ENVGATE" gate --env e1 --gate pre-migrations --manifest "$T/pre.yaml" --namespace "$NS" \
        --report-dir "$T/rep-gate" >"$T/gate.log" 2>&1 || true
    local f leaked=()
    while IFS= read -r -d '' f; do
        if grep -qF -e "$secret" -e "$token" "$f"; then leaked+=("$f"); fi
    done < <(find "$T" \( -path "$T/locks" -o -name kubeconfig -o -name '*.sh' -o -name '*.yaml' \
        -o -name 'kubesim.log' -o -path "$T/.kube" \) -prune -o -type f -print0)
    [[ ${#leaked[@]} == 0 ]] || fail "secret or token found in: ${leaked[*]}"
    [[ -f $T/rep/junit.xml && -f $T/rep-gate/junit.xml && -s $T/run.log ]] ||
        fail "no reports or log to check"
    ok "planted token and ENVGATE_SECRET_VARS value absent from every output and report"
}

"scenario_$SCENARIO"
