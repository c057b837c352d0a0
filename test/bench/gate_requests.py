#!/usr/bin/env python3
"""API requests of `envgate gate` on the real control plane: watching next to 5 s polling.

Starts a private control plane (test/controlplane/run.sh start BIN DIR) and two counting
proxies in front of its API server (plain HTTP in, the API server's HTTPS out, the same
bearer token):
  watch  forwards everything, watch streams included;
  poll   answers every watch request 500, so envgate's reflectors fall back to polling
         every --poll-interval (default 5s) after 3 failed watches (runner/kube/reflector.h);
         those refused watches never reach the API server and are not counted.
Each proxy counts the requests it forwards, by "verb resource" (verb as the API server's
metrics name it: get, list, watch, create, patch, update, delete), stamped on arrival.
Both modes run at once, side by side, on the same Jobs:

  quiet   --gates gates per mode wait on Jobs that sleep; once every gate printed its
          `running` line, the requests of the next --quiet-minutes are counted
          (requests per gate-hour = count / gates / hours). Then SIGTERM.
  crash   --gates gates per mode on Jobs (restartPolicy --restart-policy, default Never;
          backoffLimit --backoff-limit) whose every run fails after --run-seconds;
          counted over each gate's whole life (create to exit). Per failed run =
          requests / failed runs (Never: the Jobs' status.failed; OnFailure: backoffLimit
          per Job, the restarts the controller counts). Each gate must exit 1 having
          reported every attempt.

Cross-check: the API server's own counter, apiserver_request_total from /metrics, for
the series only envgate touches here (verbs get/list/watch/patch of jobs and list/watch
of pods without subresource; create of events.k8s.io events), read before and
after each scenario. It counts a watch when the watch ends, the proxies when it starts,
and the control plane's own components add a little (their informers).

Prints figures for test/bench/RESULTS.md; exits 1 only if a gate misbehaves (wrong exit
code, a missing attempt), never because the machine is slow.

Usage: gate_requests.py --envgate PATH --controlplane PATH [--gates 4]
         [--quiet-minutes 12] [--run-seconds 4] [--backoff-limit 5] [--poll-interval 5s]
         [--restart-policy Never|OnFailure] [--restart-backoff DURATION]
         [--scenario quiet|crash|both] [--keep] [--logs DIR]
"""
import argparse
import base64
import http.client
import http.server
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

for _name in [k for k in os.environ if k == "CI" or k.startswith(("CI_", "GITLAB_"))]:
    del os.environ[_name]
os.environ["NO_COLOR"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_SH = os.path.join(HERE, "..", "controlplane", "run.sh")
METHOD_VERB = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
ENVGATE_SERIES = {"get jobs", "list jobs", "watch jobs", "patch jobs", "list pods", "watch pods",
                  "create events.events.k8s.io"}


def classify(method, target):
    """("verb", "resource") of a request, as the API server's metrics label it."""
    url = urllib.parse.urlsplit(target)
    query = urllib.parse.parse_qs(url.query)
    parts = [p for p in url.path.split("/") if p]
    # /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] or /apis/GROUP/VERSION/...
    rest = parts[2:] if parts[:1] == ["api"] else parts[3:]
    group = "" if parts[:1] == ["api"] else (parts[1] if len(parts) > 1 else "")
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    resource = rest[0] if rest else "?"
    if len(rest) >= 3:
        resource += "/" + rest[2]
    if group and group not in ("batch", "coordination.k8s.io"):
        resource += "." + group
    if method == "GET":
        watching = query.get("watch", [""])[0] in ("true", "1")
        verb = "watch" if watching else ("get" if len(rest) >= 2 else "list")
    else:
        verb = METHOD_VERB.get(method, method.lower())
    return verb, resource


class Proxy:
    """A counting HTTP proxy to the API server; refuse_watch answers watches 500."""

    def __init__(self, upstream_port, ssl_ctx, refuse_watch):
        self.upstream_port, self.ssl_ctx, self.refuse_watch = upstream_port, ssl_ctx, refuse_watch
        self.lock = threading.Lock()
        self.log = []  # (monotonic time, "verb resource")
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                verb, resource = classify(self.command, self.path)
                if verb == "watch" and proxy.refuse_watch:
                    data = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                       "code": 500, "message": "watch refused by the bench"})
                    self.send_response(500)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data.encode())
                    return
                with proxy.lock:
                    proxy.log.append((time.monotonic(), f"{verb} {resource}"))
                up = http.client.HTTPSConnection("127.0.0.1", proxy.upstream_port,
                                                 context=proxy.ssl_ctx, timeout=None)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "accept-encoding")}
                up.request(self.command, self.path, body, headers)
                resp = up.getresponse()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                if verb != "watch":
                    data = resp.read()
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    up.close()
                    return
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while chunk := resp.read1(65536):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (OSError, http.client.HTTPException, ValueError):
                    self.close_connection = True  # envgate ended the watch, or the server
                finally:
                    up.close()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def counts(self, since=0.0, until=float("inf")):
        out = {}
        with self.lock:
            for t, key in self.log:
                if since <= t < until:
                    out[key] = out.get(key, 0) + 1
        return out


class ControlPlane:
    def __init__(self, binary, state, flags=()):
        self.binary, self.state = binary, state
        subprocess.run([RUN_SH, "start", binary, state, *flags], check=True, stdout=sys.stderr)
        text = open(os.path.join(state, "kubeconfig")).read()
        self.kubeconfig = os.path.join(state, "kubeconfig")
        self.port = int(re.search(r"server: https://127\.0\.0\.1:(\d+)", text).group(1))
        ca = base64.b64decode(re.search(r"certificate-authority-data: (\S+)", text).group(1))
        self.token = re.search(r"token: (\S+)", text).group(1)
        self.ctx = ssl.create_default_context(cadata=ca.decode())

    def request(self, method, path, body=None):
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=60)
        conn.request(method, path, json.dumps(body) if body is not None else None,
                     {"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, data

    def metrics(self):
        """apiserver_request_total of jobs, pods and events by "verb resource[.group]"."""
        _, text = self.request("GET", "/metrics")
        out = {}
        for line in text.decode().splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
            if labels.get("resource") not in ("jobs", "pods", "events") or labels.get("subresource"):
                continue
            group = labels.get("group", "")
            verb = {"POST": "create", "PUT": "update"}.get(labels["verb"], labels["verb"].lower())
            key = f"{verb} {labels['resource']}"
            key += f".{group}" if group not in ("", "batch") else ""
            out[key] = out.get(key, 0) + int(float(line.rsplit(" ", 1)[1]))
        return out

    def proxy_kubeconfig(self, path, port):
        open(path, "w").write(f"""apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster: {{server: "http://127.0.0.1:{port}"}}
users:
- name: admin
  user: {{token: "{self.token}"}}
contexts:
- name: bench
  context: {{cluster: bench, user: admin}}
current-context: bench
""")
        os.chmod(path, 0o600)

    def job(self, ns, name):
        code, data = self.request("GET", f"/apis/batch/v1/namespaces/{ns}/jobs/{name}")
        return json.loads(data) if code == 200 else None

    def stop(self):
        subprocess.run([RUN_SH, "stop", self.binary, self.state], stdout=sys.stderr)


def manifest(path, name, limit, script, policy="Never"):
    json.dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
               "spec": {"backoffLimit": limit, "template": {"spec": {
                   "restartPolicy": policy,
                   "containers": [{"name": "migrations", "image": "registry.example.com/m:1",
                                   "command": ["sh", "-c", script]}]}}}}, open(path, "w"))


class Gate:
    """One `envgate gate` process; its stdout lines stamped on receipt."""

    def __init__(self, args, work, mode, kubeconfig, ns, name, limit, script, policy="Never"):
        self.mode, self.ns, self.name, self.job = mode, ns, name, None
        path = os.path.join(work, f"{name}.json")
        manifest(path, name, limit, script, policy)
        self.lines, self.running = [], threading.Event()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [args.envgate, "gate", "--env", "e1", "--gate", "pre-migrations", "--manifest", path,
             "--namespace", ns, "--report-dir", os.path.join(work, name + "-report"),
             "--kubeconfig", kubeconfig, "--poll-interval", args.poll_interval,
             "--timeout", "2h"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))
            if m := re.search(r"created Job [^/\s]+/(\S+)", line):
                self.job = m.group(1)
            if line.startswith("pre-migrations: running"):
                self.running.set()

    def wait(self, timeout):
        rc = self.proc.wait(timeout=timeout)
        self.ended = time.monotonic()
        return rc


def create_namespace(cp, ns):
    code, _ = cp.request("POST", "/api/v1/namespaces",
                         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert code in (201, 409), code


def per_series(counts):
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))


def envgate_series(delta):
    return {k: v for k, v in delta.items() if k in ENVGATE_SERIES and v}


def quiet(args, cp, proxies, work):
    before, start = cp.metrics(), time.monotonic()
    gates = []
    for mode, (proxy, kubeconfig) in proxies.items():
        ns = f"quiet-{mode}"
        create_namespace(cp, ns)
        for i in range(args.gates):
            gates.append(Gate(args, work, mode, kubeconfig, ns, f"quiet-{i}", 0, "sleep 100000"))
    for g in gates:
        if not g.running.wait(120):
            sys.exit(f"gate {g.mode}/{g.name} not running after 120 s: {g.lines}")
    t0 = time.monotonic()
    time.sleep(args.quiet_minutes * 60)
    t1 = time.monotonic()
    for g in gates:
        g.proc.send_signal(signal.SIGTERM)
    for g in gates:
        g.wait(60)
    delta = {k: v - before.get(k, 0) for k, v in cp.metrics().items()}
    hours = (t1 - t0) / 3600 * args.gates
    print(f"\nquiet: {args.gates} gates per mode, counted for {(t1 - t0) / 60:.1f} min "
          f"after all were running ({hours:.2f} gate-hours per mode)")
    print("| mode | requests per gate-hour | requests in the window | whole life, per gate |")
    print("|---|---|---|---|")
    for mode, (proxy, _) in proxies.items():
        window = proxy.counts(t0, t1)
        life = sum(proxy.counts(start).values())
        print(f"| {mode} | {sum(window.values()) / hours:.1f} | {per_series(window) or 'none'} "
              f"| {life / args.gates:.1f} |")
    print(f"apiserver_request_total, envgate's series, whole scenario: "
          f"{per_series(envgate_series(delta))}")


def crash(args, cp, proxies, work):
    before = cp.metrics()
    gates = []
    script = f"sleep {args.run_seconds}; echo 'PG::LockNotAvailable'; exit 1"
    for mode, (proxy, kubeconfig) in proxies.items():
        ns = f"crash-{mode}"
        create_namespace(cp, ns)
        for i in range(args.gates):
            gates.append(Gate(args, work, mode, kubeconfig, ns, f"crash-{i}", args.backoff_limit,
                              script, args.restart_policy))
    bad = []
    for g in gates:
        rc = g.wait(600)
        if args.logs:
            os.makedirs(args.logs, exist_ok=True)
            with open(os.path.join(args.logs, f"{g.mode}-{g.name}.log"), "w") as f:
                f.write("\n".join(g.lines) + "\n")
        retries = sum(1 for line in g.lines if line.startswith("pre-migrations: retrying"))
        # Never: backoffLimit + 1 failed pods. OnFailure: the Job fails when the restarts
        # reach backoffLimit, so that many failed runs (the controller then stops the pod).
        never = args.restart_policy == "Never"
        runs = args.backoff_limit + 1 if never else args.backoff_limit
        last = f"(pod {runs} of {runs} failed, 0 left)" if never else \
            f"(attempt {runs} of {runs} failed, 0 left"
        # The last failed run may show as retrying before the Job's Failed condition; a
        # poll may see two runs fail at once (one line, an event for each).
        lines_ok = retries in (runs - 1, runs) or (g.mode == "poll" and 0 < retries < runs)
        if rc != 1 or not lines_ok or not any(last in x for x in g.lines):
            bad.append(f"{g.mode}/{g.name}: exit {rc}, {retries} retry lines, "
                       f"{'a' if any(last in x for x in g.lines) else 'no'} final count: "
                       + " / ".join(g.lines[-3:]))
    delta = {k: v - before.get(k, 0) for k, v in cp.metrics().items()}
    print(f"\ncrash loop: {args.gates} gates per mode, restartPolicy {args.restart_policy}, "
          f"backoffLimit "
          f"{args.backoff_limit}, each run fails after {args.run_seconds} s")
    print("| mode | requests per failed run | per gate | gate wall time (s, mean) "
          "| failed runs | requests by series |")
    print("|---|---|---|---|---|---|")
    for mode, (proxy, _) in proxies.items():
        mine = [g for g in gates if g.mode == mode]
        since = min(g.started for g in mine)
        counts = proxy.counts(since)
        if args.restart_policy == "Never":
            failed = sum((cp.job(g.ns, g.job) or {}).get("status", {}).get("failed", 0)
                         for g in mine)
        else:  # one pod, restarted in place: its failed runs are the restarts counted
            failed = args.backoff_limit * len(mine)
        total = sum(counts.values())
        wall = sum(g.ended - g.started for g in mine) / len(mine)
        print(f"| {mode} | {total / max(failed, 1):.2f} | {total / len(mine):.1f} | {wall:.1f} "
              f"| {failed} | {per_series(counts)} |")
    print(f"apiserver_request_total, envgate's series, whole scenario: "
          f"{per_series(envgate_series(delta))}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envgate", required=True)
    ap.add_argument("--controlplane", required=True)
    ap.add_argument("--gates", type=int, default=4)
    ap.add_argument("--quiet-minutes", type=float, default=12)
    ap.add_argument("--run-seconds", type=float, default=4)
    ap.add_argument("--backoff-limit", type=int, default=5)
    ap.add_argument("--restart-policy", choices=["Never", "OnFailure"], default="Never")
    ap.add_argument("--poll-interval", default="5s")
    ap.add_argument("--restart-backoff", metavar="DURATION",
                    help="the node agent's first crash-loop back-off (its default 100ms; "
                         "the kubelet's is 10s, past the Job controller's 1s batch)")
    ap.add_argument("--scenario", choices=["quiet", "crash", "both"], default="both")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--logs", metavar="DIR", help="write each crash gate's output to DIR")
    args = ap.parse_args()
    args.envgate = os.path.abspath(args.envgate)
    work = tempfile.mkdtemp(prefix="gate-requests-")
    flags = [f"--container-restart-backoff={args.restart_backoff}"] if args.restart_backoff else []
    cp = ControlPlane(os.path.abspath(args.controlplane), os.path.join(work, "controlplane"), flags)
    bad = []
    try:
        proxies = {}
        for mode, refuse in (("watch", False), ("poll", True)):
            proxy = Proxy(cp.port, cp.ctx, refuse)
            kubeconfig = os.path.join(work, f"kubeconfig-{mode}")
            cp.proxy_kubeconfig(kubeconfig, proxy.port)
            proxies[mode] = (proxy, kubeconfig)
        print(f"envgate {subprocess.run([args.envgate, '--version'], capture_output=True, text=True).stdout.strip()}"
              f"; poll interval {args.poll_interval}"
              f"; container restart back-off {args.restart_backoff or '100ms (default)'}")
        if args.scenario in ("crash", "both"):
            bad += crash(args, cp, proxies, work)
        if args.scenario in ("quiet", "both"):
            quiet(args, cp, proxies, work)
    finally:
        cp.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")
    if bad:
        print("misbehaving gates:\n  " + "\n  ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
