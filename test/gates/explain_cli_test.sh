#!/usr/bin/env bash
# Integration test of `envgate explain`: the real binary on fixture F1 prints the verdict
# the spec writes down (its memory remembering each run it lists), memory round-trips
# through a second call (F2 B fails once), and
# bad input exits 2 naming the file and the JSON path. Usage: explain_cli_test.sh ENVGATE FIXTURES
set -euo pipefail
envgate=$1
fx=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$envgate" explain --gate pre-migrations --job "$fx/f1-crashloop-job.json" \
  --pods "$fx/f1-crashloop-pods.json" --now 2025-05-29T07:13:15Z >"$tmp/f1.json"
python3 - "$tmp/f1.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert v["gate"] == "pre-migrations", v
assert (v["phase"], v["state"]) == ("Upgrading", "retrying"), v
assert v["progressing"] == {"status": "True", "reason": "RetryingPreMigrations",
    "message": v["progressing"]["message"]}
assert v["progressing"]["message"].startswith(
    "attempt 2 of 6 failed, 4 left: container migrations exited 1 (Error): PG::ConnectionBad"), v
assert v["counts"] == {"restarts": 2, "restart_limit": 6, "failed_pods": 0, "failed_pod_limit": 7,
                       "attempt": 2, "limit": 6, "left": 4}, v["counts"]
assert v["last_failure"] == {"pod": "gitlab-migrations-3f2a1-pre-x7k2p", "container": "migrations",
    "kind": "restart", "reason": "Error", "exit_code": 1,
    "message": "PG::ConnectionBad: could not connect to server"}, v["last_failure"]
assert v["command"] == "kubectl -n gitlab logs pod/gitlab-migrations-3f2a1-pre-x7k2p -c migrations --previous"
assert v["event"]["type"] == "Warning" and v["event"]["reason"] == "MigrationsRetrying", v["event"]
# The memory remembers each run the verdict lists (what a rerun lists once its pod is gone).
mem_runs = v["memory"]["runs"]
assert [r["key"] for r in mem_runs] == [r["key"] for r in v["runs"]] and mem_runs, v["memory"]
assert mem_runs[-1]["text"].startswith("container migrations exited 1 (Error): PG::ConnectionBad"), mem_runs
assert (mem_runs[-1]["attempt"], mem_runs[-1]["limit"], mem_runs[-1]["counted"]) == (2, 6, True), mem_runs
assert mem_runs[-1]["pod"] == "gitlab-migrations-3f2a1-pre-x7k2p" and mem_runs[-1]["container"] == "migrations", mem_runs
assert v["memory"]["runs_forgotten"] == 0, v["memory"]
json.dump(v["memory"], open(sys.argv[1] + ".memory", "w"))
PY

# The memory of one call feeds the next: F2 A (failing, no event), then F2 B (failed, one event).
"$envgate" explain --gate pre-migrations --job "$fx/f2a-failing-job.json" \
  --pods "$fx/f2a-failing-pods.json" --memory "$tmp/f1.json.memory" >"$tmp/f2a.json"
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); assert v['state']=='failing' and v['event'] is None, v; json.dump(v['memory'], open(sys.argv[2],'w'))" \
  "$tmp/f2a.json" "$tmp/f2a.memory"
"$envgate" explain --gate pre-migrations --job "$fx/f2b-failed-job.json" --memory "$tmp/f2a.memory" >"$tmp/f2b.json"
python3 -c "
import json, sys
v = json.load(open(sys.argv[1]))
assert (v['phase'], v['state']) == ('Failed', 'failed'), v
assert v['progressing']['status'] == 'False' and v['progressing']['reason'] == 'MigrationsJobFailed'
assert v['event']['reason'] == 'MigrationsFailed', v
assert v['command'] == 'kubectl -n gitlab describe job/gitlab-migrations-3f2a1-pre', v
assert v['last_failure']['exit_code'] == 1, v
" "$tmp/f2b.json"

# Bad input: exit 2, the message names the file and the JSON path; nothing on stdout.
printf '{"status":{"conditions":[{"type":"Failed"},{"status":1}]}}' >"$tmp/bad-job.json"
set +e
"$envgate" explain --gate pre-migrations --job "$tmp/bad-job.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
"$envgate" explain --gate no-such-gate --job "$fx/f1-crashloop-job.json" >/dev/null 2>"$tmp/err2"
rc2=$?
"$envgate" explain --gate pre-migrations --job "$tmp/missing.json" >/dev/null 2>"$tmp/err3"
rc3=$?
set -e
[ "$rc" -eq 2 ] || { echo "bad job: exit $rc, want 2"; exit 1; }
grep -qF "bad-job.json: .status.conditions[1].status: expected a string, got number" "$tmp/err" ||
  { echo "bad job: unexpected message: $(cat "$tmp/err")"; exit 1; }
[ ! -s "$tmp/out" ] || { echo "bad job: stdout not empty"; exit 1; }
[ "$rc2" -eq 2 ] || { echo "unknown gate: exit $rc2, want 2"; exit 1; }
grep -qF -- '--gate "no-such-gate": not a gate' "$tmp/err2" || { echo "unknown gate: $(cat "$tmp/err2")"; exit 1; }
[ "$rc3" -eq 2 ] || { echo "missing file: exit $rc3, want 2"; exit 1; }
grep -qF "missing.json: cannot read" "$tmp/err3" || { echo "missing file: $(cat "$tmp/err3")"; exit 1; }
echo "explain_cli_test: ok"
