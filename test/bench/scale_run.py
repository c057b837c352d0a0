#!/usr/bin/env python3
"""Scale run on the real control plane: N gates and 4N lock waiters at once, N = 5..50.

A private control plane (test/controlplane/run.sh). For each N (--steps, default
5,10,25,50), at once:
  gates    N `envgate gate` processes on their own Jobs (restartPolicy Never), a third
           each: crash loop (every run fails after 3 s, backoffLimit 3), quiet (sleeps
           past the window; cancelled at its end), succeeding (passes after 5-20 s);
  waiters  20 environments (Lease store), each held by one holder; 4N `envgate lock
           acquire` waiters spread over them, waiting through the window.
Counted over a --window (default 60 s) that starts once every gate printed its first
verdict line and every waiter is in its queue:
  requests/min  all of apiserver_request_total (every client: envgate, and the Job
                controller and node agent running the Jobs), and the same above the idle
                control plane's (measured over one window before the first step);
  cp CPU        user+system CPU seconds of the control-plane process per minute;
  RSS           of each envgate process at the window's end (mean, max), gates and
                waiters apart;
  verdict lat.  succeeding gates: their exit minus the moment their container's last
                command ran (a stamp the script writes), i.e. node agent + Job
                controller (1 s sync batching) + envgate.
Checks that no verdict or lock transition was lost: every crash-loop gate exits 1,
every succeeding gate 0, every quiet one is still running at the end; every waiter is
in its lock's queue at the end. Prints a table for RESULTS.md; exits 1 only when one
of those checks fails.

Usage: scale_run.py --envgate PATH --controlplane PATH [--steps 5,10,25,50] [--window 60]
"""
import argparse
import json
import os
import random
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
ENVS = 20
LOCK_NS = "scale-locks"


def total_requests(cp):
    _, text = cp.request("GET", "/metrics")
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.decode().splitlines()
               if line.startswith("apiserver_request_total{"))


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Proc:
    def __init__(self, argv, env=None, cwd=None):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, cwd=cwd)
        self.lines, self.first, self.ended = [], threading.Event(), None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("pre-migrations: "):
                self.first.set()
        self.proc.wait()
        self.ended = time.time()


def job(path, name, limit, script):
    json.dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
               "spec": {"backoffLimit": limit, "template": {"spec": {
                   "restartPolicy": "Never",
                   "containers": [{"name": "migrations", "image": "registry.example.com/m:1",
                                   "command": ["sh", "-c", script]}]}}}}, open(path, "w"))


def lock_config(path):
    envs = "\n".join(f"  - name: env{i:02d}" for i in range(ENVS))
    open(path, "w").write(f"""version: 1
defaults:
  namespace: gitlab
  lock: {{ store: kubernetes, namespace: {LOCK_NS}, wait_timeout: 1h }}
environments:
{envs}
""")


def queue_lengths(cp):
    out = {}
    code, data = cp.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{LOCK_NS}/leases")
    for lease in json.loads(data)["items"]:
        record = json.loads(lease["metadata"]["annotations"]["envgate.dev/record"])
        out[record["name"]] = len(record["waiters"])
    return out


def step(a, cp, n, work):
    ns = f"scale-{n}"
    create_namespace(cp, ns)
    d = os.path.join(work, ns)
    os.makedirs(d)
    env = dict(os.environ, KUBECONFIG=cp.kubeconfig)
    gates = []
    for i in range(n):
        kind = ("crash", "quiet", "succeed")[i % 3]
        stamp = os.path.join(d, f"g{i}.done")
        script = {"crash": "sleep 3; exit 1", "quiet": f"sleep {a.window * 4}",
                  "succeed": f"sleep {random.uniform(5, 20):.1f}; date +%s.%N > {stamp}"}[kind]
        path = os.path.join(d, f"g{i}.json")
        job(path, f"g{i}", 3, script)
        p = Proc([a.envgate, "gate", "--env", "e1", "--gate", "pre-migrations", "--manifest", path,
                  "--namespace", ns, "--report-dir", os.path.join(d, f"g{i}-report"),
                  "--timeout", "1h"], env=env, cwd=d)
        p.kind, p.stamp = kind, stamp
        gates.append(p)
    cfg = os.path.join(work, "envgate.yml")
    waiters = []
    per_env = {}
    for w in range(4 * n):
        e = f"env{w % ENVS:02d}"
        per_env[e] = per_env.get(e, 0) + 1
        waiters.append(Proc([a.envgate, "lock", "acquire", e, "--config", cfg, "--holder",
                             f"w{n}-{w}"], env=env, cwd=work))
    deadline = time.time() + 300
    while time.time() < deadline:
        q = queue_lengths(cp)
        if all(g.first.is_set() for g in gates) and all(q.get(e, 0) >= c for e, c in per_env.items()):
            break
        time.sleep(0.5)
    cp_pid = int(open(os.path.join(cp.state, "pid")).read())
    r0, c0, t0 = total_requests(cp), cpu_seconds(cp_pid), time.time()
    time.sleep(a.window)
    r1, c1, t1 = total_requests(cp), cpu_seconds(cp_pid), time.time()
    minutes = (t1 - t0) / 60
    rss_g = [x for x in (rss_mib(g.proc.pid) for g in gates if g.ended is None) if x]
    rss_w = [x for x in (rss_mib(w.proc.pid) for w in waiters if w.ended is None) if x]
    q = queue_lengths(cp)
    lost = [f"{e}: {q.get(e, 0)} waiters queued of {c}" for e, c in per_env.items() if q.get(e, 0) != c]
    lost += [f"waiter {i} ended: {w.lines[-1:]}" for i, w in enumerate(waiters) if w.ended]
    for g in gates:
        if g.kind != "quiet":
            try:
                g.proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                pass
        if g.ended is None and g.kind == "quiet":
            g.proc.send_signal(signal.SIGTERM)
    for w in waiters:
        w.proc.send_signal(signal.SIGTERM)
    for p in gates + waiters:
        try:
            p.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            p.proc.kill()
    lat = []
    for i, g in enumerate(gates):
        want = {"crash": 1, "succeed": 0, "quiet": -signal.SIGTERM}[g.kind]
        rc = g.proc.returncode
        if rc != want and not (g.kind == "quiet" and rc == 143):
            lost.append(f"gate g{i} ({g.kind}): exit {rc}: {g.lines[-1:]}")
        if g.kind == "succeed" and os.path.exists(g.stamp) and g.ended:
            lat.append(g.ended - float(open(g.stamp).read()))
    lat.sort()
    pct = lambda p: lat[min(len(lat) - 1, int(round(p / 100 * (len(lat) - 1))))] * 1000 if lat else 0
    rate = (r1 - r0) / minutes
    row = (f"| {n} | {4 * n} | {rate:.0f} | {rate - a.idle_rate:.0f} "
           f"| {(c1 - c0) / minutes:.1f} | {sum(rss_g) / max(len(rss_g), 1):.1f} / {max(rss_g, default=0):.1f} "
           f"| {sum(rss_w) / max(len(rss_w), 1):.1f} / {max(rss_w, default=0):.1f} "
           f"| {pct(50):.0f} / {pct(99):.0f} ({len(lat)}) | {len(lost)} |")
    return row, lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--controlplane", required=True)
    ap.add_argument("--steps", default="5,10,25,50")
    ap.add_argument("--window", type=float, default=60)
    a = ap.parse_args()
    a.envgate = os.path.abspath(a.envgate)
    work = tempfile.mkdtemp(prefix="scale-run-")
    cp = ControlPlane(os.path.abspath(a.controlplane), os.path.join(work, "controlplane"))
    lost_all = []
    try:
        create_namespace(cp, LOCK_NS)
        lock_config(os.path.join(work, "envgate.yml"))
        env = dict(os.environ, KUBECONFIG=cp.kubeconfig)
        for i in range(ENVS):
            subprocess.run([a.envgate, "lock", "acquire", f"env{i:02d}", "--config",
                            os.path.join(work, "envgate.yml"), "--holder", f"holder-{i}"],
                           env=env, check=True, capture_output=True, cwd=work)
        r0 = total_requests(cp)
        time.sleep(a.window)
        a.idle_rate = (total_requests(cp) - r0 - 2) / (a.window / 60)  # less our 2 reads
        print(f"idle control plane: {a.idle_rate:.0f} requests/min")
        print(f"window {a.window:.0f} s per step; gates a third each crash-looping, quiet, "
              f"succeeding; waiters over {ENVS} held locks")
        print("| gates | waiters | API requests/min (all) | above idle | control plane CPU s/min "
              "| gate RSS MiB mean / max | waiter RSS MiB mean / max | verdict latency ms p50 / p99 (n) "
              "| lost |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in [int(x) for x in a.steps.split(",")]:
            row, lost = step(a, cp, n, work)
            print(row, flush=True)
            lost_all += lost
    finally:
        cp.stop()
        shutil.rmtree(work, ignore_errors=True)
    if lost_all:
        print("lost:\n  " + "\n  ".join(lost_all))
        sys.exit(1)


if __name__ == "__main__":
    main()
