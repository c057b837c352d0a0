#!/usr/bin/env python3
"""kill -9 of a lock holder: a waiter sees HolderVanished within one lease, and then
behaves per policy (hold: the lock is failed until a manual unlock, then the waiter
gets it; release: the waiter takes it over, leaseTransitions + 1).

The holder is envgate_lock_holder, which renews every lease/3 like `envgate run`;
the waiter is a real `envgate lock acquire`. Lease 2 s.
Usage: lock_kill_test.py --envgate PATH --holder PATH
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

# These tests play pipelines with --holder outside CI: a CI run of the test suite must
# not turn them into CI jobs (holder from CI_*, unlock limited to `unlockers`).
for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]

LEASE = 2


def config(policy):
    return f'''version: 1
defaults:
  namespace: gitlab
  lock: {{ store: file, path: locks, on_failure: {policy}, lease_duration: {LEASE}s, wait_timeout: 60s, local_unlock: true }}
environments:
  - name: gstg
'''


def read_lock(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None


def queued(queue_dir):
    """The numbered waiters of a lock: a file each in <lock>.queue/ beside its record."""
    out = []
    for name in os.listdir(queue_dir) if os.path.isdir(queue_dir) else []:
        if not name.startswith(".") and name.endswith(".json"):
            w = read_lock(os.path.join(queue_dir, name))
            if w and w.get("seq"):
                out.append(w["who"]["id"])
    return out


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def epoch(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def scenario(envgate, holder_bin, policy):
    with tempfile.TemporaryDirectory(prefix="envgate-kill-") as d:
        cfg = os.path.join(d, "envgate.yml")
        open(cfg, "w").write(config(policy))
        lock_file = os.path.join(d, "locks", "gstg.json")
        holder = subprocess.Popen([holder_bin, os.path.join(d, "locks"), "gstg", "h1", str(LEASE)],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held", "holder did not take the lock"
        waiter = subprocess.Popen([envgate, "lock", "acquire", "gstg", "--config", cfg,
                                   "--holder", "w1"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        wait_for(lambda: queued(os.path.join(d, "locks", "gstg.queue")), 30, "the waiter to queue")
        time.sleep(LEASE)  # the holder keeps renewing: the waiter must not call it stale
        rec = read_lock(lock_file)
        assert rec["state"] == "held" and rec["holder"]["id"] == "h1", rec
        killed_at = time.time()
        holder.kill()  # SIGKILL: nothing runs in the holder
        holder.wait()
        if policy == "hold":
            rec = wait_for(lambda: (r := read_lock(lock_file)) and r["state"] == "failed" and r,
                           30, "HolderVanished")
            assert rec["failure"]["reason"] == "HolderVanished", rec
            seen_after = epoch(rec["failure"]["at"]) - killed_at
            time.sleep(0.5)  # still failed: nobody takes a held-failed lock
            assert read_lock(lock_file)["state"] == "failed"
            assert waiter.poll() is None, "the waiter must keep waiting for an unlock"
            unlock = subprocess.run([envgate, "unlock", "gstg", "--config", cfg, "--reason",
                                     "holder killed in test", "--expect-holder", "h1"],
                                    capture_output=True, text=True)
            assert unlock.returncode == 0, unlock.stderr
        out, err = waiter.communicate(timeout=30)
        assert waiter.returncode == 0, err
        rec = read_lock(lock_file)
        assert rec["holder"]["id"] == "w1", rec
        whats = [h["what"] for h in rec["history"]]
        if policy == "release":
            assert "took_over" in out, out
            assert rec["lease_transitions"] == 2, rec
            assert whats == ["acquire", "takeover"], whats
            seen_after = epoch(rec["history"][-1]["at"]) - killed_at
        else:
            assert "HolderVanished" in err, err
            assert whats == ["acquire", "vanished", "unlock", "acquire"], whats
        # Stale = a whole lease with no renewal seen; the last renewal was at most
        # lease/3 before the kill, and the waiter polls every 50 ms (1 s of slack for load).
        assert seen_after <= LEASE + 1.0, f"HolderVanished seen {seen_after:.2f} s after kill"
        print(f"policy {policy}: holder vanished seen {seen_after:.2f} s after kill -9 "
              f"(lease {LEASE} s); history {whats}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--holder", required=True)
    a = ap.parse_args()
    for policy in ("hold", "release"):
        scenario(os.path.abspath(a.envgate), os.path.abspath(a.holder), policy)
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
