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
  Lease req.    apiserver_request_total of Leases over the window per waiter-minute
                (only the waiters touch Leases during it: the holders have exited).
Checks that no verdict or lock transition was lost: every crash-loop gate exits 1,
every succeeding gate 0, every quiet one is still running at the end; every waiter is
in its lock's queue at the end, at the place it had at the window's start (its number;
in the previous format, its `since`). Then the queues drain: each holder is released,
and each waiter, once it holds the lock, is released in turn; the order in which the
waiters of a lock got it must be the order of their places (FIFO).
Prints a table for RESULTS.md; exits 1 only when one of those checks fails.

With --baseline PATH each step runs first with that envgate (the previous queue
format, in a lock namespace of its own), then with --envgate, on the same control
plane. --burners N keeps N CPU burners (`yes`) running through every step.

Usage: scale_run.py --envgate PATH --controlplane PATH [--baseline PATH] [--burners N]
         [--steps 5,10,25,50] [--window 60]
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


def lease_requests(cp):
    _, text = cp.request("GET", "/metrics")
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in text.decode().splitlines()
               if line.startswith("apiserver_request_total{") and 'resource="leases"' in line)


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


def lock_config(path, ns):
    envs = "\n".join(f"  - name: env{i:02d}" for i in range(ENVS))
    open(path, "w").write(f"""version: 1
defaults:
  namespace: gitlab
  lock: {{ store: kubernetes, namespace: {ns}, wait_timeout: 1h }}
environments:
{envs}
""")


def queues(cp, ns):
    """lock -> {waiter id: its place}: a waiter Lease's number, or in the previous format
    the `since` of its entry in the lock's record. Waiters still joining are left out."""
    out = {}
    code, data = cp.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases")
    for lease in json.loads(data)["items"]:
        notes = lease["metadata"].get("annotations", {})
        if "envgate.dev/waiter" in notes:
            w = json.loads(notes["envgate.dev/waiter"])
            if w["seq"]:
                out.setdefault(w["lock"], {})[w["who"]["id"]] = w["seq"]
        elif "envgate.dev/record" in notes:
            record = json.loads(notes["envgate.dev/record"])
            for w in record.get("waiters") or []:
                out.setdefault(record["name"], {})[w["who"]["id"]] = w["since"]
    return out


def queue_lengths(cp, ns):
    return {lock: len(q) for lock, q in queues(cp, ns).items()}


def drain(a, cfg, env, work, per_env_waiters, start):
    """Releases each lock's holder, then each waiter once it holds the lock; returns the
    locks whose waiters got it out of the order of their places at the window's start."""
    out_of_order = []

    def one(e, procs):
        r = subprocess.run([a.exe, "lock", "release", e, "--config", cfg, "--holder",
                            f"holder-{e}"], env=env, cwd=work, capture_output=True)
        served = []
        pending = dict(procs)
        deadline = time.time() + 300
        while pending and time.time() < deadline:
            done = [i for i, p in pending.items() if p.ended is not None]
            if not done:
                time.sleep(0.01)
                continue
            for i in done:
                p = pending.pop(i)
                if p.proc.returncode == 0:
                    served.append(i)
                    subprocess.run([a.exe, "lock", "release", e, "--config", cfg, "--holder", i],
                                   env=env, cwd=work, capture_output=True)
        places = start.get(e, {})
        want = sorted((i for i in served if i in places), key=lambda i: places[i])
        got = [i for i in served if i in places]
        if got != want or pending or r.returncode != 0:
            out_of_order.append(f"{e}: served {got}, places {want}, never served {list(pending)}")

    threads = [threading.Thread(target=one, args=(e, procs)) for e, procs in per_env_waiters.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out_of_order


def step(a, cp, n, work):
    ns = f"scale-{n}-{a.tag}"
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
    cfg = a.cfg
    waiters = []
    per_env = {}
    per_env_waiters = {}
    for w in range(4 * n):
        e = f"env{w % ENVS:02d}"
        per_env[e] = per_env.get(e, 0) + 1
        p = Proc([a.exe, "lock", "acquire", e, "--config", cfg, "--holder", f"w{n}-{w}"],
                 env=env, cwd=work)
        waiters.append(p)
        per_env_waiters.setdefault(e, {})[f"w{n}-{w}"] = p
    deadline = time.time() + 300
    while time.time() < deadline:
        q = queue_lengths(cp, a.lock_ns)
        if all(g.first.is_set() for g in gates) and all(q.get(e, 0) >= c for e, c in per_env.items()):
            break
        time.sleep(0.5)
    start = queues(cp, a.lock_ns)
    cp_pid = int(open(os.path.join(cp.state, "pid")).read())
    load0 = os.getloadavg()[0]
    r0, l0, c0, t0 = total_requests(cp), lease_requests(cp), cpu_seconds(cp_pid), time.time()
    time.sleep(a.window)
    r1, l1, c1, t1 = total_requests(cp), lease_requests(cp), cpu_seconds(cp_pid), time.time()
    load1 = os.getloadavg()[0]
    minutes = (t1 - t0) / 60
    rss_g = [x for x in (rss_mib(g.proc.pid) for g in gates if g.ended is None) if x]
    rss_w = [x for x in (rss_mib(w.proc.pid) for w in waiters if w.ended is None) if x]
    end = queues(cp, a.lock_ns)
    q = {e: len(v) for e, v in end.items()}
    lost = [f"{e}: {q.get(e, 0)} waiters queued of {c}" for e, c in per_env.items() if q.get(e, 0) != c]
    lost += [f"waiter {i} ended: {w.lines[-1:]}" for i, w in enumerate(waiters) if w.ended]
    moved = [f"{e}/{i}: place {p} at the start, {end.get(e, {}).get(i)} at the end"
             for e, places in start.items() for i, p in places.items()
             if end.get(e, {}).get(i) != p]
    lost += moved
    for g in gates:
        if g.kind != "quiet":
            try:
                g.proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                pass
        if g.ended is None and g.kind == "quiet":
            g.proc.send_signal(signal.SIGTERM)
    unordered = drain(a, cfg, env, work, per_env_waiters, start)
    lost += unordered
    for w in waiters:
        if w.ended is None:
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
    per_waiter = (l1 - l0) / minutes / (4 * n)
    row = (f"| {a.tag} | {n} | {4 * n} | {rate:.0f} | {rate - a.idle_rate:.0f} | {per_waiter:.2f} "
           f"| {(c1 - c0) / minutes:.1f} | {sum(rss_g) / max(len(rss_g), 1):.1f} / {max(rss_g, default=0):.1f} "
           f"| {sum(rss_w) / max(len(rss_w), 1):.1f} / {max(rss_w, default=0):.1f} "
           f"| {pct(50):.0f} / {pct(99):.0f} ({len(lat)}) | {len(moved)} | {len(unordered)} "
           f"| {len(lost)} | {load0:.1f}-{load1:.1f} |")
    return row, lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--controlplane", required=True)
    ap.add_argument("--steps", default="5,10,25,50")
    ap.add_argument("--window", type=float, default=60)
    ap.add_argument("--baseline", help="the previous format's envgate, run first at each step")
    ap.add_argument("--burners", type=int, default=0)
    a = ap.parse_args()
    a.envgate = os.path.abspath(a.envgate)
    runs = [("new", a.envgate)]
    if a.baseline:
        runs.insert(0, ("old", os.path.abspath(a.baseline)))
    burners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(a.burners)]
    work = tempfile.mkdtemp(prefix="scale-run-")
    cp = ControlPlane(os.path.abspath(a.controlplane), os.path.join(work, "controlplane"))
    lost_all = []
    try:
        env = dict(os.environ, KUBECONFIG=cp.kubeconfig)
        r0 = total_requests(cp)
        time.sleep(a.window)
        a.idle_rate = (total_requests(cp) - r0 - 2) / (a.window / 60)  # less our 2 reads
        print(f"idle control plane: {a.idle_rate:.0f} requests/min")
        print(f"window {a.window:.0f} s per step; gates a third each crash-looping, quiet, "
              f"succeeding; waiters over {ENVS} held locks")
        print(f"burners: {a.burners}")
        print("| format | gates | waiters | API requests/min (all) | above idle "
              "| Lease requests per waiter-minute | control plane CPU s/min "
              "| gate RSS MiB mean / max | waiter RSS MiB mean / max | verdict latency ms p50 / p99 (n) "
              "| places lost | locks served out of order | lost (all checks) | load |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in [int(x) for x in a.steps.split(",")]:
            for tag, exe in runs:
                a.tag, a.exe = tag, exe
                a.lock_ns = f"{LOCK_NS}-{tag}-{n}"
                a.cfg = os.path.join(work, f"envgate-{tag}-{n}.yml")
                create_namespace(cp, a.lock_ns)
                lock_config(a.cfg, a.lock_ns)
                for i in range(ENVS):
                    e = f"env{i:02d}"
                    subprocess.run([exe, "lock", "acquire", e, "--config", a.cfg, "--holder",
                                    f"holder-{e}"], env=env, check=True, capture_output=True,
                                   cwd=work)
                row, lost = step(a, cp, n, work)
                print(row, flush=True)
                lost_all += [f"{tag} {n}: {x}" for x in lost]
    finally:
        for b in burners:
            b.kill()
        cp.stop()
        shutil.rmtree(work, ignore_errors=True)
    if lost_all:
        print("lost:\n  " + "\n  ".join(lost_all))
        sys.exit(1)


if __name__ == "__main__":
    main()
