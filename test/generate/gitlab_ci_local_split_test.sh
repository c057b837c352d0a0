#!/usr/bin/env bash
# The default child pipeline (`jobs: split`) in a real CI runner (gitlab-ci-local,
# shell executor; helpers in gitlab_ci_local_lib.sh): every job of an environment's
# chain runs one gate or step with `envgate run --only`, which records a failure in the
# lock itself. So the lock's state never depends on a later job that GitLab may skip:
# gitlab-ci-local skips `<env>:fail` (`when: on_failure`) when a job it needs was
# skipped, and GitLab's own handling of that case has changed over its versions.
#   1. a push pipeline whose deploy step fails: diff and pre-migrations pass, each
#      keeping the lock for the next job; deploy fails and fails the lock itself
#      (StepFailed, the unlock command in status and the job log); post-migrations and
#      release are skipped;
#   2. after an unlock, a pipeline whose post-migrations Job fails: that job fails the
#      lock (MigrationsJobFailed), not the `when: on_failure` job;
#   3. a pipeline of another working copy: its diff job sees the failed lock and gives
#      up with the unlock command; its deploy never runs.
# Usage: gitlab_ci_local_split_test.sh ENVGATE_BINARY KUBESIM_BINARY PROJECT_DIR
ENVGATE=$(realpath "$1") KUBESIM=$(realpath "$2")
project=$(realpath "$3")
SCENARIO=gitlab-ci-local-split
source "$project/test/e2e/lib.sh"
source "$(dirname "$0")/gitlab_ci_local_lib.sh"

start_kubesim
KCFG=$KUBECONFIG # the jobs get it only as a CI variable
mkdir -p "$T/bin"
ln -s "$ENVGATE" "$T/bin/envgate"
make_source_repo
# The generate component's default child pipeline: jobs: split; a short lock wait; a
# deploy step that fails while $T/break-deploy exists.
(
    cd "$T/src" || exit 1
    git checkout -q -b split "$SHA_BREAK"
    sed -i 's/^      jobs: run$/      jobs: split/' .gitlab-ci.yml
    sed -i 's/on_failure: hold }/on_failure: hold, wait_timeout: 3s, local_unlock: true }/' envgate.yml
    printf 'if [ -e "%s/break-deploy" ]; then echo "helm: release failed"; exit 5; fi\n' "$T" \
        >>scripts/deploy.sh
    grep -q 'jobs: split' .gitlab-ci.yml || exit 1
    commit split >"$T/sha.split"
) || fail "could not make the split commit"
SHA_SPLIT=$(cat "$T/sha.split")
passed() { grep -qE "^ PASS  .*staging:$2 *\$" "$1" || gfail "$1" "staging:$2 did not pass"; }
not_passed() { ! grep -qE "^ PASS  .*staging:$2 *\$" "$1" || gfail "$1" "staging:$2 passed"; }
failed() { grep -qE "^ FAIL  .*staging:$2 *\$" "$1" || gfail "$1" "staging:$2 did not fail"; }
# expect_failed STEP REASON: staging is failed by STEP with REASON; status shows the unlock.
expect_failed() {
    local lock
    lock=$(lock_json staging)
    [[ $(jq -r .state <<<"$lock") == failed ]] || fail "staging is not failed: $lock"
    [[ $(jq -r .failure.step <<<"$lock") == "$1" ]] || fail "failed step, want $1: $lock"
    [[ $(jq -r .failure.reason <<<"$lock") == "$2" ]] || fail "failure reason, want $2: $lock"
    envgate_cli status staging >"$T/status.txt"
    log_has "$T/status.txt" "envgate unlock staging --reason"
}

# --- 1. deploy fails: post-migrations and the on_failure job's needs are skipped ------
touch "$T/break-deploy"
working_copy w1 "$SHA_SPLIT" 10
pipeline w1 split1 --variable "CI_COMMIT_BEFORE_SHA=$SHA_STAGING"
L=$T/split1.log
log_has "$L" "envgate generate: staging: "
passed "$L" diff
passed "$L" pre-migrations
failed "$L" deploy
not_passed "$L" post-migrations
not_passed "$L" release
log_has "$L" "staging stays locked by acme/envgate#1012 for this pipeline's next job"
log_has "$L" "run the manual job envgate-unlock-staging of this pipeline"
# The deploy job failed the lock itself: StepFailed, not the on_failure job's reason.
expect_failed deploy StepFailed
ok "split pipeline: deploy failed; staging is failed by the deploy job, with the unlock command"

# --- 2. unlocked; the next pipeline's post-migrations Job fails ------------------------
rm "$T/break-deploy"
envgate_cli unlock staging --reason "deploy fixed" >"$T/unlock.log" 2>&1 || gfail "$T/unlock.log" "unlock"
working_copy w2 "$SHA_SPLIT" 20
pipeline w2 split2 --variable "CI_COMMIT_BEFORE_SHA=$SHA_STAGING"
L=$T/split2.log
for job in diff pre-migrations deploy; do passed "$L" "$job"; done
failed "$L" post-migrations
not_passed "$L" release
grep -qE "post-migrations: failed \(MigrationsJobFailed\).*column users.email does not exist" "$L" ||
    gfail "$L" "no MigrationsJobFailed verdict for post-migrations"
expect_failed post-migrations MigrationsJobFailed
holder=$(lock_json staging | jq -r .holder.id)
[[ $holder == acme/envgate#1022 ]] || fail "staging is held by $holder, want acme/envgate#1022"
ok "split pipeline: post-migrations failed; staging is failed by that job"

# --- 3. the next pipeline's diff job gives up on the failed lock ------------------------
working_copy w3 "$SHA_SPLIT" 30
pipeline w3 split3 --variable "CI_COMMIT_BEFORE_SHA=$SHA_STAGING"
L=$T/split3.log
failed "$L" diff
log_has "$L" "envgate unlock staging --reason"
log_lacks "$L" "deploy of staging by pipeline 1032"
[[ $(lock_json staging | jq -r .holder.id) == "$holder" ]] || fail "the failed lock changed hands"
ok "the next pipeline's diff job stops on the failed lock and prints the unlock command"
echo "gitlab-ci-local split pipeline test: every check held"
