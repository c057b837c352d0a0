#!/usr/bin/env python3
"""kill -9 of a queued waiter: it blocks a free lock for at most its queue entry's TTL.

A holder (`lock acquire --hold-for 10m`) holds gstg (lease_duration 6 s, so each
waiter's TTL is min(6 s, 60 s) = 6 s); waiter w1 queues first, w2 behind it
(oldest_first). w1 is killed with SIGKILL, then the holder releases. w2 must hold the
lock within w1's TTL after the kill plus 1 s (it saw w1's record unchanged for its TTL,
counted from before the kill), and w1's queue file must be gone.

Usage: waiter_kill_test.py --envgate PATH
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]

BOUND = 6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    envgate = os.path.abspath(ap.parse_args().envgate)
    with tempfile.TemporaryDirectory(prefix="envgate-waiter-") as d:
        cfg = os.path.join(d, "envgate.yml")
        open(cfg, "w").write(f"""version: 1
defaults:
  namespace: gitlab
  lock: {{ store: file, path: {d}/locks, lease_duration: 6s, wait_timeout: 120s }}
environments:
  - name: gstg
""")
        lock_file = os.path.join(d, "locks", "gstg.json")

        def lock(*args, **kw):
            return subprocess.run([envgate, "lock", *args, "gstg", "--config", cfg], **kw,
                                  capture_output=True, text=True)

        def waiters():  # each waiter's own file, in number order (numbered ones)
            out = []
            qdir = os.path.join(d, "locks", "gstg.queue")
            for name in os.listdir(qdir) if os.path.isdir(qdir) else []:
                if name.startswith(".") or not name.endswith(".json"):
                    continue
                try:
                    w = json.load(open(os.path.join(qdir, name)))
                except (OSError, ValueError):
                    continue
                if w.get("seq"):
                    out.append((w["seq"], w["who"]["id"]))
            return [i for _, i in sorted(out)]

        def wait_for(cond, what, seconds=30):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                if cond():
                    return
                time.sleep(0.02)
            sys.exit(f"FAIL timed out waiting for {what}")

        held = subprocess.run([envgate, "lock", "acquire", "gstg", "--config", cfg, "--holder",
                               "h1", "--hold-for", "10m"], capture_output=True, text=True)
        assert held.returncode == 0, held.stderr
        w1 = subprocess.Popen([envgate, "lock", "acquire", "gstg", "--config", cfg, "--holder",
                               "w1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: waiters() == ["w1"], "w1 to queue")
        w2 = subprocess.Popen([envgate, "lock", "acquire", "gstg", "--config", cfg, "--holder",
                               "w2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: waiters() == ["w1", "w2"], "w2 to queue behind w1")
        w1.kill()
        w1.wait()
        killed = time.monotonic()
        released = subprocess.run([envgate, "lock", "release", "gstg", "--config", cfg,
                                   "--holder", "h1"], capture_output=True, text=True)
        assert released.returncode == 0, released.stderr
        out, err = w2.communicate(timeout=BOUND + 60)
        took = time.monotonic() - killed
        rec = json.load(open(lock_file))
        ok = (w2.returncode == 0 and rec["holder"]["id"] == "w2" and took < BOUND + 1
              and "w1" not in waiters())
        print(f"{'ok  ' if ok else 'FAIL'} killed waiter skipped: w2 held the lock {took:.1f}s "
              f"after w1's kill (bound {BOUND}s + 1s; exit {w2.returncode}, "
              f"waiters {waiters()})")
        if not ok:
            print(out, err)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
