#!/usr/bin/env bash
# Runs the envgate components in a real CI runner, gitlab-ci-local 4.65.1 (shell
# executor, no docker): a throw-away project that includes the `generate` and
# `unlock` components from itself, two commits, then
#   1. a push pipeline: the real `envgate generate` writes the child pipeline, the
#      trigger job runs it, and staging's split jobs run in order (lock, diff,
#      gates, deploy, release; not fail);
#   2. a merge-request pipeline: the diff-only child warns that staging is locked
#      and its job ends with the allowed exit code 3;
#   3. the manual unlock job refuses an empty reason and passes one on.
# Other envgate commands are a shim that echoes them (this tests the pipeline
# plumbing, not the lock). Usage: gitlab_ci_local_test.sh ENVGATE_BINARY PROJECT_DIR
set -euo pipefail
envgate_bin=$(realpath "$1")
project=$(realpath "$2")
gcl="$project/scripts/node/node_modules/.bin/gitlab-ci-local"
[ -x "$gcl" ] || { echo "missing $gcl: run scripts/install-deps"; exit 1; }
command -v rsync >/dev/null || { echo "gitlab-ci-local needs rsync: run scripts/install-deps"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/repo"
cat > "$work/bin/envgate" <<SHIM
#!/bin/sh
if [ "\$1" = generate ]; then exec "$envgate_bin" "\$@"; fi
case "\$*" in *"--output json"*) echo '{"name":"staging","state":"held"}'; exit 0;; esac
echo "shim: envgate \$*"
SHIM
chmod +x "$work/bin/envgate"

cd "$work/repo"
git init -q -b main
git remote add origin git@gitlab.example.com:acme/envgate.git
cp -r "$project/ci-templates/templates" templates
mkdir -p jobs envs/staging envs/production
cp "$project/test/fixtures/config/jobs/pre-migrations.yaml" \
   "$project/test/fixtures/config/jobs/post-migrations.yaml" jobs/
cat > envgate.yml <<'YAML'
version: 1
defaults:
  namespace: gitlab
  lock: { store: file, path: .envgate/locks }
environments:
  - name: staging
    paths: [ "envs/staging/**", "envs/common/**" ]
  - name: production
    after: [ staging ]
    paths: [ "envs/production/**", "envs/common/**" ]
gates:
  pre-migrations: { job: jobs/pre-migrations.yaml }
  post-migrations: { job: jobs/post-migrations.yaml }
steps:
  diff: "echo diff of $ENVGATE_ENV"
  deploy: "echo deploy of $ENVGATE_ENV"
YAML
cat > .gitlab-ci.yml <<'YAML'
stages: [plan, deploy]
include:
  - component: $CI_SERVER_FQDN/acme/envgate/generate@$CI_COMMIT_SHA
    inputs:
      generate_stage: plan
      trigger_stage: deploy
      fetch_default_branch: false   # the origin of this test repository is not reachable
  - component: $CI_SERVER_FQDN/acme/envgate/unlock@$CI_COMMIT_SHA
    inputs:
      environment: staging
YAML
commit() { git add -A && git -c user.email=ci@example.com -c user.name=ci commit -qm "$1"; }
echo 1 > envs/staging/app && echo 1 > envs/production/app && commit one
base=$(git rev-parse HEAD)
echo 2 > envs/staging/app && commit two
git update-ref refs/remotes/origin/main HEAD
git remote set-head origin main >/dev/null 2>&1 || true

export PATH="$work/bin:$PATH" GCL_IGNORE_PREDEFINED_VARS=CI_PIPELINE_SOURCE
run() { "$gcl" --no-color "$@" </dev/null > "$work/out.log" 2>&1 || { cat "$work/out.log"; echo "gitlab-ci-local failed"; exit 1; }; }
fail() { cat "$work/out.log"; echo "FAILED: $1"; exit 1; }
expect() { grep -qF -- "$1" "$work/out.log" || fail "missing: $1"; }
absent() { ! grep -qF -- "$1" "$work/out.log" || fail "unexpected: $1"; }
line_of() { grep -nF -- "$1" "$work/out.log" | head -1 | cut -d: -f1; }
in_order() { local a b; a=$(line_of "$1"); b=$(line_of "$2"); [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] || fail "'$1' not before '$2'"; }

run --variable "CI_COMMIT_BEFORE_SHA=$base"
expect "envgate generate: staging: 1 changed path(s), e.g. envs/staging/app"
expect "shim: envgate lock acquire staging --config envgate.yml"
expect "PASS  [envgate-child-all] -> staging:release"
absent "staging:fail "
absent "production:diff"
in_order "shim: envgate lock acquire staging" "gate --env staging --gate pre-migrations"
in_order "gate --env staging --gate pre-migrations" "> deploy of staging"
in_order "> deploy of staging" "gate --env staging --gate post-migrations"
in_order "gate --env staging --gate post-migrations" "shim: envgate lock release staging"
echo "ok: push pipeline ran the generated child"

run --variable CI_PIPELINE_SOURCE=merge_request_event --variable CI_MERGE_REQUEST_IID=7 \
    --variable "CI_MERGE_REQUEST_DIFF_BASE_SHA=$base"
expect "WARNING: environment staging is LOCKED"
expect "> diff of staging"
expect "staging:diff finished in"
grep -F "staging:diff finished in" "$work/out.log" | grep -q "WARN 3" || fail "diff job did not end with the allowed exit 3"
absent "lock acquire"
echo "ok: merge-request pipeline warned without locking"

run envgate-unlock-staging
expect "refusing to unlock staging without a reason"
absent "shim: envgate unlock"
run --variable "ENVGATE_UNLOCK_REASON=fixed-by-hand" envgate-unlock-staging
expect "shim: envgate unlock staging --config envgate.yml --reason fixed-by-hand"
echo "ok: unlock needs a reason"
echo "gitlab-ci-local component test: every check held"
