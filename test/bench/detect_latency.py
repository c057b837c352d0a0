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

    def __init__(self, argv, log_path):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        self.lines = []
        self.log_path = log_path
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        with open(self.log_path, "w") as log:
            for line in self.proc.stdout:
                t = time.monotonic()
                self.lines.append((t, line.rstrip("\n")))
                log.write(f"{t:.6f} {line}")

    def wait(self, timeout):
        rc = self.proc.wait(timeout)
        self.thread.join(10)
        self.ended = time.monotonic()
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--jobs-watch", type=int, default=16)
    ap.add_argument("--jobs-poll", type=int, default=21)
    ap.add_argument("--jobs-kubectl", type=int, default=50)
    ap.add_argument("--parallel-poll", type=int, default=7)
    ap.add_argument("--parallel-kubectl", type=int, default=5)
    ap.add_argument("--poll-interval", default="5s")
    ap.add_argument("--steady-seconds", type=float, default=60)
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
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
