#!/usr/bin/env python3
"""The Kubernetes Lease lock store against a real kubesim (store: kubernetes), or with
ENVGATE_TEST_CLUSTER=controlplane against the real API server of the test run's control
plane (a namespace of its own; no fault injection there: the real server has none).

Contention: N `envgate lock acquire/release` worker processes x M rounds on one lock
while a fault injector answers a share (--fault-rate, default 10%) of the Lease
writes with 409 Conflict or 500 (alternately) and of the Lease reads with 500, through
kubesim's fault API (the kube client retries 500s; a 409 makes the lock manager
re-read and re-decide). The workers log their own critical sections; the checks of
test/bench/lock_contention.py apply (no overlap, arrival order, every transition
numbered), plus: the Lease spec mirrors the record, and every transition became an
Event on the Lease. A watch counts the successful Lease writes, so genuine CAS
conflicts = write requests - injected faults - successful writes.

Kill -9 (--kill): envgate_lease_holder holds the lock with a 2 s lease and renews it;
a waiting `envgate lock acquire` must see HolderVanished within one lease of the
kill (hold: failed until an unlock; release: it takes over).

Usage: lease_contention.py --envgate PATH --kubesim PATH --holder PATH
         [--processes 20] [--rounds 10] [--fault-rate 0.1] [--kill] [--no-contention]
"""
import argparse
import atexit
import base64
import datetime
import http.client
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import lock_contention  # noqa: E402  (the shared checks and worker loop)

# These tests play pipelines with --holder outside CI: a CI run of the test suite must
# not turn them into CI jobs (holder from CI_*, unlock limited to `unlockers`).
for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]

ON_CONTROLPLANE = os.environ.get("ENVGATE_TEST_CLUSTER") == "controlplane"
# kubesim is private to a test; the control plane is shared by the run: a fresh namespace.
NS = "envgate-locks" + (f"-{os.getpid()}-{os.urandom(3).hex()}" if ON_CONTROLPLANE else "")
LEASES = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"
LEASE_SECONDS = 2


class Cluster:
    """What the tests read of the lock's Lease and its Events, over request()."""

    def lease(self, lock="gstg"):
        code, lease = self.request("GET", f"{LEASES}/envgate-{lock}")
        if code != 200:
            return None, None
        return lease, json.loads(lease["metadata"]["annotations"]["envgate.dev/record"])

    def waiters(self, lock="gstg"):
        """The queue of `lock`: its waiters' own Leases, numbered ones, in number order
        (plus entries an earlier envgate kept in the lock's record)."""
        code, leases = self.request(
            "GET", f"{LEASES}?labelSelector=envgate.dev%2Flock-name%3D{lock},envgate.dev%2Fwaiter%3Dtrue")
        queue = []
        for item in leases.get("items", []) if code == 200 else []:
            w = json.loads(item["metadata"]["annotations"]["envgate.dev/waiter"])
            if w["seq"]:
                queue.append((w["seq"], w))
        legacy = (self.lease(lock)[1] or {}).get("waiters") or []
        return legacy + [w for _, w in sorted(queue, key=lambda x: x[0])]

    def events(self, lock="gstg"):
        _, events = self.request("GET", f"/api/v1/namespaces/{NS}/events")
        return [e for e in events["items"] if e["involvedObject"]["name"] == f"envgate-{lock}"]


class Kubesim(Cluster):
    def __init__(self, binary, workdir, *args):
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        self.proc = subprocess.Popen([binary, "--port", "0", "--write-kubeconfig", self.kubeconfig,
                                      *args], stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())

    def evict(self, ns, pod):
        """A kubelet eviction of the pod."""
        code, body = self.request("POST", f"/kubesim/v1/namespaces/{ns}/pods/{pod}/evict", {})
        assert code == 200, body

    def request(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request(method, path, json.dumps(body) if body is not None else None,
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, json.loads(data) if data else None

    def stream(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        conn.request("GET", path)
        return conn.getresponse()

    def counters(self):
        """Requests served so far, as {"get leases": n, "update leases": n, ...}."""
        return self.request("GET", "/kubesim/v1/counters")[1]["requests"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class ControlPlane(Cluster):
    """The test run's control plane (started by test/controlplane/run.sh): HTTPS verified
    with the kubeconfig's CA, its bearer token, and a namespace of this test's own."""

    VERBS = {"GET": "get", "LIST": "list", "WATCH": "watch", "PUT": "update", "POST": "create",
             "PATCH": "patch", "DELETE": "delete"}

    def __init__(self, _binary, workdir, namespace=None):
        state = os.environ["ENVGATE_CONTROLPLANE_STATE"]
        self.control = json.load(open(os.path.join(state, "kubeconfig.control")))
        src = os.path.join(state, "kubeconfig")
        self.kubeconfig = os.path.join(workdir, "kubeconfig")
        open(self.kubeconfig, "w").write(open(src).read())
        os.chmod(self.kubeconfig, 0o600)
        text = open(src).read()
        self.port = int(re.search(r"server: https://127\.0\.0\.1:(\d+)", text).group(1))
        ca = base64.b64decode(re.search(r"certificate-authority-data: (\S+)", text).group(1))
        self.token = re.search(r"token: (\S+)", text).group(1)
        self.ctx = ssl.create_default_context(cadata=ca.decode())
        self.namespace = namespace or NS
        self.create_namespace(self.namespace)
        self.base = self.metrics()

    def create_namespace(self, name):
        code, _ = self.request("POST", "/api/v1/namespaces",
                               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        assert code in (201, 409), f"cannot create namespace {name}: {code}"

    def evict(self, ns, pod):
        """A kubelet eviction of the pod, through the node agent's control API."""
        host = self.control["url"].removeprefix("http://")
        conn = http.client.HTTPConnection(host, timeout=60)
        conn.request("POST", f"/v1/namespaces/{ns}/pods/{pod}/evict",
                     headers={"Authorization": f"Bearer {self.control['token']}"})
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, body

    def _conn(self, timeout=30):
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=self.ctx)

    def request(self, method, path, body=None):
        conn = self._conn()
        conn.request(method, path, json.dumps(body) if body is not None else None,
                     {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        try:
            return resp.status, json.loads(data) if data else None
        except json.JSONDecodeError:
            return resp.status, data.decode(errors="replace")

    def stream(self, path):
        conn = self._conn(timeout=None)
        conn.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
        return conn.getresponse()

    def metrics(self):
        """apiserver_request_total of Leases and Events, by "verb resource"."""
        _, text = self.request("GET", "/metrics")
        out = {}
        for line in text.splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
            if labels.get("resource") not in ("leases", "events"):
                continue
            key = f"{self.VERBS.get(labels['verb'], labels['verb'].lower())} {labels['resource']}"
            out[key] = out.get(key, 0) + int(float(line.rsplit(" ", 1)[1]))
        return out

    def counters(self):
        now = self.metrics()
        return {k: v - self.base.get(k, 0) for k, v in now.items()}

    def stop(self):
        """What this test wrote goes (Leases, Events), so that the next scenario of the
        process starts clean in the same namespace; the namespace goes at exit."""
        ns = self.namespace
        self.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases")
        self.request("DELETE", f"/api/v1/namespaces/{ns}/events")
        atexit.register(self.request, "DELETE", f"/api/v1/namespaces/{self.namespace}")


def cluster(binary, workdir):
    """kubesim started from `binary`, or the control plane of the test run."""
    return ControlPlane(binary, workdir) if ON_CONTROLPLANE else Kubesim(binary, workdir)


class Watcher(threading.Thread):
    """Counts the successful writes of the Lease (ADDED/MODIFIED events)."""

    def __init__(self, sim, lock="gstg"):
        super().__init__(daemon=True)
        self.sim, self.name_ = sim, f"envgate-{lock}"
        self.writes, self.last_rv = 0, None
        _, listed = sim.request("GET", LEASES)
        self.start_rv = listed["metadata"]["resourceVersion"]

    def run(self):
        resp = self.sim.stream(f"{LEASES}?watch=1&resourceVersion={self.start_rv}")
        for line in resp:
            ev = json.loads(line)
            obj = ev.get("object", {})
            if ev["type"] in ("ADDED", "MODIFIED") and obj["metadata"]["name"] == self.name_:
                self.writes += 1
                self.last_rv = obj["metadata"]["resourceVersion"]


class FaultInjector(threading.Thread):
    """Keeps the injected faults at `rate` of the Lease requests kubesim has counted."""

    def __init__(self, sim, rate):
        super().__init__(daemon=True)
        self.sim, self.rate = sim, rate
        self.added = {"update": 0, "get": 0}
        self.stopping = threading.Event()

    def counted(self):
        _, c = self.sim.request("GET", "/kubesim/v1/counters")
        r = c["requests"]
        return {"update": r.get("update leases", 0), "get": r.get("get leases", 0),
                "create": r.get("create leases", 0)}

    def run(self):
        while self.rate > 0 and not self.stopping.wait(0.02):
            counted = self.counted()
            for verb in ("update", "get"):
                while self.added[verb] < int(self.rate * counted[verb]):
                    code = 409 if verb == "update" and self.added[verb] % 2 == 0 else 500
                    self.sim.request("POST", "/kubesim/v1/faults/fail",
                                     {"code": code, "verb": verb, "resource": "leases", "count": 1})
                    self.added[verb] += 1

    def finish(self):
        """Stops injecting; returns the faults that hit a request, by (verb, code)."""
        if self.rate <= 0:
            self.stopping.set()
            self.join()
            return {("update", 409): 0, ("update", 500): 0, ("get", 500): 0}
        self.stopping.set()
        self.join()
        _, left = self.sim.request("GET", "/kubesim/v1/faults")
        self.sim.request("POST", "/kubesim/v1/faults/clear", {})
        unused = {}
        for rule in left["rules"]:
            key = (rule["verb"], rule["code"])
            unused[key] = unused.get(key, 0) + rule["count"]
        added = {("update", 409): (self.added["update"] + 1) // 2,
                 ("update", 500): self.added["update"] // 2, ("get", 500): self.added["get"]}
        return {k: v - unused.get(k, 0) for k, v in added.items()}


def config(policy="hold", lease=None):
    extra = f", lease_duration: {lease}s" if lease else ""
    return f'''version: 1
defaults:
  namespace: gitlab
  lock: {{ store: kubernetes, namespace: {NS}, on_failure: {policy}, order: oldest_first, wait_timeout: 5m, local_unlock: true{extra} }}
environments:
  - name: gstg
'''


def run_workers(envgate, sim, workdir, processes, rounds):
    cfg = os.path.join(workdir, "envgate.yml")
    open(cfg, "w").write(config())
    log = os.path.join(workdir, "critical.log")
    started = time.monotonic()
    procs = []
    for i in range(processes):
        env = dict(os.environ, ENVGATE=envgate, CFG=cfg, LOG=log, ME=f"w{i:02d}",
                   ROUNDS=str(rounds), KUBECONFIG=sim.kubeconfig)
        err = open(os.path.join(workdir, f"w{i:02d}.err"), "w")
        procs.append(subprocess.Popen(["bash", "-c", lock_contention.WORKER], env=env, stderr=err))
    codes = [p.wait() for p in procs]
    for i, code in enumerate(codes):
        if code:
            sys.stdout.write(open(os.path.join(workdir, f"w{i:02d}.err")).read()[-2000:])
    return log, codes, time.monotonic() - started


def contention(a):
    with tempfile.TemporaryDirectory(prefix="envgate-lease-contention-") as workdir:
        sim = cluster(a.kubesim, workdir)
        try:
            watcher = Watcher(sim)
            watcher.start()
            injector = FaultInjector(sim, a.fault_rate)
            injector.start()
            log, codes, elapsed = run_workers(os.path.abspath(a.envgate), sim, workdir,
                                              a.processes, a.rounds)
            hit = injector.finish()
            if any(codes):
                print(f"FAIL: worker exit codes {codes}")
                return 1
            lease, record = sim.lease()
            deadline = time.monotonic() + 30
            while watcher.last_rv != lease["metadata"]["resourceVersion"]:
                if time.monotonic() > deadline:
                    print("FAIL: the watch never saw the last Lease write")
                    return 1
                time.sleep(0.05)
            counters = {"requests": sim.counters()}
            events = sim.events()
            starts, ends = lock_contention.parse_log(log)
            problems, queued, gaps = lock_contention.check(starts, ends, record, a.processes,
                                                           a.rounds)
        finally:
            sim.stop()
    total = a.processes * a.rounds
    spec = lease["spec"]
    if "holderIdentity" in spec or spec.get("leaseTransitions") != record["lease_transitions"]:
        problems.append(f"the Lease spec does not mirror the record: {spec}")
    reasons = [e["reason"] for e in events]
    if reasons.count("Acquired") != total or reasons.count("Released") != total:
        problems.append(f"events: {reasons.count('Acquired')} Acquired, "
                        f"{reasons.count('Released')} Released, expected {total} each")
    req = counters["requests"]
    writes = req.get("update leases", 0) + req.get("create leases", 0)
    injected_writes = hit[("update", 409)] + hit[("update", 500)]
    genuine = writes - injected_writes - watcher.writes
    gaps.sort()
    print(f"{a.processes} processes x {a.rounds} rounds on the Lease store: {total} critical "
          f"sections in {elapsed:.1f} s ({total / elapsed:.1f} handoffs/s, "
          f"{2 * total / elapsed:.1f} transitions/s); {queued} came from the queue")
    if gaps:
        print(f"handoff gap: median {gaps[len(gaps) // 2] * 1000:.0f} ms, "
              f"p95 {gaps[int(len(gaps) * 0.95)] * 1000:.0f} ms, "
              f"p99 {gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))] * 1000:.0f} ms, "
              f"max {gaps[-1] * 1000:.0f} ms")
    print(f"Lease requests: {req.get('get leases', 0)} get, {req.get('update leases', 0)} update, "
          f"{req.get('create leases', 0)} create, {req.get('watch leases', 0)} watch "
          f"({req.get('watch leases', 0) / total:.2f} Lease watches per acquire); "
          f"{watcher.writes} successful writes")
    print(f"faults injected (rate {a.fault_rate}): {hit[('update', 409)]} x 409 and "
          f"{hit[('update', 500)]} x 500 on update, {hit[('get', 500)]} x 500 on get; "
          f"genuine resourceVersion conflicts: {genuine}; conflicts seen in all: "
          f"{genuine + hit[('update', 409)]}")
    print(f"history: last seq {record['history'][-1]['seq']} (expected {2 * total}); "
          f"{len(events)} Events on the Lease")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("OK: no overlaps, arrival order kept, every transition counted and posted")
    return 1 if problems else 0


def epoch(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def kill_scenario(a, policy):
    with tempfile.TemporaryDirectory(prefix="envgate-lease-kill-") as d:
        sim = cluster(a.kubesim, d)
        try:
            return kill_in(a, sim, d, policy)
        finally:
            sim.stop()


def kill_in(a, sim, d, policy):
    envgate = os.path.abspath(a.envgate)
    cfg = os.path.join(d, "envgate.yml")
    open(cfg, "w").write(config(policy, LEASE_SECONDS))
    env = dict(os.environ, KUBECONFIG=sim.kubeconfig)
    holder = subprocess.Popen([a.holder, sim.kubeconfig, NS, "gstg", "h1", str(LEASE_SECONDS)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held", "holder did not take the lock"
    waiter = subprocess.Popen([envgate, "lock", "acquire", "gstg", "--config", cfg, "--holder",
                               "w1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env)
    wait_for(lambda: sim.waiters(), 30, "the waiter to queue")
    time.sleep(LEASE_SECONDS)  # the holder keeps renewing: the waiter must not call it stale
    rec = sim.lease()[1]
    assert rec["state"] == "held" and rec["holder"]["id"] == "h1", rec
    killed_at = time.time()
    holder.kill()  # SIGKILL: nothing runs in the holder
    holder.wait()
    if policy == "hold":
        rec = wait_for(lambda: (r := sim.lease()[1]) and r["state"] == "failed" and r, 30,
                       "HolderVanished")
        assert rec["failure"]["reason"] == "HolderVanished", rec
        seen_after = epoch(rec["failure"]["at"]) - killed_at
        assert waiter.poll() is None, "the waiter must keep waiting for an unlock"
        unlock = subprocess.run([envgate, "unlock", "gstg", "--config", cfg, "--reason",
                                 "holder killed in test", "--expect-holder", "h1"],
                                capture_output=True, text=True, env=env)
        assert unlock.returncode == 0, unlock.stderr
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    lease, rec = sim.lease()
    assert rec["holder"]["id"] == "w1" and lease["spec"]["holderIdentity"] == "w1", rec
    whats = [h["what"] for h in rec["history"]]
    reasons = [e["reason"] for e in sim.events()]
    if policy == "release":
        assert "took_over" in out, out
        assert rec["lease_transitions"] == 2 and lease["spec"]["leaseTransitions"] == 2, rec
        assert whats == ["acquire", "takeover"], whats
        assert reasons == ["Acquired", "TakenOver"], reasons
        seen_after = epoch(rec["history"][-1]["at"]) - killed_at
    else:
        assert "HolderVanished" in err, err
        assert whats == ["acquire", "vanished", "unlock", "acquire"], whats
        assert reasons == ["Acquired", "HolderVanished", "Unlocked", "Acquired"], reasons
        vanished = [e for e in sim.events() if e["reason"] == "HolderVanished"][0]
        assert vanished["type"] == "Warning", vanished
    # Stale = a whole lease with no renewal seen; the last renewal was at most lease/3
    # before the kill and the waiter polls every 50 ms (1 s of slack for a loaded machine).
    assert seen_after <= LEASE_SECONDS + 1.0, f"HolderVanished seen {seen_after:.2f} s after kill"
    print(f"Lease store, policy {policy}: holder vanished seen {seen_after:.2f} s after kill -9 "
          f"(lease {LEASE_SECONDS} s); history {whats}; events {reasons}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--holder", required=True)
    ap.add_argument("--processes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--fault-rate", type=float, default=0.1)
    ap.add_argument("--kill", action="store_true")
    ap.add_argument("--no-contention", action="store_true")
    a = ap.parse_args()
    if ON_CONTROLPLANE and a.fault_rate > 0:
        print("on the control plane no faults are injected (--fault-rate ignored)")
        a.fault_rate = 0
    if a.kill:
        for policy in ("hold", "release"):
            kill_scenario(a, policy)
    if not a.no_contention and contention(a):
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
