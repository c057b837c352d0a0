# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154 # globals shared with gitlab_ci_local_test.sh
# Helpers of gitlab_ci_local_test.sh and gitlab_ci_local_retry_test.sh: the example
# project (a git repository with the components, envgate.yml, Job manifests and a
# deploy step), working copies of it (each its own gitlab-ci-local state and pipeline
# ids), pipelines in the foreground or the background (own process group), and checks
# of logs, artifacts and the lock.
# Sourced after test/e2e/lib.sh (T, fail, wait_for, wait_exit, log_has, ...), with
# $project the source tree.

gcl="$project/scripts/node/node_modules/.bin/gitlab-ci-local"
[[ -x $gcl ]] || fail "missing $gcl: run scripts/install-deps --test"
for tool in rsync git jq xmllint setsid; do
    command -v "$tool" >/dev/null || fail "missing $tool: run scripts/install-deps --test"
done
GCL_GROUPS=()
# Jobs name an image (the components' `image` input, the child's `default:image`);
# the shell executor runs them all here, with the envgate binary on PATH.
# The first pipeline checks the CI files against gitlab-ci-local's schema, but for
# an empty `tags: []` (a component's default: no runner tags), which GitLab takes
# and the schema does not.
GCL_OPTS=(--force-shell-executor --ignore-schema-paths "#/definitions/tags/minItems")
# gitlab-ci-local hands its own environment to every job, under the job's variables:
# a clean one, so that a CI running this test cannot leak CI_* values into the jobs.
GCL_ENV=(env -i "PATH=$T/bin:$PATH" "HOME=$HOME" "TMPDIR=${TMPDIR:-/tmp}" LANG=C.UTF-8 NO_COLOR=1
    GCL_IGNORE_PREDEFINED_VARS=CI_PIPELINE_SOURCE,CI_SERVER_URL,CI_JOB_TOKEN)
kill_gcl_groups() {
    local g
    for g in "${GCL_GROUPS[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
}
trap 'kill_gcl_groups; cleanup' EXIT

# gfail LOG MESSAGE: the whole log, then fail.
gfail() {
    echo "--- $1" >&2
    cat "$1" >&2
    fail "$2"
}
line_of() { { grep -nF -- "$2" "$1" || true; } | head -1 | cut -d: -f1; }
# in_order LOG FIRST SECOND: FIRST's first line comes before SECOND's.
in_order() {
    local a b
    a=$(line_of "$1" "$2")
    b=$(line_of "$1" "$3")
    [[ -n $a && -n $b && $a -lt $b ]] || gfail "$1" "'$2' is not before '$3'"
}

# job_manifest_yaml NAME BODY: a Job whose container runs `sh -c BODY`. Its env carries
# the pipeline id, so every pipeline gets its own Job (as an image tag would).
job_manifest_yaml() {
    cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrations
          image: registry.example.com/acme/migrations:1.0
          env:
            - { name: APP_ENV, value: "\${ENVGATE_ENV}" }
            - { name: APP_PIPELINE, value: "\${CI_PIPELINE_ID}" }
          command:
            - sh
            - -c
            - |
$(printf '%s\n' "$2" | sed 's/^/              /')
EOF
}

# GitLab's job API, which envgate asks who runs the unlock job (GITLAB_USER_LOGIN is
# the job's own variable): a stand-in on 127.0.0.1 for the job token gcl-job-token,
# pinned in envgate.yml as gitlab.url (envgate never asks the job's CI_SERVER_URL).
python3 "$(dirname "${BASH_SOURCE[0]}")/fake_gitlab_job_api.py" gcl-job-token ci 7 \
    >"$T/gitlab.port" 2>"$T/gitlab.log" &
BG_PIDS+=($!)
wait_for 10 "the GitLab job API stand-in" test -s "$T/gitlab.port"
GITLAB_URL="http://127.0.0.1:$(cat "$T/gitlab.port")"

# config_defaults [NAMESPACE]: the top of envgate.yml: the Jobs' namespace (gitlab), a
# file lock store shared by every working copy, held after a failure; the manual unlock
# job's user (ci) may unlock, as the stand-in GitLab says.
config_defaults() {
    cat <<EOF
version: 1
gitlab: { url: "$GITLAB_URL" }
defaults:
  namespace: ${1:-gitlab}
  lock: { store: file, path: $T/locks, on_failure: hold }
  unlockers: [ ci ]
EOF
}

write_project_files() {
    mkdir -p templates jobs scripts envs/staging envs/production envs/common
    cp "$project"/ci-templates/templates/*.yml templates/
    job_manifest_yaml pre-migrations 'echo "pre-migrations of $APP_ENV for pipeline $APP_PIPELINE"' \
        >jobs/pre-migrations.yaml
    job_manifest_yaml post-migrations 'echo "post-migrations of $APP_ENV for pipeline $APP_PIPELINE"' \
        >jobs/post-migrations.yaml
    # The deploy step pauses (for the concurrency check) while $T/pause exists and
    # $T/resume does not; paused-<pipeline id> says it got there.
    cat >scripts/deploy.sh <<EOF
#!/bin/sh
echo "deploy of \$ENVGATE_ENV by pipeline \$CI_PIPELINE_ID"
if [ -e "$T/pause" ] && [ ! -e "$T/resume" ]; then
  touch "$T/paused-\$CI_PIPELINE_ID"
  while [ ! -e "$T/resume" ]; do sleep 0.05; done
fi
EOF
    {
        config_defaults
        cat <<EOF
environments:
  - name: staging
    paths: [ "envs/staging/**/*", "envs/common/**/*" ]
  - name: production
    after: [ staging ]
    paths: [ "envs/production/**/*", "envs/common/**/*" ]
gates:
  pre-migrations: { job: jobs/pre-migrations.yaml }
  post-migrations: { job: jobs/post-migrations.yaml }
steps:
  diff: "echo diff of \$ENVGATE_ENV"
  deploy: "sh scripts/deploy.sh"
ci:
  tags: [ kubernetes ]
  interruptible: false
  timeout: 30m
  deployment_tiers: { production: production }
EOF
    } >envgate.yml
    cat >.gitlab-ci.yml <<'EOF'
stages: [plan, deploy]
include:
  - component: $CI_SERVER_FQDN/acme/envgate/generate@$CI_COMMIT_SHA
    inputs:
      generate_stage: plan
      trigger_stage: deploy
      jobs: run
      fetch_default_branch: false   # the origin of this test repository is not reachable
      image: registry.example.com/tools/envgate:0.1.0   # PARENT_IMAGE
      tags: [ kubernetes ]
  - component: $CI_SERVER_FQDN/acme/envgate/unlock@$CI_COMMIT_SHA
    inputs:
      environment: staging
EOF
    # A hot-fix pipeline that runs the deploy component alone (gitlab-ci-local --file).
    cat >hotfix.gitlab-ci.yml <<'EOF'
stages: [deploy]
include:
  - component: $CI_SERVER_FQDN/acme/envgate/deploy@$CI_COMMIT_SHA
    inputs:
      environment: production
      deployment_tier: production
      args: --wait-timeout 1m
EOF
    printf '.gitlab-ci-local/\n.gitlab-ci-local-variables.yml\nenvgate-report/\n' >.gitignore
}

commit() {
    git add -A
    git -c user.email=ci@example.com -c user.name=ci commit -qm "$1"
    git rev-parse HEAD
}

# The image the generator job (component input) names, and the child pipeline through
# the trigger job's ENVGATE_CHILD_IMAGE; nothing pulls it (shell executor).
PARENT_IMAGE=registry.example.com/tools/envgate:0.1.0

# make_source_repo: $T/src and its commits SHA_BASE (everything), SHA_BOTH (common:
# staging and production), SHA_STAGING, SHA_BREAK (post-migrations fails), SHA_FIX.
make_source_repo() {
    mkdir -p "$T/src"
    (
        cd "$T/src" || exit 1
        git init -q -b main
        write_project_files
        echo 1 >envs/staging/app && echo 1 >envs/production/app && echo 1 >envs/common/app
        commit base >"$T/sha.base"
        echo 2 >envs/common/app && commit both >"$T/sha.both"
        echo 2 >envs/staging/app && commit staging >"$T/sha.staging"
        echo 3 >envs/staging/app
        job_manifest_yaml post-migrations \
            "echo 'column users.email does not exist' | tee \"\$KUBESIM_TERMINATION_LOG\"; exit 2" \
            >jobs/post-migrations.yaml
        commit break >"$T/sha.break"
        echo 4 >envs/staging/app
        job_manifest_yaml post-migrations 'echo "post-migrations (fixed) of $APP_ENV"' \
            >jobs/post-migrations.yaml
        commit fix >"$T/sha.fix"
    )
    SHA_BASE=$(cat "$T/sha.base") SHA_BOTH=$(cat "$T/sha.both")
    SHA_STAGING=$(cat "$T/sha.staging") SHA_BREAK=$(cat "$T/sha.break") SHA_FIX=$(cat "$T/sha.fix")
}

# working_copy NAME SHA IID: a clone at SHA whose origin looks like the GitLab project
# acme/envgate. Its next pipeline gets CI_PIPELINE_ID 1000+IID+1, its child 1000+IID+2.
# The kubeconfig reaches the jobs (and the child pipelines) as a CI variable.
working_copy() {
    local w=$T/$1
    git clone -q "$T/src" "$w"
    git -C "$w" reset -q --hard "$2"
    git -C "$w" remote set-url origin git@gitlab.example.com:acme/envgate.git
    git -C "$w" config user.email ci@example.com
    git -C "$w" config user.name ci
    mkdir -p "$w/.gitlab-ci-local"
    printf -- '---\npipelineIid: %s\n' "$3" >"$w/.gitlab-ci-local/state.yml"
    printf 'KUBECONFIG: %s\n' "$KCFG" >"$w/.gitlab-ci-local-variables.yml"
}

# pipeline COPY NAME ARGS...: a whole pipeline in the working copy, log in $T/NAME.log;
# sets RC. (gitlab-ci-local passes a trigger job whatever its child pipeline did.)
pipeline() {
    local w=$T/$1 log=$T/$2.log
    shift 2
    RC=0
    (cd "$w" && timeout -s KILL 150 "${GCL_ENV[@]}" "$gcl" --no-color "${GCL_OPTS[@]}" "$@" \
        </dev/null >"$log" 2>&1) || RC=$?
    [[ $RC != 137 ]] || gfail "$log" "gitlab-ci-local did not finish within 150s"
}
# job COPY NAME JOB ARGS...: one job (a manual one is run as if clicked).
job() {
    local w=$T/$1 log=$T/$2.log
    shift 2
    (cd "$w" && timeout -s KILL 60 "${GCL_ENV[@]}" "$gcl" --no-color "${GCL_OPTS[@]}" "$@" \
        </dev/null >"$log" 2>&1) || true
}
# pipeline_bg COPY NAME ARGS...: a pipeline in the background, in its own process
# group; sets BG_PID.
pipeline_bg() {
    local w=$T/$1 log=$T/$2.log
    shift 2
    (cd "$w" && exec setsid "${GCL_ENV[@]}" "$gcl" --no-color "${GCL_OPTS[@]}" "$@" \
        </dev/null >"$log" 2>&1) &
    BG_PID=$!
    GCL_GROUPS+=("$BG_PID")
}

# artifact_dir COPY JOB: where gitlab-ci-local keeps the job's artifacts (its safe job
# name spells ':' as "Og", the base64 of ':').
artifact_dir() {
    local d=$T/$1/.gitlab-ci-local/artifacts/${2//:/Og}
    [[ -d $d ]] || fail "no artifacts of $2 in $1: $(ls "$T/$1/.gitlab-ci-local/artifacts" 2>&1)"
    echo "$d"
}

envgate_cli() { (cd "$T/src" && "$ENVGATE" "$@" --config envgate.yml); }
# lock_json ENV: the lock record, as `envgate status --output json` shows it.
lock_json() { envgate_cli status "$1" --output json | jq --arg n "$1" '.locks[].lock | select(.name == $n)'; }

# check_no_overlap FIRST SECOND: in staging's history (numbered transitions) FIRST
# acquired and released before SECOND acquired, and SECOND released after.
check_no_overlap() {
    local h
    h=$(lock_json staging | jq -c '[.history[] | select(.what == "acquire" or .what == "release")
        | {seq, what, who, at}]')
    jq -e --arg a "$1" --arg b "$2" '
        def seq_of($who; $what): map(select(.who == $who and .what == $what)) | last.seq;
        seq_of($a; "acquire") as $a_in | seq_of($a; "release") as $a_out
        | seq_of($b; "acquire") as $b_in | seq_of($b; "release") as $b_out
        | $a_in != null and $a_out != null and $b_in != null and $b_out != null
          and $a_in < $a_out and $a_out < $b_in and $b_in < $b_out' <<<"$h" >/dev/null ||
        fail "staging history: $1 and $2 not in order without overlap: $h"
}
