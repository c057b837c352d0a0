#!/usr/bin/env bash
# Runs scripts/demo against this build tree in a temp dir and checks its outcome:
# exit 0 within a minute, the three runs' exit codes, each run's reports, the lock
# states before and after the unlock, both dashboards, and no process left behind.
# Usage: demo_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d /tmp/envgate-demo-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; failures=$((failures + 1)); fi
}

start=$SECONDS
code=0
ENVGATE_BUILD_DIR=$build ENVGATE_DEMO_SKIP_BUILD=1 ENVGATE_DEMO_DIR=$work/demo \
  "$src/scripts/demo" >"$work/out.txt" 2>&1 </dev/null || code=$?
took=$((SECONDS - start))
cat "$work/out.txt"
echo "---- demo exited $code after ${took}s"
out=$work/out.txt
d=$work/demo
check "the demo exits 0" [ "$code" -eq 0 ]
check "the demo takes under a minute" [ "$took" -lt 60 ]
check "it says it is OK" grep -q '^demo: OK' "$out"
check "run exit codes are 0, 0, 1" \
  [ "$(grep -o '^-> exit [0-9]*' "$out" | tr '\n' ' ')" = "-> exit 0 -> exit 0 -> exit 1 " ]
for r in 1-staging-clean 2-staging-flaky-pre 3-production-broken-post; do
  for f in summary.html summary.md junit.xml run.json envgate.env; do
    check "report $r/$f" [ -s "$d/reports/$r/$f" ]
  done
done
check "run 1 succeeded" grep -qx 'ENVGATE_RESULT=success' "$d/reports/1-staging-clean/envgate.env"
check "run 2 retried pre-migrations twice" \
  grep -q '"attempts": 2' "$d/reports/2-staging-flaky-pre/run.json"
check "run 3 failed in post-migrations" \
  grep -qx 'ENVGATE_FAILED_STEP=post-migrations' "$d/reports/3-production-broken-post/envgate.env"
check "run 3 left production failed" \
  grep -qx 'ENVGATE_LOCK_STATE=failed' "$d/reports/3-production-broken-post/envgate.env"
# junit.xml as GitLab's Tests tab counts it: run 2 is a green pipeline (0 failures) that
# still shows its 2 retries (skipped testcases); run 3's failed gate is 1 failure.
junit_count() {  # junit_count RUN XPATH
  xmllint --xpath "$2" "$d/reports/$1/junit.xml"
}
check "run 2's junit.xml has 0 failures" \
  [ "$(junit_count 2-staging-flaky-pre 'string(/testsuites/@failures)')" = 0 ]
check "run 2's junit.xml shows its 2 retries as skipped testcases" \
  [ "$(junit_count 2-staging-flaky-pre 'count(//testcase[starts-with(@name, "pre-migrations failed run ")]/skipped)')" = 2 ]
check "run 3's junit.xml has exactly 1 failure, the failed gate's" \
  [ "$(junit_count 3-production-broken-post 'count(//failure)')/$(junit_count 3-production-broken-post 'string(/testsuites/@failures)')/$(junit_count 3-production-broken-post 'string(//testcase[failure]/@name)')" = "1/1/post-migrations" ]
check "run 3's failure carries its 3 failed runs" \
  [ "$(junit_count 3-production-broken-post 'string(//failure)' | grep -c '^post-migrations failed run [1-3] (attempt [1-3] of 3)')" = 3 ]
for r in 1-staging-clean 2-staging-flaky-pre 3-production-broken-post; do
  check "run $r: junit.xml's counts are its testcases'" [ \
    "$(junit_count $r 'concat(/testsuites/@tests, " ", /testsuites/@failures, " ", /testsuites/@skipped)')" = \
    "$(junit_count $r 'concat(count(//testcase), " ", count(//testcase[failure]), " ", count(//testcase[skipped]))')" ]
done
check "status showed production FAILED with the unlock command" \
  grep -q 'envgate unlock production' "$d/status-before.txt"
check "status after the unlock shows it FREE" grep -q '^production  FREE' "$d/status-after.txt"
check "the lock history records the unlock and its reason" \
  grep -q 'legacy_id dropped by hand' "$d/.envgate/locks/production.json"
check "the dashboard before the unlock shows the unlock command" \
  grep -q '<code class="unlock">envgate unlock production' "$d/dashboard-locked/index.html"
check "the dashboard after it shows production free" \
  grep -q 'class="lock state-free" id="lock-production"' "$d/dashboard/index.html"
check "the dashboard shows each environment's last run" \
  [ "$(grep -c '<h3>Last run' "$d/dashboard/index.html")" -eq 2 ]
# kubesim's command line names the work dir, its containers run in it.
nothing_left() {
  ! pgrep -f -- "$d/kubesim" >/dev/null || return 1
  for p in /proc/[0-9]*; do
    case "$(readlink "$p/cwd" 2>/dev/null)" in "$work"*) return 1 ;; esac
  done
}
check "no kubesim or container left running" nothing_left
[ "$failures" -eq 0 ] || { echo "demo_test: $failures checks failed"; exit 1; }
echo "demo_test: all checks passed"
