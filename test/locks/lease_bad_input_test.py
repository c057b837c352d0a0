#!/usr/bin/env python3
"""Bad Leases against a real kubesim (or the real API server of the control plane, with
ENVGATE_TEST_CLUSTER=controlplane), through the real envgate binary.

Given a Lease envgate wrote whose envgate.dev/record annotation is then corrupted, and
a Lease another program made under envgate's name (a holderIdentity, no annotation),
then every lock command that writes (acquire, release, fail, unlock) exits 2 naming
namespace/Lease and what is wrong, and the Lease's resourceVersion does not move;
`status` shows both UNREADABLE and still lists `qa`; `unlock` prints kubectl commands,
and running exactly those (with real kubectl) frees the lock for the next acquire.

Usage: lease_bad_input_test.py --envgate PATH --kubesim PATH
"""
import argparse
import os
import shlex
import subprocess
import sys
import tempfile

# Run outside CI even in a CI run of the suite: `unlock` here is an operator's, allowed by
# lock.local_unlock, not a CI job's (which GitLab would have to vouch for).
for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lease_contention import NS, LEASES, cluster  # noqa: E402  (also drops CI_* variables)

CONFIG = f'''version: 1
defaults:
  namespace: gitlab
  lock: {{ store: kubernetes, namespace: {NS}, on_failure: hold, local_unlock: true }}
environments:
  - name: gstg
  - name: gprd
'''

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(envgate, cfg, env, *args):
    p = subprocess.run([envgate, *args, "--config", cfg], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def version(sim, lock):
    code, lease = sim.request("GET", f"{LEASES}/envgate-{lock}")
    assert code == 200, f"no Lease envgate-{lock}"
    return lease["metadata"]["resourceVersion"]


def every_write_refused(envgate, cfg, env, sim, lock, want):
    before = version(sim, lock)
    for args in (["lock", "acquire", lock, "--holder", "p1", "--no-wait"],
                 ["lock", "release", lock, "--holder", "p1"],
                 ["lock", "fail", lock, "--holder", "p1", "--reason", "Failed"],
                 ["unlock", lock, "--reason", "stuck"]):
        code, _, err = run(envgate, cfg, env, *args)
        check(code == 2 and f"Lease {NS}/envgate-{lock}: " in err and want in err,
              f"{' '.join(args[:2])} {lock}: exit 2 naming the Lease and '{want}' "
              f"(got {code}: {err.strip()[:300]})")
    check(version(sim, lock) == before, f"Lease envgate-{lock} resourceVersion unchanged")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--kubesim", required=True)
    a = ap.parse_args()
    envgate = os.path.abspath(a.envgate)
    with tempfile.TemporaryDirectory() as d:
        sim = cluster(a.kubesim, d)
        try:
            cfg = os.path.join(d, "envgate.yml")
            open(cfg, "w").write(CONFIG)
            env = dict(os.environ, KUBECONFIG=sim.kubeconfig)
            code, _, err = run(envgate, cfg, env, "lock", "acquire", "gstg", "--holder", "p1")
            assert code == 0, err
            code, lease = sim.request("GET", f"{LEASES}/envgate-gstg")
            lease["metadata"]["annotations"]["envgate.dev/record"] = '{"schema": "envgate.dev/lo'
            code, _ = sim.request("PUT", f"{LEASES}/envgate-gstg", lease)
            assert code == 200, code
            every_write_refused(envgate, cfg, env, sim, "gstg",
                                "annotation envgate.dev/record: not JSON")
            foreign = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "envgate-gprd", "namespace": NS},
                       "spec": {"holderIdentity": "other-controller-7f9c",
                                "leaseDurationSeconds": 15}}
            code, _ = sim.request("POST", LEASES, foreign)
            assert code == 201, code
            every_write_refused(envgate, cfg, env, sim, "gprd", "not made by envgate")

            code, out, _ = run(envgate, cfg, env, "status")
            check(code == 4 and "gstg  UNREADABLE" in out and "gprd  UNREADABLE" in out
                  and "\nqa  FREE" in out, f"status: both UNREADABLE, qa listed, exit 4 ({code})")

            code, _, err = run(envgate, cfg, env, "unlock", "gstg", "--reason", "corrupt")
            commands = [l.strip() for l in err.splitlines() if l.startswith("    kubectl ")]
            check(len(commands) == 3, f"unlock prints kubectl commands: {commands}")
            for c in commands[1:]:  # save a copy, then delete: what an SRE would run
                command, _, target = c.partition(" > ")
                out_file = os.path.join(d, target or "delete.txt")
                with open(out_file, "w") as sink:
                    p = subprocess.run(shlex.split(command), stdout=sink, stderr=subprocess.PIPE,
                                       text=True, env=env, cwd=d)
                check(p.returncode == 0, f"`{c}` runs ({p.stderr.strip()})")
            saved = os.path.join(d, "envgate-gstg.yaml")
            check(os.path.exists(saved) and "envgate.dev/record" in open(saved).read(),
                  "the saved copy holds the corrupt annotation")
            code, _, err = run(envgate, cfg, env, "lock", "acquire", "gstg", "--holder", "p2")
            check(code == 0, f"after the printed commands, acquire takes gstg ({err.strip()})")
        finally:
            sim.stop()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
