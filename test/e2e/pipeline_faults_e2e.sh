#!/usr/bin/env bash
# The pipeline fault suite (pipeline_faults.py) against a private kubesim, with the lock
# in STORE (file, or kubernetes: Leases in the test's namespace). Usage:
# pipeline_faults_e2e.sh ENVGATE KUBESIM STORE. ENVGATE_FAULT_TRIALS (default 20) sets how
# many runners are killed, and how many paused, across the jobs of both pipeline styles.
ENVGATE=$1 KUBESIM=$2 STORE=$3
SCENARIO=pipeline-faults-$STORE
source "$(dirname "$0")/lib.sh"
start_kubesim
NS=$(test_ns faults)
# The table also goes to ENVGATE_FAULTS_OUT (the build's artifacts/), for RESULTS.md.
out=${ENVGATE_FAULTS_OUT:-$T/faults.txt}
mkdir -p "$(dirname "$out")"
python3 "$(dirname "$0")/pipeline_faults.py" "$ENVGATE" "$T/work" "$NS" "$STORE" \
    --trials "${ENVGATE_FAULT_TRIALS:-20}" | tee "$out"
[[ ${PIPESTATUS[0]} == 0 ]] || fail "the pipeline fault suite failed ($STORE store)"
ok "pipeline faults: every final lock state as the spec says, no overlapping work ($STORE store)"
