#!/usr/bin/env bash
# Integration test of `envgate explain` on the cases where the verdict must follow the
# Job controller (issue 11, defects 2-9): the real binary on saved Jobs and pods
# (test/fixtures/d*.json) prints the verdict the controller's rules give.
# Usage: explain_controller_cases_test.sh ENVGATE FIXTURES
set -euo pipefail
envgate=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
job=gitlab-migrations-9c1d2-pre

# explain NAME JOB PODS NOW [MEMORY]: the verdict JSON in $tmp/NAME.json.
explain() {
    local args=(explain --gate pre-migrations --job "$fx/$2" --now "$4")
    [[ $3 == - ]] || args+=(--pods "$fx/$3")
    [[ -z ${5:-} ]] || args+=(--memory "$5")
    "$envgate" "${args[@]}" >"$tmp/$1.json"
}
# check NAME PYTHON: asserts on the verdict `v` of NAME.
check() {
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); m=v['progressing']['message']
$2" "$tmp/$1.json" || { echo "case $1 failed: $(cat "$tmp/$1.json")"; exit 1; }
}
memory_of() { python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['memory'], open(sys.argv[2],'w'))" "$tmp/$1.json" "$tmp/$1.memory"; }

# Defect 2: an OnFailure pod evicted as a whole is one failure, one count, one event;
# the pass after the controller counted it changes nothing.
explain d2 d2-onfailure-evicted-job.json d2-onfailure-evicted-pods.json 2025-05-29T07:58:20Z
check d2 "
assert v['state'] == 'retrying', v
assert (v['counts']['restarts'], v['counts']['failed_pods']) == (0, 1), v['counts']
assert v['memory']['observed_failures'] == 1, v['memory']
assert v['event']['reason'] == 'MigrationsRetrying', v
assert m.startswith('pod 1 of 7 failed, 6 left: pod $job-q8w2n was evicted by the kubelet'), m"
memory_of d2
explain d2b d2-onfailure-evicted-counted-job.json d2-onfailure-evicted-counted-pods.json \
    2025-05-29T07:58:21Z "$tmp/d2.memory"
check d2b "
assert v['event'] is None and v['memory']['observed_failures'] == 1, v
assert v['counts']['failed_pods'] == 1, v['counts']"

# Defect 3: a Job seen failing (FailureTarget), then deleted (ttlSecondsAfterFinished 0,
# a person): the verdict stays MigrationsJobFailed with the condition and the last failure.
explain d3a f2a-failing-job.json f2a-failing-pods.json 2025-05-29T07:17:00Z "$fx/f2-memory.json"
memory_of d3a
"$envgate" explain --gate pre-migrations --job-deleted --memory "$tmp/d3a.memory" \
    --now 2025-05-29T07:17:05Z >"$tmp/d3.json"
check d3 "
assert (v['phase'], v['state']) == ('Failed', 'failed'), v
assert v['progressing']['reason'] == 'MigrationsJobFailed', v
assert 'BackoffLimitExceeded: Job has reached the specified backoff limit' in m, m
assert 'exited 1' in m and 'creates the Job again' not in m, m
assert v['event']['reason'] == 'MigrationsFailed', v"

# Defect 4: a pod deleted by hand (deletionTimestamp 30 s ahead) failed when it was
# deleted: the replacement's real error 10 s later is the last failure.
explain d4 d4-deleted-by-hand-job.json d4-deleted-by-hand-pods.json 2025-05-29T08:00:12Z
check d4 "
assert v['counts']['failed_pods'] == 2, v['counts']
assert v['last_failure']['pod'] == '$job-t2m9x', v['last_failure']
assert 'PG::DuplicateTable' in m, m"

# Defect 5: a pod matching a FailJob rule fails the Job at once: failing, no retry event,
# the message names the rule and its action.
explain d5 d5-failjob-job.json d5-failjob-pods.json 2025-05-29T07:58:05Z
check d5 "
assert v['state'] == 'failing' and v['event'] is None, v
assert v['progressing']['reason'] == 'RunningPreMigrations', v
assert 'Container migrations for pod gitlab/$job-f5v8c failed with exit code 42 matching FailJob rule at index 1' in m, m
assert 'left' not in m.split('Last failure')[0], m"

# Defect 6: suspended: its own state with the condition's reason, how long, nothing
# counted for the pod the suspension deleted; resumed: running again, no failure.
explain d6 d6-suspended-job.json d6-suspended-pods.json 2025-05-29T08:00:00Z
check d6 "
assert v['state'] == 'suspended' and v['progressing']['reason'] == 'JobSuspended', v
assert 'suspended for 10m' in m, m
assert v['last_failure'] is None and v['event'] is None, v
assert v['memory']['observed_failures'] == 0, v['memory']"
memory_of d6
explain d6r d6-resumed-job.json d6-resumed-pods.json 2025-05-29T08:01:05Z "$tmp/d6.memory"
check d6r "
assert v['state'] == 'running' and v['last_failure'] is None and v['event'] is None, v"

# Defect 7: Indexed Job with backoffLimitPerIndex: counted per index, FailedIndexes.
explain d7 d7-indexed-job.json d7-indexed-pods.json 2025-05-29T07:58:05Z
check d7 "
assert v['state'] == 'retrying', v
assert 'index 3: attempt 2 of 3 failed, 1 left' in m, m
assert '2147483647' not in m, m"
explain d7f d7-indexed-failed-job.json - 2025-05-29T08:05:00Z
check d7f "
assert v['state'] == 'failed', v
assert 'MaxFailedIndexesExceeded' in m and 'failed indexes: 1,3' in m, m
assert '2147483647' not in m, m"

# Defect 8: the first failure before its restart: logs without --previous, naming the
# pod (issue 23: logs job/... reads whichever pod and run kubectl picks).
explain d8 d8-first-failure-job.json d8-first-failure-pods.json 2025-05-29T07:58:01Z
check d8 "
assert v['command'] == 'kubectl -n gitlab logs pod/gitlab-migrations-9c1d2-pre-x1y2z -c migrations', v['command']"

# Defect 9: managedBy another controller: counted from the Job's status, says who.
explain d9 d9-managed-by-job.json d9-managed-by-pods.json 2025-05-29T07:58:05Z
check d9 "
assert v['counts']['failed_pods'] == 2, v['counts']
assert 'kueue.x-k8s.io/multikueue' in m, m
assert 'local pod' not in m, m"
echo "explain_controller_cases_test: ok"
