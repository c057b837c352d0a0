#!/usr/bin/env bash
# The gate on a migration that fails at once: usage fast_failure_loop.sh ENVGATE KUBESIM [RUNS].
# One kubesim (time scale 0.01); RUNS gates (default 40), each on a new OnFailure Job with
# backoffLimit 1 whose container fails immediately, so the controller can delete the pod
# before any pass sees it restart. Prints how many failed verdicts named the failure and
# how many said "none observed" (the pod came and went before the gate's first list).
ENVGATE=$1 KUBESIM=$2 RUNS=${3:-40} SCENARIO=fast_failure_loop
source "$(dirname "$0")/../e2e/lib.sh"
# shellcheck disable=SC2119
start_kubesim
NS=$(test_ns e2e)
job_manifest "$T/post.yaml" post OnFailure 1 \
    "$(job_script post "echo boom >\"\$KUBESIM_TERMINATION_LOG\"; echo boom; exit 1")"
named=0 none=0 other=0
for ((i = 1; i <= RUNS; i++)); do
    sed -i "s/name: post[a-z0-9-]*/name: post-$i/" "$T/post.yaml"
    run_envgate 60 "$T/g$i.log" gate --env e1 --gate post-migrations --manifest "$T/post.yaml" \
        --namespace "$NS" --report-dir "$T/rep$i" || true
    if grep -q '^post-migrations: failed .*Last failure: container migrations exited 1' "$T/g$i.log"; then
        named=$((named + 1))
    elif grep -q '^post-migrations: failed .*Last failure: none observed (attempt 1 of 1 failed, 0 left)' "$T/g$i.log"; then
        none=$((none + 1))
    else
        other=$((other + 1))
        grep '^post-migrations: failed' "$T/g$i.log" | head -1
    fi
done
echo "fast-failure runs=$RUNS failure_named=$named none_observed_at_the_limit=$none other=$other"
