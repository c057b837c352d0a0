#!/usr/bin/env python3
"""Lock contention: N `envgate lock` worker processes x M rounds on one file-store lock.

Each worker loops: `envgate lock acquire` (waits in the queue), appends its own
start/end timestamps to a shared log while it holds the lock, `envgate lock release`.
Then checks: no two critical sections overlap, queued holders got the lock in
arrival order (oldest_first), and the lock history numbered every transition
(2 x N x M) with its last 20 entries matching the log. Prints the figures that
test/bench/RESULTS.md records. Exit 0 when every check passes.

Usage: lock_contention.py --envgate PATH [--processes 20] [--rounds 10]
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# These tests play pipelines with --holder outside CI: a CI run of the test suite must
# not turn them into CI jobs (holder from CI_*, unlock limited to `unlockers`).
for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]

WORKER = r'''
for r in $(seq 1 "$ROUNDS"); do
  out=$("$ENVGATE" lock acquire gstg --config "$CFG" --holder "$ME" --wait-timeout 300s) \
    || { echo "$ME: acquire failed" >&2; exit 1; }
  echo "start $ME $r $EPOCHREALTIME $out" >> "$LOG"
  echo "end $ME $r $EPOCHREALTIME" >> "$LOG"
  "$ENVGATE" lock release gstg --config "$CFG" --holder "$ME" > /dev/null \
    || { echo "$ME: release failed" >&2; exit 1; }
done
'''

CONFIG = '''version: 1
defaults:
  namespace: gitlab
  lock: { store: file, path: locks, on_failure: hold, order: oldest_first, wait_timeout: 5m }
environments:
  - name: gstg
'''


def epoch(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def run_workers(envgate, workdir, processes, rounds):
    cfg = os.path.join(workdir, "envgate.yml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    log = os.path.join(workdir, "critical.log")
    started = time.monotonic()
    procs = []
    for i in range(processes):
        env = dict(os.environ, ENVGATE=envgate, CFG=cfg, LOG=log, ME=f"w{i:02d}",
                   ROUNDS=str(rounds))
        err = open(os.path.join(workdir, f"w{i:02d}.err"), "w")
        procs.append(subprocess.Popen(["bash", "-c", WORKER], env=env, stderr=err))
    codes = [p.wait() for p in procs]
    for i, code in enumerate(codes):
        if code:
            sys.stdout.write(open(os.path.join(workdir, f"w{i:02d}.err")).read()[-2000:])
    elapsed = time.monotonic() - started
    return log, os.path.join(workdir, "locks", "gstg.json"), codes, elapsed


def parse_log(path):
    starts, ends = {}, {}
    for line in open(path):
        parts = line.split(" ", 4)
        key = (parts[1], int(parts[2]))
        if parts[0] == "start":
            m = re.search(r"first in the queue since (\S+)", parts[4])
            since = epoch(m.group(1)) if m else None
            starts[key] = (float(parts[3]), since)
        else:
            ends[key] = float(parts[3])
    return starts, ends


def check(starts, ends, record, processes, rounds):
    problems = []
    total = processes * rounds
    if len(starts) != total or len(ends) != total:
        problems.append(f"expected {total} critical sections, got {len(starts)}/{len(ends)}")
    order = sorted(starts, key=lambda k: starts[k][0])
    intervals = [(starts[k][0], ends.get(k, float("inf")), k) for k in order]
    overlaps = sum(1 for a, b in zip(intervals, intervals[1:]) if a[1] > b[0])
    if overlaps:
        problems.append(f"{overlaps} overlapping critical sections")
    queued = [starts[k][1] for k in order if starts[k][1] is not None]
    out_of_order = sum(1 for a, b in zip(queued, queued[1:]) if b <= a)
    if out_of_order:
        problems.append(f"{out_of_order} holders served out of arrival order")
    history = record["history"]
    if not history or history[-1]["seq"] != 2 * total:
        problems.append(f"history counts {history[-1]['seq'] if history else 0} transitions, "
                        f"expected {2 * total}")
    seqs = [h["seq"] for h in history]
    if seqs != list(range(seqs[0], seqs[0] + len(seqs))) or len(history) != 20:
        problems.append("history is not the last 20 consecutive transitions")
    expected = []
    for k in order[-10:]:
        expected += [("acquire", k[0]), ("release", k[0])]
    if [(h["what"], h["who"]) for h in history] != expected:
        problems.append("the last 20 history entries do not match the log")
    if record["state"] != "free" or record["waiters"]:
        problems.append("lock not free with an empty queue at the end")
    gaps = [b[0] - a[1] for a, b in zip(intervals, intervals[1:])]
    return problems, len(queued), gaps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--processes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="envgate-contention-") as workdir:
        log, lock_file, codes, elapsed = run_workers(os.path.abspath(a.envgate), workdir,
                                                      a.processes, a.rounds)
        if any(codes):
            print(f"FAIL: worker exit codes {codes}")
            return 1
        starts, ends = parse_log(log)
        record = json.load(open(lock_file))
        problems, queued, gaps = check(starts, ends, record, a.processes, a.rounds)
    total = a.processes * a.rounds
    gaps.sort()
    print(f"{a.processes} processes x {a.rounds} rounds: {total} critical sections "
          f"in {elapsed:.1f} s ({total / elapsed:.1f} handoffs/s); {queued} came from the queue")
    if gaps:
        print(f"handoff gap (one holder's end -> next start): median {gaps[len(gaps) // 2] * 1000:.0f} ms, "
              f"p95 {gaps[int(len(gaps) * 0.95)] * 1000:.0f} ms, max {gaps[-1] * 1000:.0f} ms")
    print(f"history: last seq {record['history'][-1]['seq']} (expected {2 * total}), "
          f"{len(record['history'])} entries kept")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("OK: no overlaps, arrival order kept, every transition counted")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
