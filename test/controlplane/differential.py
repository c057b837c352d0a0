#!/usr/bin/env python3
"""Differential test: kubesim's Job controller against the real one.

Each case is a Job with a pod-outcome script (containers that fail N times then pass,
exit with a given code, sleep past a deadline) and, where the case says so, an action
taken while it runs (a kubelet eviction of its first pod, resuming a suspended Job).
Every case runs on a fresh kubesim (time scale 0.01) and on the test run's control
plane at once; the Job's status trajectory, read from a watch, is reduced to what does
not depend on timing:

  * the conditions in the order they first became True (type/reason), and Suspended
    turning False again;
  * the final failed / succeeded counts, failedIndexes and completedIndexes;
  * whether the controller passed the pods through uncountedTerminatedPods;
  * that failed and succeeded never decrease.

The two reductions must be equal. Prints a table (markdown) of every case and exits 1
on any difference.

Usage: differential.py --kubesim PATH [--only CASE] [--markdown FILE]
(ENVGATE_CONTROLPLANE_STATE names the running control plane, see run.sh.)
"""
import argparse
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "locks"))
from lease_contention import ControlPlane, Kubesim  # noqa: E402

TERMINAL = ("Complete", "Failed")


def fail_then_pass(counter, fails, code=1, run_secs=0.3):
    """A container that exits `code` on its first `fails` runs, then 0."""
    return (f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {counter}; "
            f"sleep {run_secs}; if [ $n -le {fails} ]; then exit {code}; fi; exit 0")


def per_index(counter, failing_index, fails):
    """Indexed: index `failing_index` fails `fails` times (per index counters)."""
    return (f"f={counter}-$JOB_COMPLETION_INDEX; n=$(cat $f 2>/dev/null || echo 0); "
            f"n=$((n + 1)); echo $n > $f; sleep 0.3; "
            f"if [ $JOB_COMPLETION_INDEX -eq {failing_index} ] && [ $n -le {fails} ]; then exit 1; fi")


# name: (restartPolicy, spec extras, script(counter), action)
def cases(deadline):
    return {
        "onfailure-crash2-pass": ("OnFailure", {"backoffLimit": 3},
                                  lambda c: fail_then_pass(c, 2), None),
        "onfailure-limit0-fail": ("OnFailure", {"backoffLimit": 0},
                                  lambda c: fail_then_pass(c, 99), None),
        "onfailure-limit1-fail": ("OnFailure", {"backoffLimit": 1},
                                  lambda c: fail_then_pass(c, 99), None),
        "onfailure-limit3-fail": ("OnFailure", {"backoffLimit": 3},
                                  lambda c: fail_then_pass(c, 99), None),
        "never-limit0-fail": ("Never", {"backoffLimit": 0}, lambda c: fail_then_pass(c, 99), None),
        "never-limit1-fail-pass": ("Never", {"backoffLimit": 1},
                                   lambda c: fail_then_pass(c, 1), None),
        "never-limit3-fail": ("Never", {"backoffLimit": 3}, lambda c: fail_then_pass(c, 99), None),
        "never-evict-then-pass": ("Never", {"backoffLimit": 1},
                                  lambda c: fail_then_pass(c, 0, run_secs=3), "evict"),
        "onfailure-evict-then-pass": ("OnFailure", {"backoffLimit": 3},
                                      lambda c: fail_then_pass(c, 0, run_secs=3), "evict"),
        "never-evict-limit0": ("Never", {"backoffLimit": 0},
                               lambda c: fail_then_pass(c, 0, run_secs=3), "evict"),
        "failjob-exit42": ("Never", {"backoffLimit": 6, "podFailurePolicy": {"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}},
            lambda c: fail_then_pass(c, 99, code=42), None),
        "ignore-disruption": ("Never", {"backoffLimit": 0, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}},
            lambda c: fail_then_pass(c, 0, run_secs=3), "evict"),
        "ignore-exit3-then-pass": ("Never", {"backoffLimit": 0, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]}},
            lambda c: fail_then_pass(c, 1, code=3), None),
        "count-exit5": ("Never", {"backoffLimit": 1, "podFailurePolicy": {"rules": [
            {"action": "Count", "onExitCodes": {"operator": "In", "values": [5]}}]}},
            lambda c: fail_then_pass(c, 99, code=5), None),
        "deadline": ("OnFailure", {"backoffLimit": 3, "activeDeadlineSeconds": deadline},
                     lambda c: "sleep 60", None),
        "suspend-resume": ("OnFailure", {"backoffLimit": 3, "suspend": True},
                           lambda c: fail_then_pass(c, 0), "resume"),
        "indexed-per-index": ("Never", {"completionMode": "Indexed", "completions": 2,
                                        "parallelism": 2, "backoffLimitPerIndex": 1},
                              lambda c: per_index(c, 0, 99), None),
        "success": ("Never", {"backoffLimit": 2}, lambda c: "echo migrated", None),
    }


def job(name, policy, extra, script):
    spec = {"template": {"spec": {
        "restartPolicy": policy, "terminationGracePeriodSeconds": 1,
        "containers": [{"name": "c", "image": "registry.example.com/migrations:1.0",
                        "command": ["sh", "-c", script]}]}}}
    spec.update(extra)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


class Run(threading.Thread):
    """One case on one cluster: create, act, record the trajectory from a watch."""

    def __init__(self, cluster, ns, manifest, action, timeout=90):
        super().__init__(daemon=True)
        self.cluster, self.ns, self.manifest, self.action = cluster, ns, manifest, action
        self.timeout = timeout
        self.snapshots, self.error, self.final = [], None, None

    def path(self, suffix=""):
        return f"/apis/batch/v1/namespaces/{self.ns}/jobs{suffix}"

    def run(self):
        try:
            self._run()
        except Exception as e:  # noqa: BLE001 (reported as the case's result)
            self.error = f"{type(e).__name__}: {e}"

    def _run(self):
        name = self.manifest["metadata"]["name"]
        _, listed = self.cluster.request("GET", self.path())
        rv = listed["metadata"]["resourceVersion"]
        done = threading.Event()
        watch = threading.Thread(target=self.watch, args=(name, rv, done), daemon=True)
        watch.start()
        code, body = self.cluster.request("POST", self.path(), self.manifest)
        assert code == 201, f"create: {code} {body}"
        if self.action:
            self.act(name, done)
        if not done.wait(self.timeout):
            raise TimeoutError(f"no terminal condition in {self.timeout}s")
        _, self.final = self.cluster.request("GET", self.path(f"/{name}"))

    def watch(self, name, rv, done):
        resp = self.cluster.stream(self.path(f"?watch=1&resourceVersion={rv}"))
        for line in resp:
            ev = json.loads(line)
            obj = ev.get("object", {})
            if obj.get("metadata", {}).get("name") != name:
                continue
            st = obj.get("status", {})
            self.snapshots.append(st)
            if any(c["type"] in TERMINAL and c["status"] == "True" for c in st.get("conditions", [])):
                done.set()
                return

    def pods(self, name):
        _, pods = self.cluster.request(
            "GET", f"/api/v1/namespaces/{self.ns}/pods?labelSelector=job-name%3D{name}")
        return pods["items"]

    def act(self, name, done):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not done.is_set():
            if self.action == "evict":
                running = [p for p in self.pods(name) if p["status"].get("phase") == "Running"
                           and not p["metadata"].get("deletionTimestamp")]
                if running:
                    time.sleep(0.3)  # the container is up (its run lasts 3 s)
                    self.cluster.evict(self.ns, running[0]["metadata"]["name"])
                    return
            elif self.action == "resume":
                st = self.snapshots[-1] if self.snapshots else {}
                if any(c["type"] == "Suspended" and c["status"] == "True"
                       for c in st.get("conditions", [])):
                    code, body = self.cluster.request_patch(self.path(f"/{name}"),
                                                            {"spec": {"suspend": False}})
                    assert code == 200, body
                    return
            time.sleep(0.05)
        raise TimeoutError(f"action {self.action} could not be taken")


def reduce(snapshots, final):
    """What of a trajectory does not depend on timing."""
    order, seen, uncounted, problems = [], set(), False, []
    last = (0, 0)
    for st in snapshots + [final.get("status", {})]:
        for c in st.get("conditions", []):
            key = f"{c['type']}={c['status']}/{c.get('reason', '')}"
            if c["type"] == "Suspended" or c["status"] == "True":
                if key not in seen:
                    seen.add(key)
                    order.append(key)
        u = st.get("uncountedTerminatedPods") or {}
        uncounted = uncounted or bool(u.get("failed") or u.get("succeeded"))
        now = (st.get("failed", 0), st.get("succeeded", 0))
        if now[0] < last[0] or now[1] < last[1]:
            problems.append(f"counts went back {last} -> {now}")
        last = now
    st = final.get("status", {})
    return {"conditions": order,
            "failed": st.get("failed", 0), "succeeded": st.get("succeeded", 0),
            "failedIndexes": st.get("failedIndexes", ""),
            "completedIndexes": st.get("completedIndexes", ""),
            "uncounted_seen": uncounted, "problems": problems}


def with_patch(cluster):
    """Adds request_patch (merge patch) to a cluster client."""
    def request_patch(path, body):
        import http.client
        if isinstance(cluster, ControlPlane):
            conn = cluster._conn()
            headers = {"Authorization": f"Bearer {cluster.token}"}
        else:
            conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=30)
            headers = {}
        headers["Content-Type"] = "application/merge-patch+json"
        conn.request("PATCH", path, json.dumps(body), headers)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, json.loads(data) if data else None
    cluster.request_patch = request_patch
    return cluster


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--only", action="append")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    results, differ = [], 0
    with tempfile.TemporaryDirectory(prefix="envgate-differential-") as d:
        sim = with_patch(Kubesim(a.kubesim, d, "--time-scale", "0.01"))
        cp = with_patch(ControlPlane(None, d, f"differential-{os.getpid()}"))
        try:
            table = cases(deadline=2)
            sim_table = cases(deadline=200)  # kubesim's clock runs 100x faster
            for name in table:
                if a.only and name not in a.only:
                    continue
                runs = {}
                for label, cluster, spec in (("kubesim", sim, sim_table[name]), ("controlplane", cp, table[name])):
                    policy, extra, script, action = spec
                    counter = os.path.join(d, f"{label}-{name}.count")
                    ns = f"diff-{name}"[:63] if label == "kubesim" else f"diff-{os.getpid()}-{name}"[:63]
                    if label == "controlplane":
                        cp.create_namespace(ns)
                    runs[label] = Run(cluster, ns, job(name, policy, extra, script(counter)), action)
                for r in runs.values():
                    r.start()
                for r in runs.values():
                    r.join(120)
                red = {}
                for label, r in runs.items():
                    red[label] = ({"error": r.error} if r.error or r.final is None
                                  else reduce(r.snapshots, r.final))
                same = red["kubesim"] == red["controlplane"] and "error" not in red["kubesim"]
                differ += 0 if same else 1
                results.append((name, red, same))
                print(f"{'same' if same else 'DIFFERENT'}  {name}")
                if not same:
                    for label in red:
                        print(f"    {label:12} {json.dumps(red[label])}")
                if not os.environ.get("DIFF_KEEP"):
                    if runs["controlplane"].ns.startswith("diff-"):
                        cp.request("DELETE", f"/api/v1/namespaces/{runs['controlplane'].ns}")
        finally:
            sim.stop()
            cp.stop()
    md = ["| case | conditions (in order) | failed | succeeded | indexes failed/completed | kubesim = real |",
          "|---|---|---|---|---|---|"]
    for name, red, same in results:
        r = red["controlplane"]
        if "error" in r:
            md.append(f"| {name} | error: {r['error']} | | | | {'yes' if same else 'NO'} |")
            continue
        md.append(f"| {name} | {', '.join(r['conditions'])} | {r['failed']} | {r['succeeded']} | "
                  f"{r['failedIndexes'] or '-'} / {r['completedIndexes'] or '-'} | "
                  f"{'yes' if same else 'NO'} |")
    text = "\n".join(md)
    print(text)
    if a.markdown:
        open(a.markdown, "w").write(text + "\n")
    print(f"{len(results) - differ} passed, {differ} failed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
