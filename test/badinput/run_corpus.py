#!/usr/bin/env python3
"""The bad-input corpus: every case through the real envgate binary.

Each case is one file under cases/<kind>/; index.tsv gives, per case, the exit code
envgate must end with and a text its stderr or stdout must hold (a clear error that
names the file and field). Any other exit code, a missing text, a crash (a signal,
exit 134/139) or a run longer than the deadline fails the case. Kinds and how a case
is fed to envgate:

  config      envgate config check --config CASE
  manifest    envgate gate --manifest CASE (rendering happens before any cluster call)
  kubeconfig  envgate gate --kubeconfig CASE with a good manifest
  exec        a kubeconfig whose exec credential plugin prints CASE, against kubesim
  lockfile    CASE as the file store's record of lock gstg, then envgate lock acquire
  lease       CASE as Lease envgate-locks/envgate-gstg in kubesim, then envgate lock acquire

Usage: run_corpus.py --envgate PATH --kubesim PATH [--only SUBSTRING] [--list]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "locks"))
from lease_contention import NS, LEASES, Kubesim  # noqa: E402  (also drops CI_* variables)

GOOD_MANIFEST = """apiVersion: batch/v1
kind: Job
metadata: {name: corpus}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, command: ["true"]}]
"""
DEADLINE_S = 30


def read_index():
    cases = []
    with open(os.path.join(HERE, "index.tsv")) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                sys.exit(f"index.tsv:{n}: want FILE<TAB>EXIT<TAB>TEXT, got {line!r}")
            cases.append((parts[0], int(parts[1]), parts[2].replace("\\t", "\t")))
    return cases


class Runner:
    def __init__(self, envgate, sim, work):
        self.envgate, self.sim, self.work = envgate, sim, work
        self.good = os.path.join(work, "good.yaml")
        open(self.good, "w").write(GOOD_MANIFEST)
        # One variable named as a secret (manifest/var-secret-vars.yaml refers to it).
        self.env = dict(os.environ, KUBECONFIG=sim.kubeconfig, NO_COLOR="1",
                        ENVGATE_SECRET_VARS="CI_CORPUS_SECRET",
                        CI_CORPUS_SECRET="corpus-secret-value")
        self.server = self._sim_server()

    def _sim_server(self):
        for line in open(self.sim.kubeconfig):
            if "server:" in line:
                return line.split("server:", 1)[1].strip().strip('"')
        sys.exit("kubesim's kubeconfig has no server")

    def gate(self, *extra):
        return [self.envgate, "gate", "--env", "gstg", "--gate", "pre-migrations",
                "--config", os.path.join(self.work, "absent.yml"), "--namespace", "corpus",
                "--report-dir", os.path.join(self.work, "rep"), *extra]

    def command(self, kind, path, n):
        if kind == "config":
            return [self.envgate, "config", "check", "--config", path]
        if kind == "manifest":
            return self.gate("--manifest", path, "--kubeconfig", self.sim.kubeconfig)
        if kind == "kubeconfig":
            return self.gate("--manifest", self.good, "--kubeconfig", path)
        if kind == "exec":
            kc = os.path.join(self.work, f"exec-{n}.kubeconfig")
            open(kc, "w").write(json.dumps({
                "apiVersion": "v1", "kind": "Config", "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": self.server}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "users": [{"name": "u", "user": {"exec": {
                    "apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/cat",
                    "args": [path], "interactiveMode": "Never"}}}]}))
            return self.gate("--manifest", self.good, "--kubeconfig", kc)
        if kind == "lockfile":
            locks = os.path.join(self.work, f"locks-{n}")
            os.makedirs(locks)
            shutil.copy(path, os.path.join(locks, "gstg.json"))
            return self.lock_acquire(f"{{ store: file, path: {locks} }}", n)
        if kind == "lease":
            self.sim.request("DELETE", f"{LEASES}/envgate-gstg")
            lease = json.load(open(path))
            code, answer = self.sim.request("POST", LEASES, lease)
            if code == 422:
                # The API server refuses to store it (as kubesim does): such a Lease can
                # never reach envgate. The case then checks the refusal (exit 422).
                return ("refused", 422, json.dumps(answer))
            if code != 201:
                sys.exit(f"{path}: kubesim refused the Lease ({code}): {answer}")
            return self.lock_acquire(f"{{ store: kubernetes, namespace: {NS} }}", n)
        sys.exit(f"unknown kind {kind}")

    def lock_acquire(self, lock, n):
        cfg = os.path.join(self.work, f"envgate-{n}.yml")
        open(cfg, "w").write(f"version: 1\ndefaults:\n  namespace: gitlab\n  lock: {lock}\n"
                             "environments:\n  - name: gstg\n")
        return [self.envgate, "lock", "acquire", "gstg", "--holder", "p1", "--no-wait",
                "--config", cfg]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    cases = [c for c in read_index() if a.only in c[0]]
    on_disk = set()
    for kind in os.listdir(os.path.join(HERE, "cases")):
        for name in os.listdir(os.path.join(HERE, "cases", kind)):
            on_disk.add(f"{kind}/{name}")
    indexed = {c[0] for c in read_index()}
    problems = [f"{f}: a case file not in index.tsv" for f in sorted(on_disk - indexed)]
    problems += [f"{f}: in index.tsv but no file" for f in sorted(indexed - on_disk)]
    passed = 0
    with tempfile.TemporaryDirectory() as work:
        sim = Kubesim(os.path.abspath(a.kubesim), work)
        try:
            runner = Runner(os.path.abspath(a.envgate), sim, work)
            for n, (case, want_exit, want_text) in enumerate(cases):
                kind = case.split("/", 1)[0]
                path = os.path.join(HERE, "cases", case)
                argv = runner.command(kind, path, n)
                if isinstance(argv, tuple):
                    _, code, answer = argv
                    if code == want_exit and want_text in answer:
                        passed += 1
                    else:
                        problems.append(f"{case}: the API refused it ({code}): {answer[-300:]}")
                    continue
                try:
                    p = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                       env=runner.env, timeout=DEADLINE_S, cwd=work)
                except subprocess.TimeoutExpired:
                    problems.append(f"{case}: still running after {DEADLINE_S}s (a hang)")
                    continue
                out = p.stdout + p.stderr
                if p.returncode < 0 or p.returncode in (134, 136, 139):
                    problems.append(f"{case}: CRASHED (exit {p.returncode}): {out[-300:]}")
                elif p.returncode != want_exit or want_text not in out:
                    problems.append(f"{case}: exit {p.returncode} (want {want_exit}), "
                                    f"want text {want_text!r} in: {out.strip()[-400:]}")
                else:
                    passed += 1
        finally:
            sim.stop()
    for line in problems:
        print("FAIL " + line)
    kinds = sorted({c[0].split("/")[0] for c in cases})
    print(f"bad-input corpus: {passed}/{len(cases)} cases passed ({', '.join(kinds)})")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
