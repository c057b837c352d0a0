#!/usr/bin/env python3
"""Pod status trajectories, node agent next to the real kubelet (issue 26's differential).

    trajectory.py --node-agent node-1 --kubelet node-kubelet [--markdown FILE] [CASE...]

Runs each case's Job once pinned to the control plane's node agent and once pinned to
the real kubelet (same script, same restart policy and limit), watches the Job's pods
from the API (a watch from the resourceVersion listed before the Job exists: no event
is missed), and reduces every status the watch delivers
to what envgate reads: phase, conditions, each container's state (reason, exit code),
restartCount, lastState.terminated and termination message. Consecutive equal statuses
are one step; timings are left out; the trajectory ends with the pods' deletion (the Job
is deleted once finished). Prints the two side by side per case, marking the steps that
differ. Needs KUBECONFIG (the control plane's admin); the temp dir it makes is mounted
into the kubelet's pods.

The two trajectories of a case must be the same step for step, except for the steps
EXPLAINED lists: those (on either side) are left out before comparing. Exit status 1,
naming the case and the first differing step, when they are not; 0 otherwise (the
table is written either way).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

CASES = {
    # name: (restartPolicy, backoffLimit, script, extra env yaml, description)
    "crashloop": ("OnFailure", 6,
                  'n=$(cat {dir}/{id}.count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {dir}/{id}.count\n'
                  'echo "run $n"; sleep 1\n'
                  'if [ $n -le 2 ]; then echo PG::LockNotAvailable > "$KUBESIM_TERMINATION_LOG"; exit 1; fi\n'
                  'echo migrated',
                  "", "OnFailure, fails twice (exit 1, a termination message), then passes"),
    # Run 2 lasts 2 s, longer than the Job controller's 1 s sync batching: the Job's
    # deletion comes while it runs (not a race with its end), within its grace period.
    "restart_limit": ("OnFailure", 1,
                      'n=$(cat {dir}/{id}.count 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {dir}/{id}.count\n'
                      'echo "relation users missing"; if [ $n -ge 2 ]; then sleep 2; else sleep 0.5; fi\n'
                      'echo "relation users missing" > "$KUBESIM_TERMINATION_LOG"; exit 7',
                      "", "OnFailure, backoffLimit 1, exits 7 every time (run 2 after 2 s, deleted while it runs)"),
    "never": ("Never", 1,
              'echo inserting; sleep 0.3; echo "duplicate key" > "$KUBESIM_TERMINATION_LOG"; exit 4',
              "", "Never, backoffLimit 1, exits 4 every time"),
    "missing_secret": ("OnFailure", 2, 'echo migrated',
                       "            - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db-creds, key: password}}}\n",
                       "a Secret that does not exist (the Job is deleted after 8 s)"),
}


# Steps that may appear on one side and not the other, each with why (timing of the real
# kubelet, not a behaviour the node agent lacks): (case or None for every case, regex on
# the step, reason). A matching step is left out of both sides before comparing.
EXPLAINED = [
    # The kubelet's pod worker syncs on a pod cache newer than its last sync
    # (pod_workers.go GetNewerThan), i.e. after the next PLEG relist (every 1 s): the
    # status it writes as a deleted pod starts terminating can show a container that
    # exited up to a second after the deletion. The node agent sees the deletion at once.
    ("restart_limit", r"^pod \d+: Running deleting \| ContainersReady=False\(ContainersNotReady\).* \| terminated:",
     "a run that ended within the kubelet's relist delay after the deletion (timing)"),
]


def explained(case, step):
    for c, pattern, why in EXPLAINED:
        if (c is None or c == case) and re.search(pattern, step):
            return why
    return None


def compare(case, agent, real):
    """The first unexplained difference between the two trajectories, or None."""
    a = [s for s in agent if not explained(case, s)]
    k = [s for s in real if not explained(case, s)]
    for i in range(max(len(a), len(k))):
        x = a[i] if i < len(a) else "(none)"
        y = k[i] if i < len(k) else "(none)"
        if x != y:
            return f"{case}: unexplained step {i + 1} (explained steps left out): node agent `{x}`, kubelet `{y}`"
    return None


def self_test():
    """compare() on made-up trajectories: it must flag what EXPLAINED does not cover."""
    ok = "pod 1: Running | Ready=True | running r=0 last=-"
    end = "pod 1: Failed | Ready=False(PodFailed) | terminated:Error:7 r=0 last=-"
    timing = "pod 1: Running deleting | ContainersReady=False(ContainersNotReady) | terminated:Error:7 r=1 last=-"
    checks = [
        (compare("never", [ok, end], [ok, end]) is None, "equal trajectories pass"),
        (compare("never", [ok, end], [ok]) is not None, "a missing step fails"),
        (compare("never", [ok, end], [ok, end.replace(":7", ":143")]) is not None, "a changed step fails"),
        (compare("restart_limit", [ok, end], [ok, timing, end]) is None, "an explained kubelet-only step passes"),
        (compare("never", [ok, end], [ok, timing, end]) is not None, "explained for another case only: fails"),
    ]
    bad = [what for passed, what in checks if not passed]
    for what in bad:
        print("FAIL self-test: " + what, file=sys.stderr)
    print(f"self-test: {len(checks) - len(bad)} of {len(checks)} checks hold")
    return 1 if bad else 0


def kubectl(*args, check=True, input=None):
    return subprocess.run(["kubectl", *args], check=check, capture_output=True, text=True, input=input)


def manifest(case, job, node, kubelet, d):
    policy, limit, script, env, _ = CASES[case]
    path = os.path.join(d, f"{job}.sh")
    with open(path, "w") as f:
        f.write(script.format(dir=d, id=job) + "\n")
    extra_env = "            - {name: KUBESIM_TERMINATION_LOG, value: /dev/termination-log}\n" if kubelet else ""
    volumes = (f"      volumes:\n        - {{name: tmp, hostPath: {{path: {d}, type: Directory}}}}\n" if kubelet else "")
    mounts = (f"          volumeMounts:\n            - {{name: tmp, mountPath: {d}}}\n" if kubelet else "")
    all_env = extra_env + env
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {job}
spec:
  backoffLimit: {limit}
  template:
    spec:
      restartPolicy: {policy}
      nodeName: {node}
      terminationGracePeriodSeconds: 2
{volumes}      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          command: ["sh", "{path}"]
{("          env:" + chr(10) + all_env) if all_env else ""}{mounts}"""


def state_of(s):
    if not s:
        return "-"
    if "waiting" in s:
        return "waiting:" + (s["waiting"].get("reason") or "")
    if "running" in s:
        return "running"
    if "terminated" in s:
        t = s["terminated"]
        msg = (t.get("message") or "").strip()
        return f"terminated:{t.get('reason')}:{t.get('exitCode')}" + (f":{msg[:40]}" if msg else "")
    return "?"


def reduce(pod):
    st = pod.get("status", {})
    conds = ",".join(f"{c['type']}={c['status']}" + (f"({c['reason']})" if c.get("reason") else "")
                     for c in sorted(st.get("conditions", []), key=lambda c: c["type"]))
    cs = []
    for c in st.get("containerStatuses", []) or []:
        cs.append(f"{state_of(c.get('state'))} r={c.get('restartCount')} last={state_of(c.get('lastState'))}")
    reason = st.get("reason")
    deleting = " deleting" if pod["metadata"].get("deletionTimestamp") else ""
    return f"{st.get('phase')}{('/' + reason) if reason else ''}{deleting} | {conds} | {'; '.join(cs) or '-'}"


def run_case(case, node, kubelet, ns, d):
    job = f"{case.replace('_', '-')}-{'k' if kubelet else 'a'}"
    # Watch from the list's resourceVersion taken before the Job exists: no event is missed.
    # (The server's list, raw: kubectl's own `get -o jsonpath` of a list has no
    # resourceVersion, and a watch from "" starts whenever it connects.)
    rv = json.loads(kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/pods?limit=1").stdout)["metadata"]["resourceVersion"]
    if not rv:
        raise SystemExit("no resourceVersion in the pod list: the watch could miss events")
    watch = subprocess.Popen(["kubectl", "get", "--raw", f"/api/v1/namespaces/{ns}/pods?watch=1"
                              f"&resourceVersion={rv}&labelSelector=job-name%3D{job}"],
                             stdout=subprocess.PIPE, text=True)
    events = []
    reader = threading.Thread(target=lambda: events.extend(json.loads(l) for l in watch.stdout if l.strip()))
    reader.start()
    kubectl("apply", "-n", ns, "-f", "-", input=manifest(case, job, node, kubelet, d))
    deadline = time.time() + (8 if case == "missing_secret" else 90)
    while time.time() < deadline:
        j = json.loads(kubectl("get", "job", "-n", ns, job, "-o", "json").stdout)
        if any(c["status"] == "True" and c["type"] in ("Complete", "Failed")
               for c in j.get("status", {}).get("conditions", [])):
            break
        time.sleep(0.2)
    # Then the Job goes, and its pods with it: the trajectory ends with their deletion.
    kubectl("delete", "job", "-n", ns, job, "--cascade=background", "--wait=false", check=False)
    deadline = time.time() + 60
    while time.time() < deadline:
        if not kubectl("get", "pods", "-n", ns, "-l", f"job-name={job}", "-o", "name").stdout.strip():
            break
        time.sleep(0.2)
    watch.terminate()
    reader.join()
    per_pod, order = {}, []
    for ev in events:
        pod = ev["object"]
        name = pod["metadata"]["name"]
        if name not in per_pod:
            per_pod[name] = []
            order.append(name)
        r = ("DELETED " if ev["type"] == "DELETED" else "") + reduce(pod)
        if not per_pod[name] or per_pod[name][-1] != r:
            per_pod[name].append(r)
    steps = []
    for k, name in enumerate(order):
        steps += [f"pod {k + 1}: {s}" for s in per_pod[name]]
    return steps


def md_cell(v):
    """A table cell: code, its pipes escaped (GitHub/GitLab tables split on them)."""
    return "`" + v.replace("|", "\\|") + "`" if v else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-agent", default="node-1")
    ap.add_argument("--kubelet", default="node-kubelet")
    ap.add_argument("--markdown")
    ap.add_argument("--self-test", action="store_true", help="check the comparison alone (no cluster)")
    ap.add_argument("cases", nargs="*", default=list(CASES))
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    d = tempfile.mkdtemp(prefix="envgate-traj.")
    os.chmod(d, 0o755)
    ns = "traj-" + os.urandom(4).hex()
    kubectl("create", "namespace", ns)
    md = [f"Kubelet {kubectl('get', 'node', a.kubelet, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}').stdout}"
          f" next to the node agent ({a.node_agent}); consecutive equal statuses are one step.\n"]
    failures = []
    try:
        for case in a.cases:
            agent = run_case(case, a.node_agent, False, ns, d)
            real = run_case(case, a.kubelet, True, ns, d)
            md.append(f"\n#### {case}: {CASES[case][4]}\n")
            md.append("| step | node agent | kubelet |\n|---|---|---|")
            for i in range(max(len(agent), len(real))):
                x = agent[i] if i < len(agent) else ""
                y = real[i] if i < len(real) else ""
                mark = "" if x == y else " **≠**"
                md.append(f"| {i + 1}{mark} | {md_cell(x)} | {md_cell(y)} |")
            seen = sorted({w for s in agent + real if (w := explained(case, s))})
            if seen:
                md.append("\nLeft out as explained: " + "; ".join(seen) + ".")
            why = compare(case, agent, real)
            md.append(f"\n**{'DIFFERENT: ' + why if why else 'same steps'}**")
            if why:
                failures.append(why)
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
        shutil.rmtree(d, ignore_errors=True)
    text = "\n".join(md) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    for why in failures:
        print("FAIL " + why, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
