#!/usr/bin/env python3
"""Detection latency of `envgate gate`: kubesim changes a Job/pod status -> envgate prints it.

Starts its own `kubesim --time-scale 0.01` (plain HTTP) and opens two reference watches
(all Jobs, all pods) before anything else; each event gets a time.monotonic() stamp on
receipt. Then, in turn:

  kubectl  kubectl wait --for=condition=complete / --for=condition=failed on OnFailure
           Jobs that fail once then pass, or exceed backoffLimit 1 (one wait per Job).
  watch    envgate gate (normal watch) on crash-looping OnFailure Jobs: each failed
           container run, FailureTarget and the final Complete/Failed are trials.
  poll     the same with every watch request failed (kubesim fault API: 500 on verb
           watch), so envgate falls back to polling every --poll-interval (default 5s);
           container runs last longer than the interval so each failure is its own poll.
  steady   API requests per gate-minute while a gate waits on a quiet Job, watch and poll.

A trial's latency = the time envgate (or kubectl) wrote the line, as read from its stdout
pipe, minus the reference watch's receipt of the first object showing the change:
  "attempt N ... failed"  first pod event where the Job's failed runs reach N (restartCount
                          plus one for a container whose newest run failed, gates.md)
  "failing"               first Job event with condition FailureTarget=True
  "failed"                first Job event with Failed=True (kubectl: same)
  "succeeded"             first Job event with SuccessCriteriaMet or Complete=True
                          (kubectl --for=condition=complete: Complete=True)
Prints one table; exit 1 if a run misbehaves (wrong exit code, missing lines).

Usage: detect_latency.py --envgate PATH --kubesim PATH [--jobs-watch 16] [--jobs-poll 21]
         [--jobs-kubectl 50] [--poll-interval 5s] [--parallel-poll 7] [--parallel-kubectl 5]
         [--steady-seconds 60] [--keep]

With --controlplane PATH instead of --kubesim (issue 23), the same question on the real
control plane (test/controlplane/run.sh starts a private one; a namespace per Job): how
long after a failed run ends does its line come, for restartPolicy Never and OnFailure,
beside `kubectl wait`. Per policy --jobs-cp Jobs (--parallel-cp at a time), backoffLimit
3, each run sleeping 0.3-1.0 s: every other Job fails until its limit (Never: 4 pods, the
4th one's line "failing"; OnFailure: 3 restarts, the 3rd "attempt 3 of 3 failed, 0 left",
then the controller deletes the pod), the others fail 2 runs and then pass. Each run's script writes
`date +%s.%N` to a file just before it exits and "run N failed" as its termination
message. One `envgate gate` per Job, and beside it, started once the Job exists, one
`kubectl wait --for=condition=failed|complete`. References (all CLOCK_REALTIME on one
machine):
  exit       the run's own timestamp, written just before it exits
  pod event  the bench's own pod watch (opened first): the receipt of the first pod
             object that shows the run failed: phase Failed with that termination
             message (Never), the container terminated with it (OnFailure); for the
             passing run phase Succeeded
  line       the receipt of envgate's first retrying/failing/failed line that names
             "run N failed" (its succeeded line for the passing run), or kubectl's
             "condition met" (references: the Job's last run)
Prints the table for RESULTS.md; every failed run's times go to trials.tsv in the work
directory (kept with --keep). Usage: detect_latency.py --envgate PATH --controlplane
PATH [--jobs-cp 24] [--parallel-cp 3] [--policies Never,OnFailure] [--keep]
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import http.client

for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]
os.environ["NO_COLOR"] = "1"

LINE = re.compile(r"^pre-migrations: (running|retrying|failing|failed|succeeded) \(")
ATTEMPT = re.compile(r"attempt (\d+) of \d+ failed")
CREATED = re.compile(r"created Job ([^/\s]+)/(\S+)")


class Sim:
    """A private kubesim and the reference watches on it."""

    watching = 0  # reference watches whose response has started

    def __init__(self, kubesim, workdir):
        self.kubesim, self.workdir = kubesim, workdir
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        log = open(os.path.join(workdir, "kubesim.log"), "w")
        self.proc = subprocess.Popen(
            [kubesim, "--port", "0", "--write-kubeconfig", self.kubeconfig, "--time-scale",
             "0.01"], stdout=subprocess.PIPE, stderr=log, text=True)
        self.port = int(self.proc.stdout.readline())
        self.lock = threading.Lock()
        # Every reference event, stamped: to check an outlier against the gate's log.
        self.trace = open(os.path.join(workdir, "reference.log"), "w", buffering=1)
        self.jobs = {}  # job name -> [(t, object)]
        self.pods = {}  # job name -> [(t, object)]
        for path, store in (("/apis/batch/v1/jobs", self.jobs), ("/api/v1/pods", self.pods)):
            threading.Thread(target=self._watch, args=(path, store), daemon=True).start()
        self.wait_for(lambda: self.watching == 2, 10, "the reference watches")

    def _watch(self, path, store):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=7200)
        conn.request("GET", path + "?watch=true&timeoutSeconds=7200")
        resp = conn.getresponse()
        with self.lock:
            self.watching += 1
        while True:
            line = resp.readline()
            t = time.monotonic()
            if not line:
                return
            event = json.loads(line)
            obj = event["object"]
            meta = obj.get("metadata", {})
            if store is self.jobs:
                key = meta.get("name")
            else:
                key = meta.get("labels", {}).get("job-name")
            if key:
                with self.lock:
                    store.setdefault(key, []).append((t, obj))
                    conds = [c["type"] for c in obj.get("status", {}).get("conditions", []) or []
                             if c.get("status") == "True"]
                    self.trace.write(f"{t:.6f} {event['type']} {path.rsplit('/', 1)[1]} {key} "
                                     f"{meta.get('name')} {obj.get('status', {}).get('phase', '')} "
                                     f"failed_runs={failed_runs(obj)} {','.join(conds)}\n")

    def wait_for(self, pred, secs, what):
        end = time.monotonic() + secs
        while not pred():
            if time.monotonic() > end:
                sys.exit(f"detect_latency: timed out waiting for {what}")
            time.sleep(0.01)

    def ctl(self, *args):
        out = subprocess.run([self.kubesim, "ctl", "--kubeconfig", self.kubeconfig, *args],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out) if out.strip() else {}

    def post(self, path, body):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            sys.exit(f"detect_latency: POST {path}: {resp.status} {data[:300]!r}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)

    # --- reference times -------------------------------------------------------------
    def first_job(self, name, pred):
        with self.lock:
            events = list(self.jobs.get(name, []))
        return next((t for t, obj in events if pred(obj)), None)

    def failure_times(self, name):
        """{N: first time the Job's pods show N failed runs}."""
        with self.lock:
            events = list(self.pods.get(name, []))
        counts, seen = {}, {}
        for t, pod in events:
            counts[pod["metadata"]["uid"]] = failed_runs(pod)
            total = sum(counts.values())
            for n in range(1, total + 1):
                seen.setdefault(n, t)
        return seen


def failed_runs(pod):
    n = 0
    for cs in pod.get("status", {}).get("containerStatuses", []) or []:
        n += cs.get("restartCount", 0)
        state, last = cs.get("state", {}), cs.get("lastState", {})
        if state.get("terminated", {}).get("exitCode", 0) != 0:
            n += 1
        elif "waiting" in state and last.get("terminated", {}).get("exitCode", 0) != 0:
            n += 1
    return n


def condition(kind):
    def pred(job):
        return any(c.get("type") in kind and c.get("status") == "True"
                   for c in job.get("status", {}).get("conditions", []) or [])
    return pred


def job_manifest(name, script, backoff_limit):
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": backoff_limit, "template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "migrations", "image": "registry.example.com/m:1",
                            "command": ["sh", script]}]}}}}


def crash_script(workdir, name, runs, fails):
    """Run i sleeps runs[i] s; runs 1..fails exit 1, the next one passes."""
    path = os.path.join(workdir, name + ".sh")
    counter = os.path.join(workdir, name + ".count")
    cases = "\n".join(f"  {i + 1}) sleep {d:.2f} ;;" for i, d in enumerate(runs))
    with open(path, "w") as f:
        f.write(f"""n=$(cat '{counter}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{counter}'
case $n in
{cases}
  *) sleep 0.5 ;;
esac
if [ $n -le {fails} ]; then echo "run $n failed" > "$KUBESIM_TERMINATION_LOG"; exit 1; fi
echo done
""")
    return path


class Lines:
    """A child process whose stdout lines are stamped on receipt."""

    def __init__(self, argv, log_path, env=None, clock=time.monotonic):
        self.clock = clock
        self.started = clock()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1, env=env)
        self.lines = []
        self.log_path = log_path
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.log_path, "w") as log:
            for line in self.proc.stdout:
                t = self.clock()
                self.lines.append((t, line.rstrip("\n")))
                log.write(f"{t:.6f} {line}")

    def wait(self, timeout):
        rc = self.proc.wait(timeout)
        self.thread.join(10)
        self.ended = self.clock()
        return rc


def gate_trials(sim, gate, kind):
    """(label, latency s) for every verdict line of a finished gate."""
    name = next((m.group(2) for _, l in gate.lines if (m := CREATED.search(l))), None)
    if not name:
        raise RuntimeError("no 'created Job' line:\n" + "\n".join(l for _, l in gate.lines))
    fails = sim.failure_times(name)
    out, said = [], set()
    for t, line in gate.lines:
        m = LINE.match(line)
        if not m or m.group(1) == "running":
            continue
        state = m.group(1)
        if state == "retrying":
            a = ATTEMPT.search(line)
            if not a or int(a.group(1)) in said:
                continue
            n = int(a.group(1))
            said.add(n)
            ref, label = fails.get(n), "retry"
        elif state == "failing":
            ref, label = sim.first_job(name, condition({"FailureTarget"})), "failing"
        elif state == "failed":
            ref, label = sim.first_job(name, condition({"Failed"})), "failed"
        else:
            ref = sim.first_job(name, condition({"SuccessCriteriaMet", "Complete"}))
            label = "succeeded"
        if ref is None:
            raise RuntimeError(f"{kind}: no reference event for: {line}")
        out.append((label, t - ref))
    return out


def run_gates(sim, args, workdir, ns, jobs, parallel, runs_range, kind):
    """Runs crash-looping gates (`parallel` at a time); returns trials and gate seconds."""
    rng = random.Random(f"{kind}-seed")
    specs = []
    for i in range(jobs):
        fails_forever = i % 3 == 2  # every third Job exceeds its backoffLimit of 3
        fails = 99 if fails_forever else 1 + i % 3
        runs = [rng.uniform(*runs_range) for _ in range(6)]
        name = f"{kind}-{i:02d}"
        script = crash_script(workdir, name, runs, fails)
        path = os.path.join(workdir, name + ".json")
        with open(path, "w") as f:
            json.dump(job_manifest(name, script, 3), f)
        specs.append((name, path, 1 if fails_forever else 0))
    trials, gate_seconds, pending, running = [], 0.0, list(specs), []
    while pending or running:
        while pending and len(running) < parallel:
            name, path, want = pending.pop(0)
            argv = [args.envgate, "gate", "--env", "bench", "--gate", "pre-migrations",
                    "--manifest", path, "--namespace", ns, "--kubeconfig", sim.kubeconfig,
                    "--report-dir", os.path.join(workdir, "rep-" + name), "--timeout", "10m",
                    "--poll-interval", args.poll_interval]
            running.append((Lines(argv, os.path.join(workdir, name + ".log")), want, name))
        time.sleep(0.05)
        for entry in list(running):
            gate, want, name = entry
            if gate.proc.poll() is None:
                continue
            running.remove(entry)
            rc = gate.wait(10)
            if rc != want:
                raise RuntimeError(f"{name}: exit {rc}, want {want}: see {gate.log_path}")
            gate_seconds += gate.ended - gate.started
            trials += gate_trials(sim, gate, kind)
    return trials, gate_seconds


def run_kubectl(sim, args, workdir, ns):
    """One `kubectl wait` per Job, `args.parallel_kubectl` Jobs at a time."""
    trials = []
    for first in range(0, args.jobs_kubectl, args.parallel_kubectl):
        waits = []
        for i in range(first, min(first + args.parallel_kubectl, args.jobs_kubectl)):
            fail = i % 2 == 1
            name = f"kubectl-{i:02d}"
            script = crash_script(workdir, name, [1.0, 0.6, 0.6], 99 if fail else 1)
            sim.post(f"/apis/batch/v1/namespaces/{ns}/jobs", job_manifest(name, script, 2))
            cond = "failed" if fail else "complete"
            waits.append((name, fail, cond, Lines(
                ["kubectl", "--kubeconfig", sim.kubeconfig, "wait", "-n", ns,
                 f"--for=condition={cond}", f"job/{name}", "--timeout=60s"],
                os.path.join(workdir, name + ".log"))))
        for name, fail, cond, wait in waits:
            if wait.wait(70) != 0:
                raise RuntimeError(f"kubectl wait {name} failed: see {wait.log_path}")
            t = next((t for t, l in wait.lines if "condition met" in l), None)
            ref = sim.first_job(name, condition({"Failed" if fail else "Complete"}))
            if t is None or ref is None:
                raise RuntimeError(f"{name}: no 'condition met' line or no reference event")
            if ref < wait.started:
                raise RuntimeError(f"{name}: the condition came before kubectl wait started")
            trials.append(("kubectl " + cond, t - ref))
    return trials


def counted(sim):
    c = sim.ctl("counters")
    return c.get("total", 0), c.get("requests", {})


def steady(sim, args, workdir, ns, kind):
    """Requests during args.steady_seconds of a gate waiting on a quiet Job, per minute."""
    name = f"steady-{kind}"
    script = crash_script(workdir, name, [args.steady_seconds + 60], 0)
    path = os.path.join(workdir, name + ".json")
    with open(path, "w") as f:
        json.dump(job_manifest(name, script, 3), f)
    gate = Lines([args.envgate, "gate", "--env", "bench", "--gate", "pre-migrations",
                  "--manifest", path, "--namespace", ns, "--kubeconfig", sim.kubeconfig,
                  "--report-dir", os.path.join(workdir, "rep-" + name), "--poll-interval",
                  args.poll_interval], os.path.join(workdir, name + ".log"))
    sim.wait_for(lambda: any("running (" in l for _, l in gate.lines), 30, "a running gate")
    # Past the switch to polling (3 failed watches, 1 s + 2 s back-off) and its first poll.
    time.sleep(15)
    sim.ctl("counters", "--reset")
    time.sleep(args.steady_seconds)
    total, requests = counted(sim)
    gate.proc.terminate()
    gate.wait(30)
    return total * 60.0 / args.steady_seconds, requests


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def row(label, values):
    ms = [x * 1000 for x in values]
    return (f"| {label} | {len(ms)} | {pct(ms, 50):.0f} | {pct(ms, 99):.0f} | "
            f"{max(ms):.0f} | {min(ms):.0f} |")


# --- the real control plane (issue 23) ----------------------------------------------
RUN_FAILED = re.compile(r"\brun (\d+) failed\b")
CP_LINE = re.compile(r"^pre-migrations: (retrying|failing|failed|succeeded) \(")


class CpReference:
    """The bench's own pod watch on the control plane: per namespace, the receipt time
    (time.time()) of the first pod object showing each run failed or the Job's pod
    succeeded."""

    def __init__(self, cp):
        self.cp, self.lock = cp, threading.Lock()
        self.failed = {}      # ns -> {run: t}: phase Failed (Never) with that message
        self.terminated = {}  # ns -> {run: t}: a container terminated with that message
        self.succeeded = {}   # ns -> t: phase Succeeded
        self.started = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()
        if not self.started.wait(30):
            sys.exit("detect_latency: the reference pod watch did not start")

    def _watch(self):
        conn = http.client.HTTPSConnection("127.0.0.1", self.cp.port, context=self.cp.ctx,
                                           timeout=7200)
        conn.request("GET", "/api/v1/pods?watch=true&timeoutSeconds=7200",
                     headers={"Authorization": f"Bearer {self.cp.token}"})
        resp = conn.getresponse()
        self.started.set()
        while True:
            line = resp.readline()
            t = time.time()
            if not line:
                return
            obj = json.loads(line).get("object", {})
            ns = obj.get("metadata", {}).get("namespace", "")
            status = obj.get("status", {}) or {}
            with self.lock:
                for cs in status.get("containerStatuses", []) or []:
                    for which in ("state", "lastState"):
                        term = (cs.get(which) or {}).get("terminated") or {}
                        if m := RUN_FAILED.search(term.get("message", "")):
                            n = int(m.group(1))
                            self.terminated.setdefault(ns, {}).setdefault(n, t)
                            if which == "state" and status.get("phase") == "Failed":
                                self.failed.setdefault(ns, {}).setdefault(n, t)
                if status.get("phase") == "Succeeded":
                    self.succeeded.setdefault(ns, t)

    def pod_event(self, ns, policy, run):
        """The pod event of failed run `run` (None: the passing run)."""
        with self.lock:
            if run is None:
                return self.succeeded.get(ns)
            table = self.failed if policy == "Never" else self.terminated
            return table.get(ns, {}).get(run)


def cp_script(d, fails, runs):
    """Run n sleeps runs[n-1] s; runs 1..fails exit 1, the next one passes. Each writes
    the time just before it exits to d/exit.N."""
    cases = "\n".join(f"  {i + 1}) sleep {x:.2f} ;;" for i, x in enumerate(runs))
    path = os.path.join(d, "run.sh")
    with open(path, "w") as f:
        f.write(f"""n=$(cat '{d}/count' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{d}/count'
case $n in
{cases}
  *) sleep 0.5 ;;
esac
if [ $n -le {fails} ]; then
  echo "run $n failed" > "${{KUBESIM_TERMINATION_LOG:-/dev/termination-log}}"
  date +%s.%N > '{d}/exit.'$n; exit 1
fi
date +%s.%N > '{d}/exit.'$n; echo migrated
""")
    return path


def cp_job(cp, ref, args, work, kubectl, policy, i, rng):
    """One Job on the control plane: its trials [(who, what, exit→line s, event→line s)]."""
    from gate_requests import create_namespace  # noqa: E402 (the cp mode only)
    ns = f"lat-{policy.lower()}-{i}"
    create_namespace(cp, ns)
    d = os.path.join(work, ns)
    os.makedirs(d)
    passes = i % 2 == 0
    limit = 3
    # The failed runs that get a line: a passing Job's 2; a failing Never Job's 4 pods
    # (the 4th is past the pod limit: its line says failing); a failing OnFailure Job's
    # 3 restarts (the 3rd reaches the restart limit), after which the controller deletes
    # the pod, whatever the run after them does.
    fails = 2 if passes else (limit + 1 if policy == "Never" else 99)
    named = 2 if passes else (limit + 1 if policy == "Never" else limit)
    script = cp_script(d, fails, [rng.uniform(0.3, 1.0) for _ in range(named + 1)])
    manifest = os.path.join(d, "job.json")
    with open(manifest, "w") as f:
        json.dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "lat"},
                   "spec": {"backoffLimit": limit, "template": {"spec": {
                       "restartPolicy": policy,
                       "containers": [{"name": "migrations", "image": "registry.example.com/m:1",
                                       "command": ["sh", script]}]}}}}, f)
    env = dict(os.environ, KUBECONFIG=cp.kubeconfig, HOME=d)
    gate = Lines([args.envgate, "gate", "--env", "e1", "--gate", "pre-migrations", "--manifest",
                  manifest, "--namespace", ns, "--report-dir", os.path.join(d, "rep"),
                  "--timeout", "5m"], os.path.join(d, "gate.log"), env=env, clock=time.time)
    end = time.time() + 60
    job = None
    while job is None and time.time() < end and gate.proc.poll() is None:
        job = next((m.group(2) for _, l in list(gate.lines) if (m := CREATED.search(l))), None)
        time.sleep(0.01)
    if job is None:
        raise RuntimeError(f"{ns}: no 'created Job' line: see {gate.log_path}")
    cond = "complete" if passes else "failed"
    wait = Lines([kubectl, "wait", "-n", ns, f"--for=condition={cond}", f"job/{job}",
                  "--timeout=120s"], os.path.join(d, "kubectl.log"), env=env, clock=time.time)
    rc, wrc = gate.wait(330), wait.wait(150)
    if rc != (0 if passes else 1) or wrc != 0:
        raise RuntimeError(f"{ns}: envgate exit {rc}, kubectl wait exit {wrc}: see {d}")

    def exit_time(n):
        return float(open(os.path.join(d, f"exit.{n}")).read())

    def first_line(pred):
        return next((t for t, l in gate.lines if (m := CP_LINE.match(l)) and pred(m.group(1), l)),
                    None)

    trials = []
    for n in range(1, named + 1):
        line = next(((t, m.group(1)) for t, l in gate.lines if (m := CP_LINE.match(l)) and
                     m.group(1) != "succeeded" and
                     any(int(x) == n for x in RUN_FAILED.findall(l))), None)
        ev = ref.pod_event(ns, policy, n)
        if line is None or ev is None:
            raise RuntimeError(f"{ns}: no line or no pod event for run {n}: see {d}")
        t, state = line
        trials.append(("envgate", "retry" if state == "retrying" else "last run (failing)",
                       t - exit_time(n), t - ev))
        with open(os.path.join(work, "trials.tsv"), "a") as f:
            f.write(f"{ns}\t{n}\t{exit_time(n):.6f}\t{ev:.6f}\t{t:.6f}\t"
                    f"{(t - ev) * 1000:.0f}\n")
    last_exit = exit_time(named + 1 if passes else named)
    last_ev = ref.pod_event(ns, policy, None if passes else named)
    if passes:
        t = first_line(lambda state, l: state == "succeeded")
        if t is None or last_ev is None:
            raise RuntimeError(f"{ns}: no succeeded line or pod event: see {d}")
        trials.append(("envgate", "succeeded", t - last_exit, t - last_ev))
    t = next((t for t, l in wait.lines if "condition met" in l), None)
    if t is None:
        raise RuntimeError(f"{ns}: kubectl wait printed no 'condition met': see {d}")
    trials.append(("kubectl", f"--for=condition={cond}", t - last_exit, t - last_ev))
    if not args.keep:
        cp.request("DELETE", f"/api/v1/namespaces/{ns}")
    return trials


def cp_main(args):
    import concurrent.futures
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gate_requests import ControlPlane  # noqa: E402 (the cp mode only)
    args.envgate = os.path.abspath(args.envgate)
    here = os.path.dirname(os.path.abspath(args.controlplane))
    kubectl = os.path.join(here, "bin", "kubectl")
    kubectl = kubectl if os.access(kubectl, os.X_OK) else shutil.which("kubectl")
    work = tempfile.mkdtemp(prefix="detect-latency-cp.")
    cp = ControlPlane(os.path.abspath(args.controlplane), os.path.join(work, "cp"))
    loads, stop = [], threading.Event()

    def sample():
        while True:
            loads.append(float(open("/proc/loadavg").read().split()[0]))
            if stop.wait(10):
                return
    threading.Thread(target=sample, daemon=True).start()
    trials, errors = {}, []
    t0 = time.time()
    try:
        ref = CpReference(cp)
        for policy in args.policies.split(","):
            rng = random.Random(f"cp-{policy}")
            seeds = [random.Random(rng.random()) for _ in range(args.jobs_cp)]
            with concurrent.futures.ThreadPoolExecutor(args.parallel_cp) as ex:
                futures = [ex.submit(cp_job, cp, ref, args, work, kubectl, policy, i, seeds[i])
                           for i in range(args.jobs_cp)]
                trials[policy] = []
                for f in futures:
                    try:
                        trials[policy] += f.result()
                    except RuntimeError as e:
                        errors.append(str(e))
    finally:
        stop.set()
        cp.stop()
    wall = time.time() - t0
    print(f"{args.jobs_cp} Jobs per policy, {args.parallel_cp} at a time, {wall:.0f} s; "
          f"load average (1 min, every 10 s) {min(loads):.1f}-{max(loads):.1f}, "
          f"mean {sum(loads) / len(loads):.1f}\n")
    print("| restartPolicy | line | n | exit → line p50 / p99 ms | pod event → line p50 / p99 ms "
          "| max ms (pod event) |")
    print("|---|---|---|---|---|---|")
    for policy, ts in trials.items():
        groups = [("envgate: every failed run", lambda w, k: w == "envgate" and k != "succeeded")]
        groups += [(f"envgate: {k}", lambda w, k, kk=k: w == "envgate" and k == kk)
                   for k in ("retry", "last run (failing)", "succeeded")]
        groups += [(f"kubectl wait {k} (last run)", lambda w, k, kk=k: w == "kubectl" and k == kk)
                   for k in ("--for=condition=failed", "--for=condition=complete")]
        for label, pred in groups:
            xs = [(a * 1000, b * 1000) for w, k, a, b in ts if pred(w, k)]
            if not xs:
                continue
            ex_, ev_ = [a for a, _ in xs], [b for _, b in xs]
            print(f"| {policy} | {label} | {len(xs)} | {pct(ex_, 50):.0f} / {pct(ex_, 99):.0f} | "
                  f"{pct(ev_, 50):.0f} / {pct(ev_, 99):.0f} | {max(ev_):.0f} |")
    for e in errors:
        print("error:", e)
    if args.keep or errors:
        print("kept", work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim")
    ap.add_argument("--controlplane", help="the real control plane instead of kubesim")
    ap.add_argument("--jobs-cp", type=int, default=24, help="Jobs per restart policy")
    ap.add_argument("--parallel-cp", type=int, default=3)
    ap.add_argument("--policies", default="Never,OnFailure")
    ap.add_argument("--jobs-watch", type=int, default=16)
    ap.add_argument("--jobs-poll", type=int, default=21)
    ap.add_argument("--jobs-kubectl", type=int, default=50)
    ap.add_argument("--parallel-poll", type=int, default=7)
    ap.add_argument("--parallel-kubectl", type=int, default=5)
    ap.add_argument("--poll-interval", default="5s")
    ap.add_argument("--steady-seconds", type=float, default=60)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if args.controlplane:
        sys.exit(cp_main(args))
    if not args.kubesim:
        ap.error("--kubesim or --controlplane is required")
    poll_s = float(args.poll_interval.rstrip("s"))
    workdir = tempfile.mkdtemp(prefix="detect-latency.")
    os.environ["HOME"] = workdir
    sim = Sim(args.kubesim, workdir)
    try:
        for ns in ("kubectl", "watch", "poll"):
            sim.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                            "metadata": {"name": ns}})
        results = {"kubectl": run_kubectl(sim, args, workdir, "kubectl")}
        sim.ctl("counters", "--reset")
        results["watch"], watch_secs = run_gates(sim, args, workdir, "watch", args.jobs_watch,
                                                 1, (0.5, 1.2), "watch")
        watch_total, watch_all = counted(sim)
        watch_steady, watch_req = steady(sim, args, workdir, "watch", "watch")
        sim.ctl("fail", "--code", "500", "--verb", "watch", "--resource", "*", "--count", "-1")
        sim.ctl("counters", "--reset")
        results["poll"], poll_secs = run_gates(sim, args, workdir, "poll", args.jobs_poll,
                                               args.parallel_poll, (poll_s + 1, poll_s + 3),
                                               "poll")
        poll_total, poll_all = counted(sim)
        poll_steady, poll_req = steady(sim, args, workdir, "poll", "poll")
    finally:
        sim.stop()
    print("| trials | n | p50 ms | p99 ms | max ms | min ms |")
    print("|---|---|---|---|---|---|")
    for mode in ("watch", "poll"):
        t = results[mode]
        print(row(f"envgate {mode}: all", [x for _, x in t]))
        for label in ("retry", "failing", "failed", "succeeded"):
            xs = [x for lab, x in t if lab == label]
            if xs:
                print(row(f"envgate {mode}: {label}", xs))
    for cond in ("complete", "failed"):
        print(row(f"kubectl wait --for=condition={cond}",
                  [x for lab, x in results["kubectl"] if lab == "kubectl " + cond]))
    print()
    print("| API requests | watch | poll (" + args.poll_interval + ") |")
    print("|---|---|---|")
    print(f"| crash-loop gates: per gate-minute (all requests / gate-minutes) | "
          f"{watch_total * 60 / watch_secs:.1f} ({watch_total} in {watch_secs:.0f} s) | "
          f"{poll_total * 60 / poll_secs:.1f} ({poll_total} in {poll_secs:.0f} s) |")
    print(f"| crash-loop gates: per gate | {watch_total / args.jobs_watch:.1f} | "
          f"{poll_total / args.jobs_poll:.1f} |")
    print(f"| one gate waiting on a quiet Job: per minute ({args.steady_seconds:.0f} s) | "
          f"{watch_steady:.1f} | "
          f"{poll_steady:.1f} |")
    print(f"\ncrash-loop watch requests: {json.dumps(watch_all, sort_keys=True)}")
    print(f"crash-loop poll requests: {json.dumps(poll_all, sort_keys=True)}")
    print(f"steady watch requests: {json.dumps(watch_req)}")
    print(f"steady poll requests: {json.dumps(poll_req)}")
    if args.keep:
        print("kept", workdir)
    else:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
