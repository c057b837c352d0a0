#!/usr/bin/env bash
# End to end in a real CI runner, gitlab-ci-local 4.65.1 (shell executor): a
# throw-away project includes the `generate` and `unlock` components from itself,
# its jobs run the real envgate binary (no shim) against a private kubesim whose
# kubeconfig reaches them as the KUBECONFIG variable, with a file lock store at an
# absolute path that every working copy shares. Then
#   1. a push pipeline: `envgate generate` writes the child pipeline, the trigger
#      job runs it, the child runs `envgate run` for staging, then production; the
#      reports (junit.xml, summary.md, run.json, ...) are in each job's artifacts;
#      then a hot-fix pipeline of the `deploy` component alone upgrades production;
#      a push of a feature branch gets a diff-only child that takes no lock;
#   2. two pipelines at once on staging, from two working copies: the second waits
#      for the lock the first holds (named in its log), then proceeds; the lock
#      history has both, in order, without overlap (gitlab-ci-local ignores
#      resource_group, so this is envgate's own lock);
#   3. a pipeline whose post-migrations Job fails leaves staging failed; a
#      merge-request pipeline warns about it without locking; the next pipeline
#      waits, printing the unlock command; the manual unlock job refuses an empty
#      reason, then frees it with one; the waiting pipeline proceeds.
# Usage: gitlab_ci_local_test.sh ENVGATE_BINARY KUBESIM_BINARY PROJECT_DIR
ENVGATE=$(realpath "$1") KUBESIM=$(realpath "$2")
project=$(realpath "$3")
SCENARIO=gitlab-ci-local
source "$project/test/e2e/lib.sh"
source "$(dirname "$0")/gitlab_ci_local_lib.sh"

start_kubesim
KCFG=$KUBECONFIG # the jobs get it only as a CI variable
mkdir -p "$T/bin"
ln -s "$ENVGATE" "$T/bin/envgate" # the real binary on the jobs' PATH
make_source_repo

# --- 1. push pipeline: generate -> trigger -> child: staging, then production ---------
working_copy w1 "$SHA_BOTH" 10
pipeline w1 push1 --variable "CI_COMMIT_BEFORE_SHA=$SHA_BASE"
L=$T/push1.log
[[ $RC == 0 ]] || gfail "$L" "the push pipeline failed (exit $RC)"
log_has "$L" "envgate generate: staging: 1 changed path(s)"
log_has "$L" "envgate generate: production: 1 changed path(s)"
log_has "$L" "envgate run staging: success (exit 0)"
log_has "$L" "envgate run production: success (exit 0)"
log_has "$L" "deploy of staging by pipeline 1012"
in_order "$L" "envgate run staging: success" "production:run \$ envgate run --env production"
log_lacks "$L" "shim"
for env in staging production; do
    rep=$(artifact_dir w1 "$env:run")/envgate-report
    for f in junit.xml summary.md summary.html envgate.env annotations.json run.json; do
        [[ -s $rep/$f ]] || fail "artifact $f of $env:run is missing"
    done
    check_reports "$rep" "$env" success
    names=$(xmllint --xpath '//testcase/@name' "$rep/junit.xml" | tr -d ' "' | tr '\n' ' ')
    [[ $names == "name=lock name=diff name=pre-migrations name=deploy name=post-migrations " ]] ||
        fail "$env junit testcases: $names"
    jq -e --arg env "$env" '.environment == $env and .result == "success"' "$rep/run.json" \
        >/dev/null || fail "$env run.json: $(head -c 400 "$rep/run.json")"
    grep -q "$env" "$rep/summary.md" || fail "$env summary.md does not name the environment"
    [[ $(lock_json "$env" | jq -r .state) == free ]] || fail "$env is not free after the pipeline"
done
# The generator job has the component's image and tags; the child pipeline names the
# image its trigger job forwards, and envgate.yml's ci: tags, interruptible, timeout
# and production's tier.
child=$(artifact_dir w1 envgate-generate-all)/envgate-child.yml
[[ -s $child ]] || fail "the child pipeline artifact is missing"
python3 - "$child" <<'PY' || fail "the child pipeline lacks ci: defaults: $(cat "$child")"
import sys, yaml
child = yaml.safe_load(open(sys.argv[1]))
assert child["default"] == {"image": {"name": "$ENVGATE_CHILD_IMAGE", "entrypoint": [""]},
                            "tags": ["kubernetes"], "interruptible": False, "timeout": "30m"}, child.get("default")
assert child["production:run"]["environment"]["deployment_tier"] == "production"
assert "deployment_tier" not in child["staging:run"]["environment"]
PY
(cd "$T/w1" && "${GCL_ENV[@]}" "$gcl" --no-color "${GCL_OPTS[@]}" --preview) >"$T/preview.yml" 2>"$T/preview.err" ||
    gfail "$T/preview.yml" "gitlab-ci-local --preview failed"
python3 - "$T/preview.yml" "$PARENT_IMAGE" <<'PY' || gfail "$T/preview.yml" "the generate job lacks the image and tags inputs"
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if isinstance(d, dict)]
job = next(d["envgate-generate-all"] for d in docs if "envgate-generate-all" in d)
assert job["image"] == {"name": sys.argv[2], "entrypoint": [""]}, job["image"]
assert job["tags"] == ["kubernetes"], job["tags"]
trigger = next(d["envgate-child-all"] for d in docs if "envgate-child-all" in d)
assert trigger["variables"]["ENVGATE_CHILD_IMAGE"] == sys.argv[2], trigger["variables"]
assert trigger["trigger"]["forward"]["yaml_variables"] is True, trigger["trigger"]
PY
ok "push pipeline: the generated child ran envgate run for staging, then production"
GCL_OPTS=(--force-shell-executor --no-json-schema-validation) # checked once above; it costs seconds a pipeline

pipeline w1 hotfix --file hotfix.gitlab-ci.yml
L=$T/hotfix.log
[[ $RC == 0 ]] || gfail "$L" "the hot-fix pipeline failed (exit $RC)"
log_has "$L" "envgate run --env \"production\" --config \"envgate.yml\" --report-dir \"envgate-report\" --wait-timeout 1m"
log_has "$L" "envgate run production: success (exit 0)"
rep=$(artifact_dir w1 envgate-deploy-production)/envgate-report
[[ -s $rep/summary.html ]] || fail "the deploy component's summary.html artifact is missing"
ok "deploy component: one job ran the whole upgrade of production"

# --- 1b. a feature branch's push: the child only diffs and takes no lock ----------------
working_copy w6 "$SHA_BOTH" 60
git -C "$T/w6" checkout -qb feature/x
staging_seq=$(lock_json staging | jq '[.history[].seq] | max')
pipeline w6 feature --variable "CI_COMMIT_BEFORE_SHA=$SHA_BASE"
L=$T/feature.log
[[ $RC == 0 ]] || gfail "$L" "the feature branch's pipeline failed (exit $RC)"
log_has "$L" 'diff only, no lock: branch "feature/x" is not the default branch "main"'
log_has "$L" "staging:diff"
log_lacks "$L" "envgate run --env"
[[ $(lock_json staging | jq '[.history[].seq] | max') == "$staging_seq" ]] ||
    fail "the feature branch's pipeline changed the staging lock: $(lock_json staging | jq -c .history)"
ok "feature branch: a diff-only child, no lock taken"

# --- 2. two pipelines at once on staging -----------------------------------------------
working_copy w2 "$SHA_STAGING" 100
working_copy w3 "$SHA_STAGING" 200
touch "$T/pause" # w2's deploy step waits until the test resumes it
pipeline_bg w2 first --variable "CI_COMMIT_BEFORE_SHA=$SHA_BOTH"
FIRST_PID=$BG_PID
wait_for 60 "the first pipeline to pause in its deploy step" test -e "$T/paused-1102"
[[ $(lock_json staging | jq -r .holder.id) == acme/envgate#1102 ]] ||
    fail "the first pipeline does not hold staging: $(lock_json staging)"
pipeline_bg w3 second --variable "CI_COMMIT_BEFORE_SHA=$SHA_BOTH"
SECOND_PID=$BG_PID
wait_for 60 "the second pipeline to wait for the lock" \
    grep -q "waiting for lock staging: held by acme/envgate#1102" "$T/second.log"
lock_json staging | jq -e '.waiters | map(.who.id) | index("acme/envgate#1202") != null' \
    >/dev/null || fail "the second pipeline is not in the queue: $(lock_json staging)"
log_lacks "$T/second.log" "deploy of staging"
touch "$T/resume"
wait_exit "$FIRST_PID" 120
[[ $RC == 0 ]] || gfail "$T/first.log" "the first pipeline failed (exit $RC)"
wait_exit "$SECOND_PID" 120
[[ $RC == 0 ]] || gfail "$T/second.log" "the second pipeline failed (exit $RC)"
log_has "$T/first.log" "envgate run staging: success (exit 0)"
log_has "$T/second.log" "envgate run staging: success (exit 0)"
in_order "$T/second.log" "waiting for lock staging: held by acme/envgate#1102" \
    "deploy of staging by pipeline 1202"
check_no_overlap acme/envgate#1102 acme/envgate#1202
ok "second pipeline waited for envgate's lock held by the first, then proceeded; no overlap"

# --- 3. a failed pipeline holds staging until the manual unlock ------------------------
working_copy w4 "$SHA_BREAK" 300
pipeline w4 broken --variable "CI_COMMIT_BEFORE_SHA=$SHA_STAGING"
L=$T/broken.log
log_has "$L" "envgate run staging: failed (exit 1)"
log_has "$L" " FAIL  staging:run"
grep -qE "post-migrations: failed \(MigrationsJobFailed\)" "$L" || gfail "$L" "no MigrationsJobFailed verdict"
log_lacks "$L" "envgate run production"
rep=$(artifact_dir w4 "staging:run")/envgate-report
check_reports "$rep" staging failed MigrationsJobFailed
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "staging is not failed: $(lock_json staging)"
[[ $(envgate_cli status staging --output json | jq -r '.locks[0].lock.failure.reason') == \
    MigrationsJobFailed ]] || fail "envgate status does not show the failure"
ok "failed post-migrations: staging is held (failed, MigrationsJobFailed)"

pipeline w4 mr --variable CI_PIPELINE_SOURCE=merge_request_event --variable CI_MERGE_REQUEST_IID=7 \
    --variable "CI_MERGE_REQUEST_DIFF_BASE_SHA=$SHA_STAGING"
L=$T/mr.log
[[ $RC == 0 ]] || gfail "$L" "the merge-request pipeline failed (exit $RC)"
log_has "$L" "WARNING: environment staging is LOCKED"
log_has "$L" "diff of staging"
grep -F "staging:diff finished in" "$L" | grep -q "WARN 3" || gfail "$L" "diff job did not end with the allowed exit 3"
log_lacks "$L" "envgate run"
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "the merge-request pipeline changed the lock"
ok "merge-request pipeline: diff only, warned that staging is locked"

working_copy w5 "$SHA_FIX" 400
pipeline_bg w5 next --variable "CI_COMMIT_BEFORE_SHA=$SHA_BREAK"
NEXT_PID=$BG_PID
wait_for 60 "the next pipeline to wait for the failed lock" \
    grep -qF 'to unlock: envgate unlock staging --reason "..." --expect-holder acme/envgate#1302' "$T/next.log"
log_lacks "$T/next.log" "deploy of staging"
# The stand-in GitLab that envgate.yml pins (gitlab_ci_local_lib.sh) answers for the
# job token given below.
GITLAB_VARS=(--variable "CI_SERVER_URL=$GITLAB_URL" --variable CI_JOB_TOKEN=gcl-job-token)
job w4 unlock-spoofed envgate-unlock-staging "${GITLAB_VARS[@]}" --variable CI_JOB_TOKEN=stolen \
    --variable "ENVGATE_UNLOCK_REASON=not really ci"
log_has "$T/unlock-spoofed.log" "GitLab could not say who runs this job"
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "an unverified job unlocked staging"
job w4 unlock-empty envgate-unlock-staging "${GITLAB_VARS[@]}"
log_has "$T/unlock-empty.log" "refusing to unlock staging without a reason"
[[ $(lock_json staging | jq -r .state) == failed ]] || fail "an empty reason unlocked staging"
job w4 unlock envgate-unlock-staging "${GITLAB_VARS[@]}" --variable "ENVGATE_UNLOCK_REASON=column added by hand" \
    --variable "ENVGATE_UNLOCK_EXPECT_HOLDER=acme/envgate#1302"
log_has "$T/unlock.log" "lock staging: unlocked (was failed by acme/envgate#1302"
log_has "$T/unlock.log" "recorded as ci: column added by hand"
wait_exit "$NEXT_PID" 120
[[ $RC == 0 ]] || gfail "$T/next.log" "the next pipeline failed (exit $RC)"
L=$T/next.log
log_has "$L" "envgate run staging: success (exit 0)"
in_order "$L" "to unlock: envgate unlock staging" "deploy of staging by pipeline 1402"
lock_json staging | jq -e '[.history[] | select(.what == "unlock")] | last
    | (.who == "ci") and (.why | startswith("column added by hand"))' >/dev/null ||
    fail "no unlock by ci with the reason in the history: $(lock_json staging | jq -c .history)"
[[ $(lock_json staging | jq -r .state) == free ]] || fail "staging is not free at the end"
ok "manual unlock with a reason freed staging; the waiting pipeline proceeded"
echo "gitlab-ci-local end-to-end test: every check held"
