#!/usr/bin/env bash
# Retry after an unlock, end to end in a real CI runner (gitlab-ci-local, shell
# executor; helpers in gitlab_ci_local_lib.sh): a project with the `deploy` and
# `unlock` components for staging, the real envgate against a private kubesim (or,
# with ENVGATE_TEST_CLUSTER=controlplane, the real control plane of the test run).
#   1. the pipeline's deploy job fails: its pre-migrations Job fails, staging is held;
#   2. retried before the unlock, the job waits for the held lock and gives up (exit 3)
#      with the unlock command, creating no Job;
#   3. the person fixes the database and runs the manual unlock job with a reason;
#   4. the failed deploy job is retried (gitlab-ci-local JOB: the same pipeline, as
#      GitLab's Retry): a new Job, named after the unlock, runs and passes, the job
#      passes and staging is free. The Job that failed is left for inspection.
# The Job spec is the same in every run of the pipeline (no pipeline-specific values
# changed), so only the unlock can give the retry a new Job (docs/reruns.md).
# Usage: gitlab_ci_local_retry_test.sh ENVGATE_BINARY KUBESIM_BINARY PROJECT_DIR
ENVGATE=$(realpath "$1") KUBESIM=$(realpath "$2")
project=$(realpath "$3")
SCENARIO=gitlab-ci-local-retry
source "$project/test/e2e/lib.sh"
source "$(dirname "$0")/gitlab_ci_local_lib.sh"

# write_retry_project: the deploy and unlock components for staging, a pre-migrations
# Job that fails (exit 3) until $T/fixed exists.
write_retry_project() {
    mkdir -p templates jobs
    cp "$project"/ci-templates/templates/*.yml templates/
    job_manifest_yaml pre-migrations "if [ ! -f '$T/fixed' ]; then
  echo 'relation users missing' | tee \"\$KUBESIM_TERMINATION_LOG\"; exit 3
fi
echo \"pre-migrations of \$APP_ENV for pipeline \$APP_PIPELINE\"" >jobs/pre-migrations.yaml
    {
        config_defaults "$NS"
        cat <<EOF
environments:
  - name: staging
gates:
  pre-migrations: { job: jobs/pre-migrations.yaml }
steps:
  deploy: "echo deploy of \$ENVGATE_ENV by pipeline \$CI_PIPELINE_ID"
EOF
    } >envgate.yml
    cat >.gitlab-ci.yml <<'EOF'
stages: [deploy]
include:
  - component: $CI_SERVER_FQDN/acme/envgate/deploy@$CI_COMMIT_SHA
    inputs:
      environment: staging
      args: --wait-timeout 2s
  - component: $CI_SERVER_FQDN/acme/envgate/unlock@$CI_COMMIT_SHA
    inputs:
      environment: staging
EOF
    printf '.gitlab-ci-local/\n.gitlab-ci-local-variables.yml\nenvgate-report/\n' >.gitignore
}

# deploy_job NAME: the deploy job alone, as GitLab's Retry runs it (same pipeline id);
# log in $T/NAME.log; sets RC.
deploy_job() {
    RC=0
    (cd "$T/w" && timeout -s KILL 120 "${GCL_ENV[@]}" "$gcl" --no-color "${GCL_OPTS[@]}" \
        envgate-deploy-staging </dev/null >"$T/$1.log" 2>&1) || RC=$?
    [[ $RC != 137 ]] || gfail "$T/$1.log" "gitlab-ci-local did not finish within 120s"
}
job_created() { sed -nE "s|.*created Job $NS/(pre-migrations-[a-z0-9]+)\$|\\1|p" "$1" | head -1; }

start_kubesim
NS=$(test_ns gitlab) # on the control plane: a namespace of this test's own
KCFG=$KUBECONFIG # the jobs get it only as a CI variable
mkdir -p "$T/bin" "$T/src"
ln -s "$ENVGATE" "$T/bin/envgate"
(cd "$T/src" && git init -q -b main && write_retry_project && commit retry >"$T/sha")
working_copy w "$(cat "$T/sha")" 10

# --- 1. the pipeline fails in pre-migrations: staging is held ------------------------
pipeline w first
L=$T/first.log
[[ $RC != 0 ]] || gfail "$L" "the pipeline passed; its pre-migrations Job should fail"
log_has "$L" " FAIL  envgate-deploy-staging"
grep -qE "pre-migrations: failed \(MigrationsJobFailed\).*relation users missing; container migrations exited 3" "$L" ||
    gfail "$L" "no MigrationsJobFailed verdict naming exit 3"
log_lacks "$L" "deploy of staging"
failed_job=$(job_created "$L")
[[ -n $failed_job ]] || gfail "$L" "no pre-migrations Job in the log"
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "staging is not failed: $(lock_json staging)"
holder=$(lock_json staging | jq -r .holder.id)
[[ $holder == acme/envgate#1011 ]] || fail "staging is held by $holder, want acme/envgate#1011"
# In a pipeline the job log names the manual unlock job first, then the CLI.
grep -qE "run the manual job envgate-unlock-staging of this pipeline \(.+\) with the variable ENVGATE_UNLOCK_REASON" "$L" ||
    gfail "$L" "the failed run does not name the manual unlock job"
ok "the pipeline failed in pre-migrations (Job $failed_job); staging is held"

# --- 2. retried before anyone unlocked it: it waits for the held lock, then gives up ----
deploy_job retry-locked
L=$T/retry-locked.log
[[ $RC != 0 ]] || gfail "$L" "a retry passed while staging was held"
log_has "$L" "envgate run staging: failed (exit 3)"
log_has "$L" "to unlock: envgate unlock staging --reason \"...\" --expect-holder $holder"
log_has "$L" "run the manual job envgate-unlock-staging of this pipeline"
log_lacks "$L" "created Job"
log_lacks "$L" "deploy of staging"
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "the retry changed the held lock"
ok "a retry before the unlock waits for the held lock, gives up with exit 3 and the unlock command"

# --- 3. the database is fixed, the manual unlock job frees staging ----------------------
touch "$T/fixed"
job w unlock envgate-unlock-staging --variable "CI_SERVER_URL=$GITLAB_URL" \
    --variable CI_JOB_TOKEN=gcl-job-token --variable "ENVGATE_UNLOCK_REASON=table users restored" \
    --variable "ENVGATE_UNLOCK_EXPECT_HOLDER=$holder"
log_has "$T/unlock.log" "lock staging: unlocked (was failed by $holder"
[[ $(lock_json staging | jq -r .state) == free ]] || gfail "$T/unlock.log" "the unlock job did not free staging"
ok "the manual unlock job freed staging"

# --- 4. Retry of the failed deploy job: a new Job runs, the job passes ------------------
deploy_job retry
L=$T/retry.log
[[ $RC == 0 ]] || gfail "$L" "the retried deploy job failed (exit $RC)"
log_has "$L" " PASS  envgate-deploy-staging"
log_has "$L" "deploy of staging by pipeline 1011" # the same pipeline: a retry, not a new one
grep -qE "^.*pre-migrations: new Job after the unlock by ci at [0-9T:-]+Z; " "$L" ||
    gfail "$L" "the retry does not say its Job is new after the unlock"
new_job=$(job_created "$L")
[[ -n $new_job && $new_job != "$failed_job" ]] || gfail "$L" "the retry did not create a new Job ($new_job)"
log_lacks "$L" "re-attached"
"${K[@]}" logs -n "$NS" "job/$new_job" | grep -qx "pre-migrations of staging for pipeline 1011" ||
    fail "the new Job did not run the migration: $("${K[@]}" logs -n "$NS" "job/$new_job" 2>&1)"
[[ $("${K[@]}" get job -n "$NS" "$new_job" -o jsonpath='{.metadata.labels.envgate\.dev/unlock}') =~ ^[0-9]+$ ]] ||
    fail "the new Job lacks the envgate.dev/unlock label"
"${K[@]}" get job -n "$NS" "$failed_job" -o json | jq -e '.status.conditions[]
    | select(.type == "Failed" and .status == "True")' >/dev/null ||
    fail "the Job that failed is not left as it was"
[[ -s $(artifact_dir w envgate-deploy-staging)/envgate-report/summary.html ]] ||
    fail "the retried job's summary.html artifact is missing"
check_reports "$T/w/envgate-report" staging success # the shell executor runs in the copy
[[ $(lock_json staging | jq -r .state) == free ]] || fail "staging is not free after the retry"
ok "retry after the unlock: new Job $new_job (was $failed_job) passed; the deploy job passed; staging is free"
echo "gitlab-ci-local retry-after-unlock test: every check held"
