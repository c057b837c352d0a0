#!/usr/bin/env python3
"""Lock hand-off latency: how soon the next waiter holds a lock after its release.

N worker processes (default 20) loop M rounds each on one lock: `envgate lock acquire`
(wait in the queue), log the critical section, `envgate lock release`, and queue again
at once; so while one holds the lock the other N-1 wait. Runs on the file store and on
the Lease store (store: kubernetes) of a kubesim, or, with ENVGATE_TEST_CLUSTER=controlplane
and ENVGATE_CONTROLPLANE_STATE set (test/controlplane/run.sh start), of the real API server
in a namespace of its own.

Hand-off latency = the `at` of an `acquire` transition in the lock history minus the
`at` of the `release` just before it (consecutive seq numbers). Each `at` is the clock
reading the releasing / acquiring process takes right before its compare-and-swap write
(same host, same clock), so this is release-write -> next-holder's-write. A thread
collects every history entry by seq while the workers run (the record keeps the last
20): it re-reads the record file every 2 ms, or watches the Lease.

Lease store: kubesim's request counters (GET /kubesim/v1/counters, what `kubesim ctl
counters` prints), or the API server's apiserver_request_total of Leases and Events,
taken once the collecting watch is open, so they hold the workers' requests only. Per
acquire: Lease writes (update + create; a 409 Conflict counts as a write request),
successful writes (seen by the watch), reads, watches, Events posted.

Also checks what lock_contention.py checks (no overlap, arrival order, every
transition numbered). A figure for test/bench/RESULTS.md, not a timed test.

With --idle-seconds T: 5 waiters queue behind a holder that keeps the lock; the Lease
requests they make in T seconds, per waiter and second (what waiting costs the API).

Usage: [ENVGATE_TEST_CLUSTER=controlplane ENVGATE_CONTROLPLANE_STATE=DIR]
       lock_handoff.py --envgate PATH [--kubesim PATH] [--store file|lease|both]
         [--processes 20] [--rounds 10] [--label TEXT] [--idle-seconds T]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lock_contention  # noqa: E402  (worker loop, log parsing and checks; drops CI_* vars)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "locks"))
import lease_contention  # noqa: E402  (kubesim or the control plane, with its namespace)

NS = lease_contention.NS
LEASES = lease_contention.LEASES


def config(store):
    where = "store: file, path: locks" if store == "file" else f"store: kubernetes, namespace: {NS}"
    return f'''version: 1
defaults:
  namespace: gitlab
  lock: {{ {where}, on_failure: hold, order: oldest_first, wait_timeout: 10m }}
environments:
  - name: gstg
'''


class History(threading.Thread):
    """Every history entry of lock gstg, by seq, as the writes land."""

    def __init__(self):
        super().__init__(daemon=True)
        self.entries, self.record, self.writes = {}, None, 0
        self.stopping = threading.Event()

    def merge(self, record):
        self.record = record
        for h in record.get("history", []):
            self.entries[h["seq"]] = h


class FileHistory(History):
    def __init__(self, path):
        super().__init__()
        self.path = path

    def run(self):
        while not self.stopping.wait(0.002):
            try:
                with open(self.path) as f:
                    self.merge(json.load(f))
            except (OSError, ValueError):
                pass

    def finish(self):
        self.stopping.set()
        self.join()
        with open(self.path) as f:
            self.merge(json.load(f))


def start_cluster(binary, workdir):
    """A kubesim of this run, or the test run's control plane (a namespace of its own)."""
    if lease_contention.ON_CONTROLPLANE:
        return lease_contention.ControlPlane(binary, workdir)
    return lease_contention.Kubesim(binary, workdir, "--time-scale", "0.01")


def request(sim, method, path):
    code, body = sim.request(method, path)
    if code >= 300:
        raise AssertionError(f"{method} {path}: HTTP {code}: {body}")
    return body


def reset_counters(sim):
    if lease_contention.ON_CONTROLPLANE:
        sim.base = sim.metrics()
    else:
        request(sim, "POST", "/kubesim/v1/counters/reset")


class LeaseHistory(History):
    """Watches the Lease: every ADDED/MODIFIED is one successful write."""

    def __init__(self, sim):
        super().__init__()
        self.sim = sim
        rv = request(sim, "GET", LEASES)["metadata"]["resourceVersion"]
        self.resp = sim.stream(f"{LEASES}?watch=1&resourceVersion={rv}"
                               f"&fieldSelector=metadata.name%3Denvgate-gstg")

    def run(self):
        for line in self.resp:
            ev = json.loads(line)
            if ev["type"] in ("ADDED", "MODIFIED"):
                self.writes += 1
                annotations = ev["object"]["metadata"].get("annotations", {})
                self.merge(json.loads(annotations["envgate.dev/record"]))

    def finish(self, expected_seq):
        deadline = time.monotonic() + 30
        while self.record is None or self.record["history"][-1]["seq"] < expected_seq:
            if time.monotonic() > deadline:
                raise AssertionError("the watch never saw the last Lease write")
            time.sleep(0.05)


def run_workers(envgate, workdir, processes, rounds, extra_env):
    cfg = os.path.join(workdir, "envgate.yml")
    log = os.path.join(workdir, "critical.log")
    started = time.monotonic()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = []
    for i in range(processes):
        env = dict(os.environ, ENVGATE=envgate, CFG=cfg, LOG=log, ME=f"w{i:02d}",
                   ROUNDS=str(rounds), **extra_env)
        err = open(os.path.join(workdir, f"w{i:02d}.err"), "w")
        procs.append(subprocess.Popen(["bash", "-c", lock_contention.WORKER], env=env, stderr=err))
    codes = [p.wait() for p in procs]
    for i, code in enumerate(codes):
        if code:
            sys.stdout.write(open(os.path.join(workdir, f"w{i:02d}.err")).read()[-2000:])
    if any(codes):
        raise AssertionError(f"worker exit codes {codes}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)
    return log, time.monotonic() - started, used


def handoffs(entries):
    """Seconds from each release to the acquire right after it."""
    out = []
    for seq in sorted(entries):
        nxt = entries.get(seq + 1)
        if entries[seq]["what"] == "release" and nxt and nxt["what"] in ("acquire", "takeover"):
            out.append(lock_contention.epoch(nxt["at"]) - lock_contention.epoch(entries[seq]["at"]))
    return out


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bench(a, store):
    with tempfile.TemporaryDirectory(prefix="envgate-handoff-") as workdir:
        open(os.path.join(workdir, "envgate.yml"), "w").write(config(store))
        total = a.processes * a.rounds
        sim, counters, extra = None, None, {}
        if store == "file":
            os.makedirs(os.path.join(workdir, "locks"))
            history = FileHistory(os.path.join(workdir, "locks", "gstg.json"))
        else:
            sim = start_cluster(a.kubesim, workdir)
            history = LeaseHistory(sim)
            extra = {"KUBECONFIG": sim.kubeconfig}
            reset_counters(sim)
        try:
            history.start()
            log, elapsed, cpu = run_workers(os.path.abspath(a.envgate), workdir, a.processes, a.rounds,
                                       extra)
            if store == "file":
                history.finish()
            else:
                history.finish(2 * total)
                counters = sim.counters()
        finally:
            if sim:
                sim.stop()
        starts, ends = lock_contention.parse_log(log)
        problems, _, _ = lock_contention.check(starts, ends, history.record, a.processes,
                                               a.rounds)
    missing = [s for s in range(1, 2 * total + 1) if s not in history.entries]
    if missing:
        problems.append(f"{len(missing)} history entries never seen (first seq {missing[0]})")
    lat = handoffs(history.entries)
    if len(lat) != total - 1:
        problems.append(f"{len(lat)} release->acquire pairs, expected {total - 1}")
    row = {"store": store, "handoffs": len(lat), "elapsed": elapsed, "cpu": cpu,
           "p50": percentile(lat, 50) * 1000, "p90": percentile(lat, 90) * 1000,
           "p99": percentile(lat, 99) * 1000, "max": max(lat) * 1000}
    if counters is not None:
        writes = counters.get("update leases", 0) + counters.get("create leases", 0)
        row.update(writes=writes / total, ok_writes=history.writes / total,
                   reads=counters.get("get leases", 0) / total,
                   watches=counters.get("watch leases", 0) / total,
                   events=counters.get("create events", 0) / total)
    return row, problems


def idle_cost(a, waiters=5):
    """Lease requests per second of one waiter while the holder keeps the lock."""
    with tempfile.TemporaryDirectory(prefix="envgate-handoff-idle-") as workdir:
        cfg = os.path.join(workdir, "envgate.yml")
        open(cfg, "w").write(config("lease"))
        sim = start_cluster(a.kubesim, workdir)
        env = dict(os.environ, KUBECONFIG=sim.kubeconfig)
        cmd = [os.path.abspath(a.envgate), "lock", "acquire", "gstg", "--config", cfg, "--holder"]
        try:
            subprocess.run(cmd + ["h"], env=env, check=True, capture_output=True)
            procs = [subprocess.Popen(cmd + [f"w{i}"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL) for i in range(waiters)]
            deadline = time.monotonic() + 30
            while True:
                lease = request(sim, "GET", f"{LEASES}/envgate-gstg")
                record = json.loads(lease["metadata"]["annotations"]["envgate.dev/record"])
                if len(record["waiters"]) == waiters or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            reset_counters(sim)
            time.sleep(a.idle_seconds)
            counters = sim.counters()
            for p in procs:
                p.terminate()
                p.wait(timeout=30)
        finally:
            sim.stop()
    per = waiters * a.idle_seconds
    print(f"lease, {waiters} waiters idle for {a.idle_seconds} s behind a holder: per waiter and "
          f"second {counters.get('get leases', 0) / per:.2f} reads, "
          f"{counters.get('watch leases', 0) / per:.2f} watches, "
          f"{(counters.get('update leases', 0) + counters.get('create leases', 0)) / per:.2f} "
          f"writes")


KILL_CONFIG = '''version: 1
defaults:
  namespace: gitlab
  lock: {{ {where}, on_failure: release, lease_duration: 6s, wait_timeout: 2m }}
environments:
  - name: gstg
'''


def kill_handoff(a, store, envgate, dead=2):
    """kill -9 of the holder and of the `dead` waiters queued ahead of a live one, at
    once (lease 6 s, policy release): seconds from the kill until the live waiter holds
    the lock (the `at` of its takeover in the lock history, same host and clock)."""
    with tempfile.TemporaryDirectory(prefix="envgate-kill-handoff-") as workdir:
        where = ("store: file, path: locks" if store == "file"
                 else f"store: kubernetes, namespace: {NS}")
        cfg = os.path.join(workdir, "envgate.yml")
        open(cfg, "w").write(KILL_CONFIG.format(where=where))
        sim = start_cluster(a.kubesim, workdir) if store == "lease" else None
        env = dict(os.environ, **({"KUBECONFIG": sim.kubeconfig} if sim else {}))
        try:
            if store == "file":
                holder = subprocess.Popen([a.file_holder, os.path.join(workdir, "locks"), "gstg",
                                           "h", "6"], stdout=subprocess.PIPE, text=True)
            else:
                holder = subprocess.Popen([a.lease_holder, sim.kubeconfig, NS, "gstg", "h", "6"],
                                          stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "held"
            cmd = [envgate, "lock", "acquire", "gstg", "--config", cfg, "--holder"]
            procs = []
            for i in range(dead + 1):
                procs.append(subprocess.Popen(cmd + [f"w{i}"], env=env, cwd=workdir,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              text=True))
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:  # each queued before the next joins
                    st = subprocess.run([envgate, "status", "gstg", "--config", cfg, "--output",
                                         "json"], env=env, cwd=workdir, capture_output=True,
                                        text=True)
                    try:
                        queued = json.loads(st.stdout)["locks"][0]["lock"]["waiters"] or []
                    except (ValueError, KeyError, IndexError):
                        queued = []
                    if len([w for w in queued if w.get("seq", 1)]) >= i + 1:
                        break
                    time.sleep(0.05)
            time.sleep(2)  # every waiter has seen the others renew
            killed = time.time()
            for p in [holder] + procs[:dead]:
                p.kill()
            out, err = procs[dead].communicate(timeout=60)
            st = subprocess.run([envgate, "status", "gstg", "--config", cfg, "--output", "json"],
                                env=env, cwd=workdir, capture_output=True, text=True)
            rec = json.loads(st.stdout)["locks"][0]["lock"]
            took = [h for h in rec["history"] if h["who"] == f"w{dead}"]
            if procs[dead].returncode != 0 or not took:
                return None, f"{store}: the live waiter did not take the lock: {err.strip()}"
            at = lock_contention.epoch(took[-1]["at"])
            return at - killed, None
        finally:
            for p in procs if "procs" in dir() else []:
                if p.poll() is None:
                    p.kill()
            if sim:
                sim.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim")
    ap.add_argument("--store", choices=["file", "lease", "both"], default="both")
    ap.add_argument("--processes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--label", default="")
    ap.add_argument("--idle-seconds", type=int, default=0,
                    help="also: Lease requests of idle waiters (lease store)")
    ap.add_argument("--kill-trials", type=int, default=0,
                    help="instead: hand-off after kill -9 of the holder and 2 waiters ahead")
    ap.add_argument("--baseline", help="with --kill-trials: the previous envgate, side by side")
    ap.add_argument("--file-holder", help="envgate_lock_holder (--kill-trials, file store)")
    ap.add_argument("--lease-holder", help="envgate_lease_holder (--kill-trials, lease store)")
    a = ap.parse_args()
    stores = ["file", "lease"] if a.store == "both" else [a.store]
    if "lease" in stores and not a.kubesim and not lease_contention.ON_CONTROLPLANE:
        ap.error("--kubesim is needed for the lease store (or ENVGATE_TEST_CLUSTER=controlplane)")
    if a.kill_trials:
        runs = ([("old", os.path.abspath(a.baseline))] if a.baseline else []) + \
               [("new", os.path.abspath(a.envgate))]
        print(f"kill -9 of the holder and 2 waiters ahead of a live one, lease 6 s, policy "
              f"release; seconds from the kill to the live waiter's takeover; load "
              f"{os.getloadavg()[0]:.1f}")
        failed = False
        for store in stores:
            for tag, exe in runs:
                took = []
                for _ in range(a.kill_trials):
                    t, problem = kill_handoff(a, store, exe)
                    if problem:
                        print("FAIL:", tag, problem)
                        failed = True
                    else:
                        took.append(t)
                print(f"{store:6} {tag:4} " + " ".join(f"{t:.2f}" for t in took) +
                      (f"  max {max(took):.2f}" if took else ""), flush=True)
        return 1 if failed else 0
    failed = False
    where = "the real API server" if lease_contention.ON_CONTROLPLANE else "kubesim"
    print(f"{a.label} {a.processes} processes x {a.rounds} rounds, hand-off = release `at` -> "
          f"next acquire `at` (lock history); Lease store on {where}")
    print(f"{'store':6} {'hand-offs':>9} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} {'max ms':>7} "
          f"{'wall s':>6} {'cpu s':>6} | per acquire: {'writes':>6} {'ok':>5} {'reads':>6} {'watches':>7} "
          f"{'events':>6}")
    for store in stores:
        row, problems = bench(a, store)
        line = (f"{row['store']:6} {row['handoffs']:9d} {row['p50']:7.1f} {row['p90']:7.1f} "
                f"{row['p99']:7.1f} {row['max']:7.1f} {row['elapsed']:6.1f} {row['cpu']:6.1f} |")
        if "writes" in row:
            line += (f" {'':12} {row['writes']:6.2f} {row['ok_writes']:5.2f} {row['reads']:6.1f} "
                     f"{row['watches']:7.1f} {row['events']:6.2f}")
        print(line, flush=True)
        for p in problems:
            print("FAIL:", p)
            failed = True
    if a.idle_seconds and "lease" in stores:
        idle_cost(a)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
