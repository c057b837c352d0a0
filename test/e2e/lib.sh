# shellcheck shell=bash
# Shared helpers of the end-to-end tests: a cluster per test (a private kubesim, or with
# ENVGATE_TEST_CLUSTER=controlplane the real control plane of the test run and a
# namespace of its own), the real envgate binary, condition waits with generous
# deadlines (never sleeps for assertions), and checks of the log, the reports and the
# Kubernetes objects (with kubectl and jq).
# Sourced by gate_e2e.sh and run_e2e.sh; expects ENVGATE and KUBESIM to be set.
set -euo pipefail

T=$(mktemp -d "${TMPDIR:-/tmp}/envgate-e2e.XXXXXX")
CLUSTER=${ENVGATE_TEST_CLUSTER:-kubesim}
KUBESIM_PID=
BG_PIDS=()
# With ENVGATE_KEEP_REPORTS=DIR, a scenario that passed leaves its report dirs and its
# file lock store in DIR/<scenario>/ (test/report/screenshots.sh renders them).
[[ -z ${ENVGATE_KEEP_REPORTS:-} ]] || rm -rf "${ENVGATE_KEEP_REPORTS:?}/$SCENARIO"
# keep_reports: once per scenario; a scenario that goes on to change its lock store (it
# runs the printed unlock command) calls it first, so the kept store is the failure's.
KEPT_REPORTS=
keep_reports() {
    [[ -n ${ENVGATE_KEEP_REPORTS:-} && -z $KEPT_REPORTS ]] || return 0
    KEPT_REPORTS=1
    local dest=$ENVGATE_KEEP_REPORTS/$SCENARIO d
    mkdir -p "$dest"
    for d in "$T"/rep*/ "$T"/locks/; do
        [[ ! -d $d ]] || cp -r "$d" "$dest/"
    done
}
cleanup() {
    local rc=$? p
    [[ $rc != 0 ]] || keep_reports
    for p in "${BG_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    if [[ $CLUSTER == controlplane && ${E2E_KEEP:-} != 1 ]]; then
        while read -r p; do
            kubectl delete namespace "$p" --wait=false >/dev/null 2>&1 || true
        done < <(cat "$T/namespaces" 2>/dev/null)
    fi
    if [[ -n $KUBESIM_PID ]]; then
        kill -TERM "$KUBESIM_PID" 2>/dev/null || true
        wait "$KUBESIM_PID" 2>/dev/null || true
    fi
    if [[ ${E2E_KEEP:-} == 1 ]]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
# A clean environment: outside CI, no colours, kubectl's cache in the temp dir.
unset CI CI_JOB_ID CI_JOB_TOKEN CI_SERVER_URL CI_PIPELINE_ID CI_PIPELINE_URL CI_JOB_URL GITLAB_CI GITLAB_USER_LOGIN ENVGATE_SECRET_VARS
export NO_COLOR=1 HOME=$T

fail() {
    echo "FAIL [${SCENARIO:-?}]: $*" >&2
    local f
    for f in "$T"/*.log; do
        [[ -f $f && $f != */kubesim.log ]] || continue
        echo "--- $f" >&2
        tail -40 "$f" >&2
    done
    if [[ $CLUSTER == controlplane ]]; then
        echo "--- control plane log" >&2
        tail -20 "$ENVGATE_CONTROLPLANE_STATE/controlplane.log" >&2 || true
    else
        echo "--- kubesim log" >&2
        tail -20 "$T/kubesim.log" >&2 || true
    fi
    exit 1
}
ok() { echo "ok [${SCENARIO:-?}]: $*"; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND until it succeeds.
wait_for() {
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || fail "timed out after ${secs}s waiting for $what"
        sleep 0.05
    done
}

# start_kubesim [--tls]: a private kubesim; sets KUBECONFIG, KUBESIM_PORT, K (kubectl).
# On the control plane: its kubeconfig (always TLS with a token), nothing started.
start_kubesim() {
    if [[ $CLUSTER == controlplane ]]; then
        local state=${ENVGATE_CONTROLPLANE_STATE:?the control plane tier needs ENVGATE_CONTROLPLANE_STATE}
        [[ -s $state/kubeconfig ]] || fail "no control plane is running ($state/kubeconfig missing)"
        cp "$state/kubeconfig" "$T/"
        export KUBECONFIG=$T/kubeconfig
        K=(kubectl --request-timeout=30s)
        return
    fi
    "$KUBESIM" --port 0 --write-kubeconfig "$T/kubeconfig" --time-scale 0.01 "$@" \
        >"$T/port" 2>"$T/kubesim.log" &
    KUBESIM_PID=$!
    wait_for 30 "kubesim to print its port" test -s "$T/kubeconfig"
    wait_for 30 "kubesim to print its port" test -s "$T/port"
    export KUBESIM_PORT
    KUBESIM_PORT=$(head -1 "$T/port")
    export KUBECONFIG=$T/kubeconfig
    K=(kubectl --request-timeout=30s)
}

# ctl COMMAND...: a node or scheduler action (evict NS/POD [--message M], preempt NS/POD)
# through kubesim's control API or the control plane's node agent.
ctl() {
    if [[ $CLUSTER == controlplane ]]; then
        "$ENVGATE_CONTROLPLANE_BIN" ctl --control "$ENVGATE_CONTROLPLANE_STATE/kubeconfig.control" "$@" >/dev/null
    else
        "$KUBESIM" ctl "$@" >/dev/null
    fi
}

# test_ns NAME: the namespace a scenario uses. kubesim is private to the test and takes
# any name; the control plane is shared by the test run, so the namespace is a fresh
# NAME-<random>, created here (and deleted on exit).
test_ns() {
    if [[ $CLUSTER != controlplane ]]; then
        echo "$1"
        return
    fi
    local ns
    ns=$1-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
    kubectl create namespace "$ns" >/dev/null || fail "cannot create namespace $ns"
    echo "$ns" >>"$T/namespaces" # test_ns runs in $(...): the file outlives it
    echo "$ns"
}

# cluster_secs N: N seconds of the cluster's clock in a manifest (kubesim's tests run
# at time scale 0.01; the control plane's clock is real).
cluster_secs() {
    if [[ $CLUSTER == controlplane ]]; then echo "$1"; else echo $(($1 * 100)); fi
}

# job_script NAME BODY: a container script in the temp dir (run by sh in kubesim).
job_script() {
    printf '%s\n' "$2" >"$T/$1.sh"
    echo "$T/$1.sh"
}

# job_manifest FILE NAME RESTART_POLICY BACKOFF_LIMIT SCRIPT [EXTRA_SPEC_YAML [EXTRA_POD_YAML]]
job_manifest() {
    local file=$1 name=$2 policy=$3 limit=$4 script=$5 extra=${6:-} pod_extra=${7:-}
    cat >"$file" <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
spec:
  backoffLimit: $limit
$extra
  template:
    spec:
      restartPolicy: $policy
$pod_extra
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "$script"]
EOF
}

# count_runs FILE: shell text that counts this run in FILE and leaves the number in $n.
count_runs() {
    echo "n=\$(cat '$1' 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > '$1'"
}

# gate_bg LOG ARGS...: envgate gate in the background; sets GATE_PID.
gate_bg() {
    local log=$1
    shift
    "$ENVGATE" gate "$@" >"$log" 2>&1 &
    GATE_PID=$!
    BG_PIDS+=("$GATE_PID")
}

# wait_exit PID SECONDS: waits for a background envgate; sets RC.
wait_exit() {
    local pid=$1 secs=$2 end=$((SECONDS + $2))
    while kill -0 "$pid" 2>/dev/null; do
        ((SECONDS < end)) || fail "envgate (pid $pid) still running after ${secs}s"
        sleep 0.05
    done
    RC=0
    wait "$pid" || RC=$?
}

# run_envgate SECONDS LOG ARGS...: envgate in the foreground with a deadline; sets RC.
run_envgate() {
    local secs=$1 log=$2
    shift 2
    RC=0
    timeout -s KILL "$secs" "$ENVGATE" "$@" >"$log" 2>&1 || RC=$?
    [[ $RC != 137 ]] || fail "envgate $1 did not finish within ${secs}s"
}

# run_envgate_json SECS OUT LOG ARGS...: envgate ARGS -o json, its stdout in OUT and its
# stderr in LOG; then OUT must be exactly the run.json written to REPORT_DIR (the last
# argument pair --report-dir DIR must be present), with nothing else on stdout.
run_envgate_json() {
    local secs=$1 out=$2 log=$3 dir
    shift 3
    dir=$(sed -n 's/.*--report-dir \([^ ]*\).*/\1/p' <<<"$*")
    RC=0
    timeout -s KILL "$secs" "$ENVGATE" "$@" -o json >"$out" 2>"$log" || RC=$?
    [[ $RC != 137 ]] || fail "envgate $1 did not finish within ${secs}s"
    jq -e 'type == "object" and .schema == "envgate.run/v1"' "$out" >/dev/null ||
        fail "envgate $1 -o json: stdout is not one run document: $(head -c 300 "$out")"
    cmp -s "$out" "$dir/run.json" || fail "envgate $1 -o json: stdout differs from $dir/run.json"
}

expect_rc() { [[ $RC == "$1" ]] || fail "exit code $RC, want $1 ($2)"; }
log_has() { grep -qF -- "$2" "$1" || fail "$1 lacks \"$2\""; }
log_lacks() { ! grep -qF -- "$2" "$1" || fail "$1 has \"$2\""; }
# log_count FILE REGEX: the number of matching lines.
log_count() { grep -cE -- "$2" "$1" || true; }

# gate_events NS JOB: "reason<TAB>message" of envgate's events on the Job.
gate_events() {
    "${K[@]}" get events -n "$1" -o json | jq -r --arg job "$2" '.items[]
        | select(.involvedObject.kind == "Job" and .involvedObject.name == $job)
        | select(.reportingComponent == "envgate" or .source.component == "envgate")
        | [.reason, (.message | gsub("\n"; " "))] | @tsv'
}
# event_summary NS JOB: sorted "count reason" lines of envgate's events on the Job.
event_summary() { gate_events "$1" "$2" | cut -f1 | sort | uniq -c | sed 's/^ *//'; }

# job_of LOG: the Job name a gate created or re-attached to.
job_of() { sed -nE 's/.*(created|re-attached to) Job [^/]+\/([a-z0-9.-]+).*/\2/p' "$1" | head -1; }
jobs_in() { "${K[@]}" get jobs -n "$1" -o json | jq -r '.items[].metadata.name'; }
pods_of() { "${K[@]}" get pods -n "$1" -l "job-name=$2" -o json; }
# live_pod NS JOB: a pod of the Job that is running and not being deleted.
live_pod() {
    pods_of "$1" "$2" | jq -er '[.items[] | select(.status.phase == "Running"
        and .metadata.deletionTimestamp == null)][0].metadata.name'
}

# check_reports DIR ENV RESULT [FAILURE_TYPE]: junit.xml is valid XML with one testcase
# per step under classname envgate.ENV; envgate.env has the result.
check_reports() {
    local dir=$1 env=$2 result=$3 type=${4:-}
    xmllint --noout "$dir/junit.xml" || fail "$dir/junit.xml is not valid XML"
    local classes
    classes=$(xmllint --xpath 'count(//testcase[@classname="envgate.'"$env"'"])' "$dir/junit.xml")
    local all
    all=$(xmllint --xpath 'count(//testcase)' "$dir/junit.xml")
    [[ $classes -ge 1 && $classes == "$all" ]] ||
        fail "junit: $classes of $all testcases have classname envgate.$env"
    grep -qx "ENVGATE_RESULT=$result" "$dir/envgate.env" ||
        fail "envgate.env: want ENVGATE_RESULT=$result, got: $(cat "$dir/envgate.env")"
    if [[ -n $type ]]; then
        [[ $(xmllint --xpath 'count(//testcase/failure[@type="'"$type"'"])' "$dir/junit.xml") == 1 ]] ||
            fail "junit: no failure of type $type"
    fi
}

# normalize_excerpt: what differs between two runs of the same scenario made generic:
# hashes in names, pod suffixes, times, durations, ports, holders, temp paths.
normalize_excerpt() {
    sed -E -e 's/-[0-9a-f]{8}(-[a-z0-9]{5})?\b/-<hash>\1/g' -e 's/<hash>-[a-z0-9]{5}\b/<hash>-<pod>/g' \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g' -e 's/127\.0\.0\.1:[0-9]+/127.0.0.1:<port>/g' \
        -e 's/local:[^ @]+@[A-Za-z0-9._-]+/local:<user>@<host>/g' -e "s|${TMPDIR:-/tmp}/envgate-e2e\.[A-Za-z0-9]+|<tmp>|g" \
        -e 's/\| [0-9]+(ms|s|m[0-9]+s) \|/| <duration> |/g' -e 's/time="[0-9.]+"/time="<s>"/g' \
        -e 's/\(([0-9]+(ms|s)) ago\)/(<age> ago)/g' -e 's/ for [0-9]+(ms|s|m[0-9]+s) \(/ for <duration> (/g' -e 's/recorded as [A-Za-z0-9_-]+:/recorded as <user>:/g'
}

# failure_lines LOG [LINES]: the job log's failure lines (a step's final failure, the lock
# lines) and the commands printed on lines of their own under them; LINES (an ERE) adds
# lines a scenario that does not fail shows on-call (its retries, a pending cause).
failure_lines() {
    awk -v extra="${2:-}" '/^[a-z-]+: (failed \(|[A-Z][A-Za-z]+: )|stays locked|was released|held after a failure/ ||
             (extra != "" && $0 ~ extra) { on = 1; print; next }
         on && /^  +(kubectl|envgate) / { print; next }
         /^[^ ]/ { on = 0 }' "$1"
}

# next_commands LOG [LINES]: the commands those lines tell on-call to run next, each once,
# one a line: those printed on lines of their own, else the last one a message names
# ("Logs: kubectl ...", "Details: ...", "Its events: ...", "Check with: ...", up to the
# sentence's end).
# A command that stops what the gate left running (the timeout's `kubectl delete job/…`)
# is no command to look at the failure with: left out, the scenario that prints it runs
# it itself (runs_e2e.sh timeout_retrying).
next_commands() {
    local lines own
    lines=$(failure_lines "$@")
    own=$(sed -nE 's/^  +((kubectl|envgate) .*)/\1/p' <<<"$lines" | { grep -vE '^kubectl .* delete job/' || true; } | awk '!seen[$0]++')
    if [[ -n $own ]]; then
        echo "$own"
        return
    fi
    { grep -oE '(Logs|Details|Its events|Check with): kubectl [^ ]+( [^ ]+)*' <<<"$lines" || true; } |
        sed -E 's/^[A-Za-z ]+: //; s/\.( .*)?$//' | tail -1
}

# run_next LOG WANT [LINES]: runs every next command the failure printed, as on-call would
# paste it right after the failure (in the test's directory, with its kubeconfig and this
# envgate on PATH). Each must succeed and print something matching WANT (an ERE: the
# failure it is about). Fails when no command was printed.
run_next() {
    local log=$1 want=$2 cmds cmd n=0
    cmds=$(next_commands "$log" "${3:-}")
    [[ -n $cmds ]] || fail "$log names no next command"
    while IFS= read -r cmd; do
        n=$((n + 1))
        (cd "$T" && PATH=$(dirname "$ENVGATE"):$PATH bash -c "$cmd") >"$T/next-$n.out" 2>&1 ||
            fail "the printed next command failed: $cmd: $(cat "$T/next-$n.out")"
        grep -qE -- "$want" "$T/next-$n.out" ||
            fail "the printed next command does not show /$want/: $cmd: $(head -30 "$T/next-$n.out")"
        echo "next command ok: $cmd"
    done <<<"$cmds"
}

# check_failure_golden NAME LOG REPORT_DIR [LINES]: what on-call sees of this failure (the
# job log's failure_lines, envgate's exit code (RC), the failed step's JUnit failure (its
# runs with their kept logs) or else the first retried run's skipped testcase, summary.md's table, commands, the first failed run's kept log
# and the lock; not the history after it, whose passes depend on timing), made generic,
# equals test/golden/failures/NAME.md (ENVGATE_UPDATE_GOLDEN=1 rewrites it);
# scripts/failures-doc publishes them as docs/failures.md. Checked on kubesim (the real
# control plane's timing gives other, equally right, attempt counts), or with
# GOLDEN_ON=controlplane, for what only the control plane shows, there.
check_failure_golden() {
    local name=$1 log=$2 rep=$3 golden out
    [[ $CLUSTER == "${GOLDEN_ON:-kubesim}" ]] || return 0
    golden=$(dirname "${BASH_SOURCE[0]}")/../golden/failures/$name.md
    out=$T/$name.excerpt.md
    {
        printf '#### The job log\n\n```text\n'
        # A line the gate printed again (its message changed in what normalize_excerpt
        # makes generic: a duration) is shown once.
        failure_lines "$log" "${4:-}" | normalize_excerpt | awk '
            function flush() { if (b != "" && !seen[b]++) printf "%s", b; b = "" }
            /^    / { b = b $0 "\n"; next }
            { flush(); b = $0 "\n" }
            END { flush() }'
        printf '```\n\nThe job ends with exit code %s.\n' "$RC"
        printf '\n#### JUnit (the Tests tab)\n\n```xml\n'
        # A failed gate is one failed testcase carrying its runs; a gate that passed after
        # retries has none, and each retried run is a skipped testcase (the first shown).
        if ! xmllint --xpath '//testcase/failure' "$rep/junit.xml" 2>/dev/null; then
            if xmllint --xpath '(//testcase[contains(@name, " failed run ")][skipped])[1]' "$rep/junit.xml" >"$T/run1.xml" 2>/dev/null; then
                printf '<!-- no failed testcase: its first retried run, skipped -->\n'
                cat "$T/run1.xml"
            else
                echo "(no failed testcase)"
            fi
        fi
        printf '\n```\n\n#### summary.md\n\n'
        sed -n '/^| environment/,$p' "$rep/summary.md" | awk '/^### Failed runs/ { runs = 1; print; next }
            runs && /^### / { runs = 0 }
            runs && /^\*\*.*, failed run [0-9]+\*\*/ { n++ }
            !runs || n <= 1 { print }'
    } | normalize_excerpt >"$out"
    if [[ ${ENVGATE_UPDATE_GOLDEN:-} == 1 ]]; then
        mkdir -p "$(dirname "$golden")"
        cp "$out" "$golden"
    fi
    diff -u "$golden" "$out" >&2 || fail "the $name excerpt differs from $golden (ENVGATE_UPDATE_GOLDEN=1 rewrites it)"
}
