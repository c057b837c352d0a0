#!/usr/bin/env python3
"""`envgate lint` throughput next to real readers of the same files doing no checks.

Generates --count manifests (default 10,000, about 50 MB) into --cache-dir once:
rendered-chart-shaped Deployments, StatefulSets, Jobs, CronJobs, ConfigMaps with
entrypoint scripts and Service + HPA streams, one in ten with a migration on its
start-up path. Then times, interleaved, --runs times each (after one warm-up):
  envgate lint        envgate lint DIR --output json --fail-on never
  PyYAML (libyaml)    yaml.load_all(..., Loader=yaml.CSafeLoader) over every file
  PyYAML (Python)     yaml.safe_load_all over every file (the pure-Python loader)
  yq                  Debian's yq (PyYAML + jq): yq -c . FILE... in batches of 500
and prints the medians and each ratio envgate / reader as a Markdown table. Checks
that envgate read every file and found the planted migrations (exit 1 otherwise).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

ENV_NAMES = ["RAILS_ENV", "LOG_LEVEL", "REDIS_URL", "PORT", "WORKERS", "TZ", "LANG",
             "FEATURE_FLAGS", "OTEL_EXPORTER_OTLP_ENDPOINT", "SENTRY_ENVIRONMENT",
             "CACHE_TTL", "HTTP_TIMEOUT", "MAX_CONNECTIONS", "REGION", "RELEASE",
             "DB_POOL", "STATSD_HOST", "GRPC_PORT"]


def labels(name, i):
    return (f"    app.kubernetes.io/name: {name}\n    app.kubernetes.io/instance: rel-{i}\n"
            f"    app.kubernetes.io/version: \"1.{i % 50}.{i % 7}\"\n"
            f"    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: {name}-0.{i % 30}.0\n")


def container(name, i, command, pad):
    env = "".join(f"            - name: {n}\n              value: \"{n.lower()}-{i}-{pad}\"\n"
                  for n in ENV_NAMES)
    return f"""        - name: {name}
          image: "registry.example.com/team-{i % 40}/{name}:{i % 97}.{i % 13}.0"
          imagePullPolicy: IfNotPresent
          command: {command}
          ports:
            - name: http
              containerPort: 8080
              protocol: TCP
          env:
{env}          resources:
            requests: {{cpu: 100m, memory: 256Mi}}
            limits: {{cpu: "1", memory: 1Gi}}
          readinessProbe:
            httpGet: {{path: /ready, port: http}}
            periodSeconds: 5
            failureThreshold: 3
          livenessProbe:
            httpGet: {{path: /live, port: http}}
            periodSeconds: 10
          volumeMounts:
            - name: config
              mountPath: /etc/app
"""


def deployment(i, kind="Deployment"):
    migrate = i % 10 == 0
    cmd = ('["sh", "-c", "bundle exec rails db:migrate && exec bundle exec puma"]' if migrate
           else '["bundle", "exec", "puma", "-C", "config/puma.rb"]')
    name = f"svc-{i}"
    return f"""# Source: {name}/templates/deployment.yaml
apiVersion: apps/v1
kind: {kind}
metadata:
  name: {name}
  namespace: ns-{i % 25}
  labels:
{labels(name, i)}  annotations:
    meta.helm.sh/release-name: rel-{i}
    checksum/config: "{i * 7919:064x}"
spec:
  replicas: {1 + i % 4}
  selector:
    matchLabels:
      app.kubernetes.io/name: {name}
  template:
    metadata:
      labels:
{labels(name, i).replace("    ", "        ", 5)}    spec:
      serviceAccountName: {name}
      securityContext: {{runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000}}
      containers:
{container("app", i, cmd, "a")}{container("worker", i, '["bundle", "exec", "sidekiq"]', "b")}      volumes:
        - name: config
          configMap:
            name: {name}-config
"""


def job(i):
    name = f"svc-{i}-migrate"
    return f"""# Source: svc-{i}/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels:
{labels(name, i)}  annotations:
    helm.sh/hook: pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  backoffLimit: {i % 8}
  activeDeadlineSeconds: 1800
  template:
    spec:
      restartPolicy: Never
      containers:
{container("migrate", i, '["bundle", "exec", "rails", "db:migrate"]', "m")}"""


def config_map(i):
    script = "\n".join(f"    echo step {k} for svc-{i}" for k in range(80))
    data = "\n".join(f"  key-{k}.conf: \"setting-{k} = {i * k}\"" for k in range(150))
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: svc-{i}-config
  namespace: ns-{i % 25}
data:
  entrypoint.sh: |
    #!/bin/sh
{script}
    exec ./server
{data}
"""


def service_hpa(i):
    return f"""apiVersion: v1
kind: Service
metadata:
  name: svc-{i}
  labels:
{labels(f"svc-{i}", i)}spec:
  ports:
    - {{name: http, port: 80, targetPort: http}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: svc-{i - 1}
  namespace: ns-{(i - 1) % 25}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: svc-{i - 1}}}
  minReplicas: 2
  maxReplicas: 10
---
{deployment(i)}"""


def cron_job(i):
    return f"""apiVersion: batch/v1
kind: CronJob
metadata:
  name: svc-{i}-report
spec:
  schedule: "0 {i % 24} * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
{container("report", i, '["bundle", "exec", "rake", "reports:daily"]', "r").replace("        ", "            ", 1)}"""


def generate(directory, count):
    makers = [deployment] * 10 + [job] * 3 + [config_map] * 2 + [service_hpa] * 3 + [cron_job] + \
        [lambda i: deployment(i, "StatefulSet")]
    rng = random.Random(14)
    planted = 0
    total = 0
    for i in range(count):
        make = makers[rng.randrange(len(makers))]
        text = make(i)
        planted += text.count("rails db:migrate && exec")
        sub = os.path.join(directory, f"chart-{i % 100:03d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"m-{i:05d}.yaml"), "w") as f:
            f.write(text)
        total += len(text)
    with open(os.path.join(directory, ".stats"), "w") as f:
        json.dump({"count": count, "bytes": total, "planted": planted}, f)


def files_of(directory):
    out = []
    for root, dirs, names in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        out += [os.path.join(root, n) for n in names if n.endswith(".yaml")]
    return sorted(out)


READER = """
import sys, yaml
loader = getattr(yaml, sys.argv[1])
n = 0
for path in sys.argv[2:]:
    with open(path) as f:
        for doc in yaml.load_all(f, Loader=loader):
            n += 1
print(n)
"""


def timed(argv, stdin=None):
    start = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=stdin)
    return time.perf_counter() - start, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envgate", default="build/runner/envgate")
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cache-dir", default="build/lint-bench-corpus")
    ap.add_argument("--no-pure-python", action="store_true", help="skip the slow pure-Python peer")
    a = ap.parse_args()
    stats_path = os.path.join(a.cache_dir, ".stats")
    if not os.path.exists(stats_path) or json.load(open(stats_path))["count"] != a.count:
        os.makedirs(a.cache_dir, exist_ok=True)
        generate(a.cache_dir, a.count)
    stats = json.load(open(stats_path))
    files = files_of(a.cache_dir)
    batches = [files[k:k + 500] for k in range(0, len(files), 500)]

    def lint():
        t, p = timed([a.envgate, "lint", a.cache_dir, "--output", "json", "--fail-on", "never"])
        if p.returncode != 0:
            sys.exit(f"envgate lint failed ({p.returncode}): {p.stderr.decode()[:500]}")
        s = json.loads(p.stdout)
        found = sum(1 for f in s["findings"] if f["check"] == "migrate-in-start-command")
        if s["summary"]["inputs"] != len(files) or found != stats["planted"]:
            sys.exit(f"envgate lint read {s['summary']['inputs']} of {len(files)} files, found "
                     f"{found} of {stats['planted']} planted migrations")
        return t

    def pyyaml(loader):
        def run():
            t, p = timed([sys.executable, "-c", READER, loader] + files)
            if p.returncode != 0:
                sys.exit(f"PyYAML reader failed: {p.stderr.decode()[:500]}")
            return t
        return run

    def yq():
        total = 0.0
        for b in batches:
            t, p = timed(["yq", "-c", "."] + b)
            if p.returncode != 0:
                sys.exit(f"yq failed: {p.stderr.decode()[:500]}")
            total += t
        return total

    contenders = [("envgate lint", lint), ("PyYAML CSafeLoader (libyaml)", pyyaml("CSafeLoader")),
                  ("yq (Debian, PyYAML + jq)", yq)]
    if not a.no_pure_python:
        contenders.append(("PyYAML safe_load_all (pure Python)", pyyaml("SafeLoader")))
    times = {name: [] for name, _ in contenders}
    for name, run in contenders:
        run()  # warm the page cache and the loader
    for _ in range(a.runs):
        for name, run in contenders:
            times[name].append(run())
    base = statistics.median(times["envgate lint"])
    print(f"{len(files)} files, {stats['bytes'] / 1e6:.1f} MB, {stats['planted']} planted "
          f"migrations; medians of {a.runs} interleaved runs\n")
    print("| reader | median | MB/s | envgate lint / reader |")
    print("|---|---|---|---|")
    for name, _ in contenders:
        m = statistics.median(times[name])
        print(f"| {name} | {m:.2f} s | {stats['bytes'] / 1e6 / m:.1f} | {base / m:.2f} |")


if __name__ == "__main__":
    main()
