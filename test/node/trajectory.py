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
Exit status 0 whatever the differences: the table is the result.
"""
import argparse
import json
import os
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
    "restart_limit": ("OnFailure", 1,
                      'echo "relation users missing"; sleep 0.5; echo "relation users missing" > "$KUBESIM_TERMINATION_LOG"; exit 7',
                      "", "OnFailure, backoffLimit 1, exits 7 every time"),
    "never": ("Never", 1,
              'echo inserting; sleep 0.3; echo "duplicate key" > "$KUBESIM_TERMINATION_LOG"; exit 4',
              "", "Never, backoffLimit 1, exits 4 every time"),
    "missing_secret": ("OnFailure", 2, 'echo migrated',
                       "            - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db-creds, key: password}}}\n",
                       "a Secret that does not exist (the Job is deleted after 8 s)"),
}


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
    rv = kubectl("get", "pods", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}").stdout
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
    ap.add_argument("cases", nargs="*", default=list(CASES))
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="envgate-traj.")
    os.chmod(d, 0o755)
    ns = "traj-" + os.urandom(4).hex()
    kubectl("create", "namespace", ns)
    md = [f"Kubelet {kubectl('get', 'node', a.kubelet, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}').stdout}"
          f" next to the node agent ({a.node_agent}); consecutive equal statuses are one step.\n"]
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
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
        shutil.rmtree(d, ignore_errors=True)
    text = "\n".join(md) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    sys.exit(main())
