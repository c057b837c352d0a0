#!/usr/bin/env bash
# The deploy component's after_script, run as GitLab runs it after a cancelled job
# (CI_JOB_STATUS=canceled): usage after_script_cancel_test.sh ENVGATE TEMPLATE. With the
# lock still held by the cancelled job's pipeline (envgate was killed before it could
# settle it), the after_script fails it at once, so the pipeline never waits for the
# lease to run out; so does a job that failed without envgate settling the lock (envgate
# killed, the runner's timeout); a lock envgate already failed keeps its own failure; a
# job that succeeded leaves the lock alone.
set -euo pipefail
ENVGATE=$1 TEMPLATE=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/envgate-after-script.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/envgate.yml" <<EOF
version: 1
defaults:
  namespace: gitlab
  lock: { store: file, path: $T/locks, on_failure: hold, local_unlock: true }
environments:
  - name: gprd
steps:
  deploy: "true"
EOF
# The after_script of the deploy job, its inputs filled in as GitLab would.
python3 - "$TEMPLATE" "$T/envgate.yml" >"$T/after_script.sh" <<'EOF'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
job = next(v for k, v in docs[1].items() if k.startswith("envgate-deploy-"))
for line in job["after_script"]:
    print(line.replace("$[[ inputs.environment ]]", "gprd").replace("$[[ inputs.config ]]", sys.argv[2]))
EOF
export CI=true GITLAB_CI=true CI_PROJECT_PATH=ops/deploy CI_PIPELINE_ID=1234 \
    CI_JOB_URL=https://gitlab.example.com/ops/deploy/-/jobs/98765 PATH="$(dirname "$ENVGATE"):$PATH"
state() { "$ENVGATE" status gprd --config "$T/envgate.yml" --output json |
    jq -r '.locks[] | select(.lock.name == "gprd") | .lock.state'; }
acquire() { "$ENVGATE" lock acquire gprd --config "$T/envgate.yml" --hold-for 10m >/dev/null; }

acquire
CI_JOB_STATUS=success sh -e "$T/after_script.sh"
[[ $(state) == held ]] || fail "after a job that succeeded the lock is $(state), want held"

CI_JOB_STATUS=canceled sh -e "$T/after_script.sh" >"$T/cancel.log" 2>&1 ||
    fail "the after_script failed: $(cat "$T/cancel.log")"
[[ $(state) == failed ]] || fail "after the cancelled job the lock is $(state), want failed"
"$ENVGATE" status gprd --config "$T/envgate.yml" --output json | grep -q "the deploy job ended canceled" ||
    fail "the lock's failure does not say the job was cancelled"

# A job that failed while envgate could not settle the lock (killed): failed at once.
env -u CI -u GITLAB_CI "$ENVGATE" unlock gprd --config "$T/envgate.yml" --reason "test" >/dev/null
acquire
CI_JOB_STATUS=failed sh -e "$T/after_script.sh" >"$T/failed.log" 2>&1 ||
    fail "the after_script failed: $(cat "$T/failed.log")"
[[ $(state) == failed ]] || fail "after a failed job that left the lock held it is $(state), want failed"

# A lock that envgate itself failed (it got SIGTERM and settled) keeps its failure.
env -u CI -u GITLAB_CI "$ENVGATE" unlock gprd --config "$T/envgate.yml" --reason "test" >/dev/null # as a person
acquire
"$ENVGATE" lock fail gprd --config "$T/envgate.yml" --reason MigrationsJobFailed --message "post-migrations failed" >/dev/null
CI_JOB_STATUS=canceled sh -e "$T/after_script.sh" >"$T/cancel2.log" 2>&1 ||
    fail "the after_script failed on a settled lock: $(cat "$T/cancel2.log")"
"$ENVGATE" status gprd --config "$T/envgate.yml" --output json | grep -q "MigrationsJobFailed" ||
    fail "the after_script replaced envgate's own failure"
echo "ok: a cancelled deploy job fails its lock in after_script; settled locks and other jobs are left alone"
