#!/usr/bin/env python3
"""Issue 23 under load: the runs_e2e.sh scenarios repeated on the real control plane.

One private control plane (test/controlplane/run.sh), a namespace per trial. With
--burners N (default 2) N CPU burners (`sh -c 'while :; do :; done'`) run through all
trials and are killed at the end. Trials of the four scenarios are interleaved and run
--concurrency at a time (default 4):

  parallel_pods    completions 2, parallelism 2, OnFailure, backoffLimit 8; each pod's
                   container fails its first 3 runs (exit 3): 6 retry lines, exit 0
  two_containers   one pod, OnFailure, backoffLimit 8, containers migrations (fails 3
                   runs, exit 3) and seeds (fails 3 runs, exit 4): 6 retry lines, exit 0
  indexed          Indexed, completions 3, parallelism 3, Never, backoffLimitPerIndex 1,
                   maxFailedIndexes 1; indexes 0 and 1 always fail: exit 1, the run past
                   maxFailedIndexes is a "failing" line (counted, no event)
  deleted_mid_run  OnFailure, backoffLimit 3; runs 1-2 crash, the pod is deleted during
                   run 3 (after the "attempt 2 of 3 failed" line), the replacement
                   passes: 3 retry lines, the deletion "pod 1 of 4", exit 0

Manifests and scripts are those of test/e2e/runs_e2e.sh. Per trial, violations by kind:
  dup_line     two retry/failing lines with the same words (after "retrying (R): ")
  dup_run      two lines naming the same run: same pod named first + container + run
               text (index, termination message "run N failed", else "attempt N"/"pod N";
               two lines naming no pod may share it in parallel_pods, one per pod)
  wrong_index  a line names an index other than that of the pod it names (Indexed)
  deletion_count  the deletion's line is not "pod 1 of 4 failed, 3 left" (as runs_e2e.sh
               wants), or there is not exactly one
  not_rising   an "attempt N of"/"pod N of" count that does not rise strictly within
               its kind, on a line that does not say why ("no longer count")
  events       MigrationsRetrying events on the Job != counted failed runs in run.json
               (minus the one the "failing" line of indexed names: it has no event)
  lines_runs   retry lines (+ the failing line) != counted failed runs in run.json
  dup_key      run.json lists a failed run key twice
  runs_truth   run.json's counted runs are not the scenario's: 3 per pod (parallel_pods),
               3 per container of the one pod (two_containers), each failed pod of
               indexes 0 and 1 once (indexed), 3 of the one pod (deleted_mid_run)
  outcome      wrong exit code or a line count other than the scenario's (6/6/-/3)
  error        the trial did not complete (timeout, missing line)
Prints a table for RESULTS.md and, for each violating trial, its lines.

Usage: runs_load.py --envgate PATH --controlplane PATH [--trials 50] [--concurrency 4]
         [--burners 2] [--budget SECONDS] [--scenarios a,b] [--keep]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gate_requests import ControlPlane, create_namespace  # noqa: E402

for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]
os.environ["NO_COLOR"] = "1"

SCENARIOS = ["parallel_pods", "two_containers", "indexed", "deleted_mid_run"]
KINDS = ["dup_line", "dup_run", "wrong_index", "deletion_count", "not_rising", "events", "lines_runs", "dup_key", "runs_truth", "outcome", "error"]
RETRY = re.compile(r"^pre-migrations: retrying \([A-Za-z]+\): (.*)$")
FAILING = re.compile(r"^pre-migrations: failing (.*)$")


def fail_times(counter, times, code):
    return f"""n=$(cat "{counter}" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "{counter}"
echo "run $n of $HOSTNAME"
if [ $n -le {times} ]; then sleep 0.2; echo "run $n failed" > "${{KUBESIM_TERMINATION_LOG:-/dev/termination-log}}" 2>/dev/null; exit {code}; fi
sleep 0.2; echo migrated"""


def script(d, name, body):
    path = os.path.join(d, name + ".sh")
    open(path, "w").write(body + "\n")
    return path


def job_manifest(path, name, policy, limit, spath, extra=""):
    open(path, "w").write(f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  backoffLimit: {limit}
{extra}
  template:
    spec:
      restartPolicy: {policy}
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "{spath}"]
""")


def manifest_for(scenario, d):
    m = os.path.join(d, "job.yaml")
    if scenario == "parallel_pods":
        s = script(d, "par", fail_times(f"{d}/par.$HOSTNAME.count", 3, 3))
        job_manifest(m, "par", "OnFailure", 8, s, "  completions: 2\n  parallelism: 2")
    elif scenario == "two_containers":
        a = script(d, "a", fail_times(f"{d}/a.count", 3, 3))
        b = script(d, "b", fail_times(f"{d}/b.count", 3, 4))
        open(m, "w").write(f"""apiVersion: batch/v1
kind: Job
metadata:
  name: two
spec:
  backoffLimit: 8
  template:
    spec:
      restartPolicy: OnFailure
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "{a}"]
        - name: seeds
          image: registry.example.com/migrations:1.0
          command: ["sh", "{b}"]
""")
    elif scenario == "indexed":
        s = script(d, "idx", 'echo "index $JOB_COMPLETION_INDEX"\n'
                   'if [ "$JOB_COMPLETION_INDEX" != 2 ]; then sleep 0.3; exit 1; fi; sleep 1; echo done')
        job_manifest(m, "idx", "Never", 2147483647, s, "  completionMode: Indexed\n  completions: 3\n"
                     "  parallelism: 3\n  backoffLimitPerIndex: 1\n  maxFailedIndexes: 1")
    else:
        s = script(d, "dmr", f"""n=$(cat '{d}/dmr.count' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{d}/dmr.count'
echo "run $n"
if [ $n -le 2 ]; then sleep 0.3; exit 3; fi
if [ $n -eq 3 ]; then sleep 60; fi
until [ -f '{d}/release' ]; do sleep 0.05; done; echo migrated""")
        job_manifest(m, "dmr", "OnFailure", 3, s)
    return m


class Gate:
    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, cwd=cwd)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.time(), line.rstrip("\n")))
                self.cond.notify_all()

    def wait_line(self, regex, timeout):
        end = time.time() + timeout
        with self.cond:
            while True:
                for _, line in self.lines:
                    if m := re.search(regex, line):
                        return m
                left = end - time.time()
                if left <= 0 or self.proc.poll() is not None:
                    return None
                self.cond.wait(min(left, 0.2))

    def text(self):
        return [line for _, line in self.lines]


def wait_until(pred, timeout):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    return None


def run_key(words):
    """The run a line describes, from its text: the pod it names first (a failing line's
    "Last failure: pod X"), the container, and the run text: the line's index, the
    termination message "run N failed", or else its count "attempt N"/"pod N"."""
    pod = re.search(r"\bpod ([a-z0-9][a-z0-9.-]+-[a-z0-9]{5})\b", words)
    cont = re.search(r"\bcontainer ([a-z0-9-]+)", words)
    run = re.search(r"\brun \d+ failed|^index \d+", words)
    count = re.match(r"^(?:index \d+: )?((?:attempt|pod) \d+) of", words)
    return (pod.group(1) if pod else None, cont.group(1) if cont else None,
            run.group(0) if run else (count.group(1) if count else None))


def wrong_index(words):
    """A line of an Indexed Job that names an index other than its pod's
    (pods are named JOB-INDEX-xxxxx)."""
    pod = re.search(r"\bpod [a-z0-9.-]+-[0-9a-f]{8}-(\d+)-[a-z0-9]{5}\b", words)
    return bool(pod) and any(i != pod.group(1) for i in re.findall(r"\bindex (\d+):", words))


# Ground truth of each scenario's counted failed runs in run.json: (pod index, container)
# -> runs, pods told apart by name.
def truth(scenario, failed_runs):
    counted = [r for r in failed_runs if r.get("counted")]
    by = collections.Counter((r.get("pod"), r.get("container")) for r in counted)
    if scenario == "parallel_pods":
        return sorted(by.values()) == [3, 3]
    if scenario == "two_containers":
        return len({p for p, _ in by}) == 1 and sorted(by.items(), key=lambda x: x[0][1]) and \
            {c: n for (_, c), n in by.items()} == {"migrations": 3, "seeds": 3}
    if scenario == "indexed":  # each failed pod once; two pods of index 0, two of index 1
        idx = collections.Counter(re.sub(r"-[a-z0-9]{5}$", "", p or "")[-1:] for p, _ in by)
        return all(n == 1 for n in by.values()) and idx == {"0": 2, "1": 2}
    # one pod: its 2 crashes (container migrations) + its deletion (the pod's, no container)
    return sum(by.values()) == 3 and len({p for p, _ in by}) == 1


def check(scenario, gate, rc, events, runjson):
    v = collections.Counter()
    words = [m.group(1) for line in gate.text() if (m := RETRY.match(line))]
    failing = [m.group(1) for line in gate.text() if (m := FAILING.match(line))]
    all_words = words + failing
    if len(set(all_words)) != len(all_words):
        v["dup_line"] += 1
    keys = collections.Counter(run_key(w) for w in all_words)
    # Two parallel pods' lines that name no pod may share a key, one per pod.
    allow = {k: (2 if scenario == "parallel_pods" and k[0] is None else 1) for k in keys}
    if any(n > allow[k] for k, n in keys.items()):
        v["dup_run"] += 1
    if any(wrong_index(w) for w in all_words):
        v["wrong_index"] += 1
    dele = [w for w in words if "was deleted" in w]
    if scenario == "deleted_mid_run" and (len(dele) != 1 or not dele[0].startswith("pod 1 of 4 failed, 3 left")):
        v["deletion_count"] += 1
    for kind in ("attempt", "pod"):
        prev = 0
        for w in words:
            if m := re.match(rf"^{kind} (\d+) of ", w):
                n = int(m.group(1))
                if n <= prev and "no longer count" not in w:
                    v["not_rising"] += 1
                prev = n
    step = [s for s in runjson.get("steps", []) if s.get("name") == "pre-migrations"]
    failed_runs = (step[0].get("failed_runs") or []) if step else []
    counted = sum(1 for r in failed_runs if r.get("counted"))
    ended = 1 if scenario == "indexed" else 0
    n_events = sum(1 for e in events if e == "MigrationsRetrying")
    if n_events != counted - ended:
        v["events"] += 1
    if len(words) + ended != counted:
        v["lines_runs"] += 1
    fkeys = [r.get("key") for r in failed_runs]
    if len(set(fkeys)) != len(fkeys):
        v["dup_key"] += 1
    if not truth(scenario, failed_runs):
        v["runs_truth"] += 1
    want = {"parallel_pods": (0, 6), "two_containers": (0, 6), "indexed": (1, None),
            "deleted_mid_run": (0, 3)}[scenario]
    if rc != want[0] or want[1] is not None and len(words) != want[1] or \
            scenario == "indexed" and len(failing) != 1:
        v["outcome"] += 1
    return v, dict(lines=len(words), failing=len(failing), events=n_events, counted=counted)


def gate_events(cp, ns, job):
    code, data = cp.request("GET", f"/api/v1/namespaces/{ns}/events")
    out = []
    for e in json.loads(data).get("items", []):
        io = e.get("involvedObject", {})
        if io.get("kind") == "Job" and io.get("name") == job and \
                "envgate" in (e.get("reportingComponent"), e.get("source", {}).get("component")):
            out.append(e["reason"])
    return out


def live_pod(cp, ns, job):
    code, data = cp.request("GET", f"/api/v1/namespaces/{ns}/pods?labelSelector=job-name%3D{job}")
    for p in json.loads(data).get("items", []):
        if p.get("status", {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"):
            return p["metadata"]["name"]
    return None


def trial(a, cp, scenario, i, work):
    ns = f"{scenario.replace('_', '-')}-{i}"
    create_namespace(cp, ns)
    d = os.path.join(work, ns)
    os.makedirs(d)
    m = manifest_for(scenario, d)
    env = dict(os.environ, KUBECONFIG=cp.kubeconfig, HOME=d)
    t0 = time.time()
    gate = Gate([a.envgate, "gate", "--env", "e1", "--gate", "pre-migrations", "--manifest", m,
                 "--namespace", ns, "--report-dir", os.path.join(d, "rep")], env, d)
    err = None
    job = None
    try:
        mm = gate.wait_line(r"created Job [^/\s]+/([a-z0-9.-]+)", 60)
        if not mm:
            raise RuntimeError("no created Job line")
        job = mm.group(1)
        if scenario == "deleted_mid_run":
            if not wait_until(lambda: open(f"{d}/dmr.count").read().strip() == "3"
                              if os.path.exists(f"{d}/dmr.count") else False, 120):
                raise RuntimeError("no run 3")
            if not gate.wait_line(r"attempt 2 of 3 failed", 60):
                raise RuntimeError("no second retry line")
            pod = wait_until(lambda: live_pod(cp, ns, job), 60)
            if not pod:
                raise RuntimeError("no live pod")
            cp.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod}")
            if not gate.wait_line(rf"^pre-migrations: retrying .*: pod {pod} was deleted", 90):
                raise RuntimeError(f"no deletion line for {pod}")
            open(f"{d}/release", "w").close()
        rc = gate.proc.wait(timeout=300)
    except Exception as e:  # noqa: BLE001
        err = str(e)
        gate.proc.kill()
        rc = gate.proc.wait()
    time.sleep(0.2)
    open(os.path.join(d, "gate.log"), "w").write("\n".join(f"{t:.6f} {l}" for t, l in gate.lines) + "\n")
    dur = time.time() - t0
    try:
        runjson = json.load(open(os.path.join(d, "rep", "run.json")))
    except (OSError, ValueError):
        runjson = {}
    events = gate_events(cp, ns, job) if job else []
    v, counts = check(scenario, gate, rc, events, runjson)
    if err:
        v["error"] += 1
    if not a.keep:
        cp.request("DELETE", f"/api/v1/namespaces/{ns}")
    return dict(scenario=scenario, i=i, ns=ns, rc=rc, dur=dur, v=v, counts=counts, err=err,
                lines=[l for l in gate.text() if l.startswith("pre-migrations")],
                events=events)


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--controlplane", required=True)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--burners", type=int, default=2)
    ap.add_argument("--budget", type=float, default=35 * 60, help="stop starting trials after this many seconds")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    a.envgate = os.path.abspath(a.envgate)
    scen = a.scenarios.split(",")
    work = tempfile.mkdtemp(prefix="runs-load.")
    cp = ControlPlane(os.path.abspath(a.controlplane), os.path.join(work, "cp"))
    burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.burners)]
    loads = []
    stop_sampling = threading.Event()

    def sample():
        while not stop_sampling.wait(15):
            loads.append(float(loadavg()))
    threading.Thread(target=sample, daemon=True).start()
    results = []
    t_start = time.time()
    try:
        order = [(s, i) for i in range(a.trials) for s in scen]
        with concurrent.futures.ThreadPoolExecutor(a.concurrency) as ex:
            pending = set()
            it = iter(order)
            while True:
                while len(pending) < a.concurrency and time.time() - t_start < a.budget:
                    nxt = next(it, None)
                    if nxt is None:
                        break
                    pending.add(ex.submit(trial, a, cp, nxt[0], nxt[1], work))
                if not pending:
                    break
                done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in done:
                    r = f.result()
                    results.append(r)
                    bad = ",".join(f"{k}={n}" for k, n in r["v"].items()) or "ok"
                    print(f"[{time.time() - t_start:6.0f}s load {loadavg()}] {r['scenario']} #{r['i']}: "
                          f"rc {r['rc']} {r['dur']:.1f}s {r['counts']} {bad}", file=sys.stderr, flush=True)
    finally:
        stop_sampling.set()
        for b in burners:
            b.kill()
            b.wait()
        cp.stop()
    wall = time.time() - t_start
    print(f"\n{len(results)} trials in {wall:.0f} s, {a.concurrency} at a time, {a.burners} burners; "
          f"load average (1 min, sampled every 15 s) {min(loads, default=0):.1f}-{max(loads, default=0):.1f}, "
          f"mean {sum(loads) / max(1, len(loads)):.1f}\n")
    print("| scenario | trials | fully right | trial s p50 / max | " + " | ".join(KINDS) + " |")
    print("|---|---|---|---|" + "---|" * len(KINDS))
    for s in scen:
        rs = [r for r in results if r["scenario"] == s]
        if not rs:
            continue
        durs = sorted(r["dur"] for r in rs)
        tot = collections.Counter()
        for r in rs:
            tot.update({k: 1 for k in r["v"]})
        right = sum(1 for r in rs if not r["v"])
        print(f"| {s} | {len(rs)} | {right} | {durs[len(durs) // 2]:.1f} / {durs[-1]:.1f} | "
              + " | ".join(str(tot[k]) for k in KINDS) + " |")
    bad = [r for r in results if r["v"]]
    for r in bad:
        print(f"\n--- {r['scenario']} #{r['i']} ({r['ns']}): rc {r['rc']}, {dict(r['v'])}, "
              f"{r['counts']}, error {r['err']}, events {collections.Counter(r['events'])}")
        for line in r["lines"]:
            print("    " + line)
    if a.keep:
        print(f"kept {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
