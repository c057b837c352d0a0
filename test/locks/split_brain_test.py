#!/usr/bin/env python3
"""Split brain: a lock holder paused (SIGSTOP) past its lease never deploys after it.

For each store (file, kubernetes Lease in kubesim) and TRIALS trials, alternating the
failure policy: pipeline A runs `envgate run` (lease 2 s, steps diff then deploy) and
is SIGSTOPped during its diff step. Pipeline B starts and waits. With on_failure
release, B takes the stale lock over and deploys; A is resumed while B deploys. With
hold, B marks the lock failed (HolderVanished) and exits 3 at its wait timeout; then A
is resumed. A must
stop before its deploy (fencing: it cannot prove it still holds the lock), exit
non-zero saying why (LockLost), and leave the lock alone. Overlaps are judged from the
deploy steps' own logs: each deploy appends "start PIPE T" and "end PIPE T"; a deploy
without an end counts as running forever.

And for the Lease store: Lease writes failing for a whole run (every update answered
500): the holder, in a long deploy, must stop it and exit non-zero before its lease
can have expired on another observer's clock (within one lease of the first failed
renewal, plus the step's grace).

Usage: split_brain_test.py --envgate PATH --kubesim PATH [--trials 10]
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lease_contention import NS, Kubesim  # noqa: E402  (also drops CI_* variables)

LEASE = 2
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def write_config(path, store, trials, locks_dir):
    lock = (f"{{ store: file, path: {locks_dir}" if store == "file"
            else f"{{ store: kubernetes, namespace: {NS}")
    envs = "".join(f"  - name: t{i}\n    lock: {{ on_failure: {policy(i)} }}\n"
                   for i in range(trials + 3))
    open(path, "w").write(f"""version: 1
defaults:
  namespace: gitlab
  lock: {lock}, lease_duration: {LEASE}s, wait_timeout: 60s }}
environments:
{envs}steps:
  diff: "touch $WORK/$ENVGATE_ENV-$PIPE.diff; sleep 1"
  deploy: "echo start $PIPE $(date +%s.%N) >> $WORK/$ENVGATE_ENV.deploy; sleep ${{DEPLOY_SECONDS:-0.5}}; echo end $PIPE $(date +%s.%N) >> $WORK/$ENVGATE_ENV.deploy"
""")


def policy(i):
    return "release" if i % 2 == 0 else "hold"


def start(envgate, cfg, env_name, pipe, work, extra_env=None, extra_args=()):
    env = dict(os.environ, WORK=work, PIPE=pipe, NO_COLOR="1", **(extra_env or {}))
    log = open(os.path.join(work, f"{env_name}-{pipe}.log"), "w")
    return subprocess.Popen([envgate, "run", "--env", env_name, "--config", cfg, "--holder", pipe,
                             "--report-dir", os.path.join(work, f"rep-{env_name}-{pipe}"),
                             *extra_args],
                            stdout=log, stderr=subprocess.STDOUT, env=env)


def wait_until(what, cond, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    check(False, f"timed out waiting for {what}")
    return False


def deploys(path):
    """{pipe: [start, end or inf]} from a deploy log."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        what, pipe, t = line.split()
        if what == "start":
            out.setdefault(pipe, []).append([float(t), float("inf")])
        elif out.get(pipe):
            out[pipe][-1][1] = float(t)
    return out


def overlaps(d):
    spans = [(s, e, p) for p, ss in d.items() for s, e in ss]
    return sum(1 for i, a in enumerate(spans) for b in spans[i + 1:]
               if a[2] != b[2] and a[0] < b[1] and b[0] < a[1])


def text(work, env_name, pipe):
    return open(os.path.join(work, f"{env_name}-{pipe}.log")).read()


def trial(envgate, cfg, store, i, work):
    env_name, pol = f"t{i}", policy(i)
    a = start(envgate, cfg, env_name, "pA", work)
    wait_until("A's diff", lambda: os.path.exists(os.path.join(work, f"{env_name}-pA.diff")))
    a.send_signal(signal.SIGSTOP)
    # hold: B marks the lock failed (HolderVanished) after a lease, then waits for an
    # unlock that never comes, until its wait timeout (exit 3).
    b = start(envgate, cfg, env_name, "pB", work,
              extra_args=() if pol == "release" else ("--wait-timeout", f"{3 * LEASE}s"))
    deploy_log = os.path.join(work, f"{env_name}.deploy")
    if pol == "release":
        wait_until("B's deploy", lambda: "pB" in deploys(deploy_log))
    else:
        b.wait(timeout=60)
    a.send_signal(signal.SIGCONT)
    rc_a, rc_b = a.wait(timeout=60), b.wait(timeout=60)
    d = deploys(deploy_log)
    n = overlaps(d)
    out_a = text(work, env_name, "pA")
    want_b = 0 if pol == "release" else 3
    check(rc_b == want_b, f"{store} #{i} ({pol}): B exits {want_b} (got {rc_b})")
    check(rc_a not in (0, 134, 139) and "LockLost" in open(
        os.path.join(work, f"rep-{env_name}-pA", "run.json")).read(),
          f"{store} #{i} ({pol}): A exits non-zero with LockLost (got {rc_a}: "
          f"{out_a.strip().splitlines()[-1:]})")
    check("pA" not in d, f"{store} #{i} ({pol}): A never deployed after its pause")
    check(n == 0, f"{store} #{i} ({pol}): {n} overlapping deploys")
    return n


def lease_writes_fail(envgate, kubesim, cfg, work, i):
    env_name = f"t{i}"
    a = start(envgate, cfg, env_name, "pA", work, {"DEPLOY_SECONDS": "30"})
    deploy_log = os.path.join(work, f"{env_name}.deploy")
    wait_until("A's deploy", lambda: "pA" in deploys(deploy_log))
    subprocess.run([kubesim, "ctl", "fail", "--code", "500", "--verb", "update", "--resource",
                    "leases", "--count", "-1"], check=True, capture_output=True)
    t0 = time.monotonic()
    rc = a.wait(timeout=60)
    took = time.monotonic() - t0
    subprocess.run([kubesim, "ctl", "clear-faults"], check=True, capture_output=True)
    d = deploys(deploy_log)
    report = open(os.path.join(work, f"rep-{env_name}-pA", "run.json")).read()
    check(rc != 0 and "LockLost" in report and "no renewal of the lock succeeded" in
          text(work, env_name, "pA"),
          f"Lease writes failing: the holder stops, exit {rc}, LockLost")
    check(took < LEASE + LEASE / 6 + 0.5,
          f"Lease writes failing: stopped {took:.2f}s after the first failed renewal "
          f"(lease {LEASE}s)")
    check(d["pA"][0][1] == float("inf"), "Lease writes failing: the deploy was stopped")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--trials", type=int, default=10)
    a = ap.parse_args()
    envgate, kubesim = os.path.abspath(a.envgate), os.path.abspath(a.kubesim)
    total = 0
    with tempfile.TemporaryDirectory() as work:
        sim = Kubesim(kubesim, work)
        os.environ["KUBECONFIG"] = sim.kubeconfig
        try:
            for store in ("file", "kubernetes"):
                sdir = os.path.join(work, store)
                os.makedirs(sdir)
                cfg = os.path.join(sdir, "envgate.yml")
                write_config(cfg, store, a.trials, os.path.join(sdir, "locks"))
                for i in range(a.trials):
                    total += trial(envgate, cfg, store, i, sdir)
                if store == "kubernetes":
                    lease_writes_fail(envgate, kubesim, cfg, sdir, a.trials)
        finally:
            sim.stop()
    print(f"SIGSTOP trials: {2 * a.trials} (file and Lease stores), overlapping deploys: {total}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
