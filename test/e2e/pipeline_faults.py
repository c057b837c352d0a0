#!/usr/bin/env python3
"""The pipeline fault suite: the child pipeline `envgate generate` writes (jobs: split
and jobs: run), its jobs run as GitLab runs them, with faults injected into each job.

Usage: pipeline_faults.py ENVGATE WORK_DIR NAMESPACE STORE [--trials N] [--table FILE]

The failure paths run in gitlab-ci-local too (test/generate/gitlab_ci_local_split_test.sh);
here the driver runs each job's script itself, because a fault must hit one job's own
process group at a chosen moment (in its gate or step), and after_script must follow
GitLab 17's rules, not a local runner's.

GitLab's rules that the driver follows (ci-templates/README.md, "Pipeline semantics"):
* the jobs of one environment run one after the other (`needs:` chains them); a job that
  fails or is cancelled skips every later job of the chain;
* the `when: on_failure` job is NOT run: whether GitLab runs it when a job it needs was
  skipped has changed over its versions, so the lock must not depend on it;
* `after_script` runs after a failed job and after a cancelled running job (GitLab 17.0
  and later; CI_JOB_STATUS=canceled since Runner 17.1), never after a runner was killed;
* a cancel sends SIGTERM to the job's process group (the shell executor, as the Runner's
  graceful termination does) and runs after_script once that group is gone; a killed
  runner is SIGKILL of that group, a paused runner SIGSTOP of it.

Every step and gate run writes timestamped lines to one shared file (the deploy step
beats every 20 ms), so the overlap of two pipelines' mutating work is measured from the
steps' own words. Prints one row per scenario and fails (exit 1) on any broken promise.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import yaml

LEASE_S = 2  # lease_duration of the environment (every case of the suite waits on it)


def now_ns():
    return time.time_ns()


def group_gone(pgid, secs):
    """Waits until no process of group `pgid` is left (at most `secs`)."""
    end = time.time() + secs
    while time.time() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


class Suite:
    def __init__(self, args):
        self.envgate = os.path.realpath(args.envgate)
        self.work = os.path.realpath(args.work)
        self.ns = args.namespace
        self.store = args.store
        self.failures = []
        self.rows = []
        os.makedirs(self.work, exist_ok=True)
        self.bin = os.path.join(self.work, "bin")
        os.makedirs(self.bin, exist_ok=True)
        link = os.path.join(self.bin, "envgate")
        if not os.path.exists(link):
            os.symlink(self.envgate, link)

    # --- the project: envgate.yml, manifests, a git history, the generated child ---------
    def project(self, case, policy, fail_in=None, style="split"):
        """A fresh project for `case`; its two pipelines are self.a and self.b (ids of
        their own, so no Job of an earlier case is re-attached to)."""
        self.cases = getattr(self, "cases", 0) + 1
        self.a, self.b = 100 + 2 * self.cases, 101 + 2 * self.cases
        d = os.path.join(self.work, case)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "jobs"), exist_ok=True)
        self.dir = d
        self.beats = os.path.join(d, "beats.log")
        for gate in ("pre-migrations", "post-migrations"):
            body = f'echo "{gate} $P $(date +%s%N)" >> {self.beats}; sleep 0.3'
            if fail_in == gate:
                body += "; echo 'relation missing' > \"$KUBESIM_TERMINATION_LOG\"; exit 2"
            # The env value stays a quoted string once envgate expanded it.
            manifest = f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {gate}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrations
          image: registry.example.com/migrations:1.0
          env:
            - {{ name: P, value: "${{CI_PIPELINE_ID}}" }}
          command: ["sh", "-c", {json.dumps(body)}]
"""
            with open(os.path.join(d, "jobs", gate + ".yaml"), "w") as f:
                f.write(manifest)
        # The deploy step beats every 20 ms for 1 s: each beat is mutating work.
        deploy = (f"for i in $(seq 50); do echo \"deploy $CI_PIPELINE_ID $(date +%s%N)\" "
                  f">> {self.beats}; sleep 0.02; done")
        if fail_in == "deploy":
            deploy += "; exit 4"
        if self.store == "file":
            lock = f"{{ store: file, path: {d}/locks, "
        else:
            lock = f"{{ store: kubernetes, namespace: {self.ns}, "
        lock += (f"on_failure: {policy}, lease_duration: {LEASE_S}s, hold_for: 30s, "
                 f"wait_timeout: 8s, local_unlock: true }}")
        config = f"""version: 1
defaults:
  namespace: {self.ns}
  lock: {lock}
environments:
  - name: e1
    paths: [ "app/**/*" ]
gates:
  pre-migrations: {{ job: jobs/pre-migrations.yaml }}
  post-migrations: {{ job: jobs/post-migrations.yaml }}
steps:
  diff: "echo diff $CI_PIPELINE_ID $(date +%s%N) >> {self.beats}; sleep 1"
  deploy: {json.dumps(deploy)}
"""
        with open(os.path.join(d, "envgate.yml"), "w") as f:
            f.write(config)
        git = ["git", "-C", d, "-c", "user.email=ci@example.com", "-c", "user.name=ci"]
        subprocess.run(git[:3] + ["init", "-q", "-b", "main"], check=True)
        os.makedirs(os.path.join(d, "app"), exist_ok=True)
        with open(os.path.join(d, "app", "v"), "w") as f:
            f.write("1\n")
        subprocess.run(git + ["add", "-A"], check=True)
        subprocess.run(git + ["commit", "-qm", "base"], check=True)
        base = subprocess.run(git[:3] + ["rev-parse", "HEAD"], check=True, capture_output=True,
                              text=True).stdout.strip()
        with open(os.path.join(d, "app", "v"), "w") as f:
            f.write("2\n")
        subprocess.run(git + ["commit", "-qam", "change"], check=True)
        child = os.path.join(d, "child.yml")
        args = [self.envgate, "generate", "--config", "envgate.yml", "--base", base, "--head",
                "HEAD", "--out", child]
        if style == "run":
            args += ["--jobs", "run"]
        subprocess.run(args, cwd=d, check=True, capture_output=True)
        with open(child) as f:
            self.child = yaml.safe_load(f)
        # Lease store: every case uses the one Lease of e1; free it for this case.
        subprocess.run([self.envgate, "unlock", "e1", "--config", "envgate.yml", "--reason",
                        "the fault suite's next case"], cwd=d, capture_output=True)

    def chain(self):
        """e1's jobs in the order of their needs, without the on_failure job."""
        jobs = {k: v for k, v in self.child.items() if isinstance(v, dict) and "script" in v}
        order, done = [], set()
        while len(done) < len(jobs):
            for name, job in jobs.items():
                if name in done or job.get("when") == "on_failure":
                    done.add(name)
                    continue
                if all(n in done for n in job.get("needs", [])):
                    order.append(name)
                    done.add(name)
        return [n for n in order if n.startswith("e1:")]

    # --- running jobs as a runner does -----------------------------------------------
    def job_env(self, pipeline, name, job, status=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("CI")}
        env.update({
            "CI": "true", "GITLAB_CI": "true", "CI_PROJECT_PATH": "grp/app",
            "CI_PIPELINE_ID": str(pipeline),
            "CI_PIPELINE_URL": f"https://gitlab.example.com/grp/app/-/pipelines/{pipeline}",
            "CI_JOB_NAME": name,
            "CI_JOB_URL": f"https://gitlab.example.com/grp/app/-/jobs/{pipeline}{len(name)}",
            "PATH": self.bin + ":" + os.environ["PATH"],
        })
        env.update({k: str(v) for k, v in (job.get("variables") or {}).items()})
        if status:
            env["CI_JOB_STATUS"] = status
        return env

    def start(self, pipeline, name, log):
        job = self.child[name]
        script = "set -e\n" + "\n".join(job["script"]) + "\n"
        out = open(log, "ab")
        return subprocess.Popen(["sh", "-c", script], cwd=self.dir, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=self.job_env(pipeline, name, job))

    def after_script(self, pipeline, name, status, log):
        job = self.child[name]
        if not job.get("after_script"):
            return
        with open(log, "ab") as out:
            subprocess.run(["sh", "-c", "\n".join(job["after_script"])], cwd=self.dir,
                           stdout=out, stderr=subprocess.STDOUT, timeout=60,
                           env=self.job_env(pipeline, name, job, status))

    def pipeline(self, pipeline, fault=None, at=None, until=None):
        """Runs e1's chain for `pipeline`; `fault` (cancel, kill, stop) hits job `at` once
        `until()` says it is in its work. Returns (failed job or None, the stopped process)."""
        log = os.path.join(self.dir, f"pipeline-{pipeline}.log")
        for name in self.chain():
            p = self.start(pipeline, name, log)
            if name == at and fault:
                deadline = time.time() + 30
                while not until() and p.poll() is None and time.time() < deadline:
                    time.sleep(0.01)
                self.fault_at = now_ns()
                if fault == "cancel":
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=60)
                    group_gone(p.pid, 60)  # envgate settles the lock after the shell ended
                    self.after_script(pipeline, name, "canceled", log)
                    return name, None
                if fault == "kill":
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=60)
                    return name, None  # a dead runner runs no after_script
                if fault == "stop":
                    os.killpg(p.pid, signal.SIGSTOP)
                    return name, p
            rc = p.wait(timeout=120)
            if rc != 0:
                self.after_script(pipeline, name, "failed", log)
                return name, None
            self.after_script(pipeline, name, "success", log)
        return None, None

    def chain_for(self, style):
        """The jobs of `style`'s chain a fault may hit (not the release job)."""
        self.project("chain-" + style, "hold", style=style)
        return self.chain()[:-1] if style == "split" else self.chain()

    def pipeline_async(self, pipeline):
        return Async(lambda: self.pipeline(pipeline))

    def wait_held_by(self, holder, secs):
        """Seconds from the fault until `holder` holds the lock, or None."""
        end = time.time() + secs
        while time.time() < end:
            if (self.lock().get("holder") or {}).get("id") == holder:
                return (now_ns() - self.fault_at) / 1e9
            time.sleep(0.02)
        return None

    # --- what happened -----------------------------------------------------------------
    def lock(self):
        r = subprocess.run([self.envgate, "status", "e1", "--config", "envgate.yml", "-o",
                            "json"], cwd=self.dir, capture_output=True, text=True)
        for entry in json.loads(r.stdout)["locks"]:
            if entry["lock"]["name"] == "e1":
                return entry["lock"]
        return {}

    def beats_of(self):
        out = []
        if os.path.exists(self.beats):
            for line in open(self.beats):
                parts = line.split()
                if len(parts) == 3:
                    out.append((parts[0], parts[1], int(parts[2])))
        return out

    def overlap_ms(self, first, second):
        """How long `first`'s mutating work went on after `second`'s began."""
        work = [(p, t) for w, p, t in self.beats_of() if w != "diff"]  # diff changes nothing
        a = [t for p, t in work if p == str(first)]
        b = [t for p, t in work if p == str(second)]
        if not a or not b:
            return 0.0
        return max(0.0, (max(a) - min(b)) / 1e6)

    def check(self, case, ok, why):
        if not ok:
            self.failures.append(f"{case}: {why}")
            print(f"FAIL [{case}] {why}", flush=True)

    def log_has(self, pipeline, text):
        path = os.path.join(self.dir, f"pipeline-{pipeline}.log")
        return os.path.exists(path) and text in open(path, errors="replace").read()


def in_work(suite, name):
    """An until() for job `name`: its gate or step has started its work."""
    marks = {"e1:diff": "diff", "e1:pre-migrations": "pre-migrations", "e1:deploy": "deploy",
             "e1:post-migrations": "post-migrations", "e1:run": "deploy"}
    mark = marks[name]
    return lambda: any(w == mark for w, _, _ in suite.beats_of())


def run_failures(s, style):
    for where in ("pre-migrations", "deploy", "post-migrations"):
        case = f"{style}-fail-{where}"
        s.project(case, "hold", fail_in=where, style=style)
        failed, _ = s.pipeline(s.a)
        lock = s.lock()
        s.check(case, failed is not None, "the pipeline passed")
        s.check(case, lock.get("state") == "failed", f"lock {lock.get('state')}, want failed")
        step = (lock.get("failure") or {}).get("step")
        s.check(case, step == where, f"failed step {step}, want {where}")
        s.check(case, s.log_has(s.a, "envgate unlock e1"), "no unlock command in the job log")
        s.rows.append((case, s.store, lock.get("state"), 0.0, None))


def run_cancels(s, style):
    for at in s.chain_for(style):
        case = f"{style}-cancel-{at.split(':')[1]}"
        s.project(case, "hold", style=style)
        s.pipeline(s.a, "cancel", at, in_work(s, at))
        lock = s.lock()
        s.check(case, lock.get("state") == "failed", f"lock {lock.get('state')}, want failed")
        s.check(case, s.log_has(s.a, "envgate unlock e1"), "no unlock command in the job log")
        s.rows.append((case, s.store, lock.get("state"), 0.0, None))


def run_vanished(s, style):
    """A runner killed mid-deploy, policy hold: the next pipeline finds the holder gone
    after the lease, marks the lock failed (HolderVanished) and prints the unlock command;
    it deploys nothing."""
    at = "e1:deploy" if style == "split" else "e1:run"
    case = f"{style}-kill-hold-{at.split(':')[1]}"
    s.project(case, "hold", style=style)
    s.pipeline(s.a, "kill", at, in_work(s, at))
    failed, _ = s.pipeline(s.b)
    lock = s.lock()
    reason = (lock.get("failure") or {}).get("reason")
    s.check(case, failed is not None, f"pipeline {s.b} passed")
    s.check(case, lock.get("state") == "failed" and reason == "HolderVanished",
            f"lock {lock.get('state')} ({reason}), want failed (HolderVanished)")
    s.check(case, s.log_has(s.b, "envgate unlock e1"), "no unlock command in the next job log")
    s.check(case, not any(p == str(s.b) and w == "deploy" for w, p, _ in s.beats_of()),
            f"pipeline {s.b} deployed")
    s.rows.append((case, s.store, f"{lock.get('state')}", 0.0, None))


def run_takeovers(s, fault, trials):
    """A runner killed (or paused) in each job of both styles, `trials` times in all;
    pipeline b waits for the lock (policy release: it takes over once the lease ran out).
    Nothing of pipeline a may run once b works."""
    where = [("split", j) for j in s.chain_for("split")] + [("run", "e1:run")]
    for i in range(trials):
        style, at = where[i % len(where)]
        case = f"{style}-{fault}-{at.split(':')[1]}-{i}"
        s.project(case, "release", style=style)
        failed, stopped = s.pipeline(s.a, fault, at, in_work(s, at))
        second = s.pipeline_async(s.b)
        handoff = s.wait_held_by(f"grp/app#{s.b}", 30)
        if stopped is not None:
            time.sleep(0.5)  # 9 works while 8 is paused past its lease
            os.killpg(stopped.pid, signal.SIGCONT)
            rc = stopped.wait(timeout=60)
            log = os.path.join(s.dir, f"pipeline-{s.a}.log")
            s.after_script(s.a, at, "success" if rc == 0 else "failed", log)
        second.join(120)
        ov = s.overlap_ms(s.a, s.b)
        lock = s.lock()
        s.check(case, handoff is not None, f"pipeline {s.b} never took the lock over")
        s.check(case, ov == 0.0, f"pipeline {s.a}'s work went on {ov:.1f} ms after {s.b}'s began")
        s.check(case, lock.get("state") == "free", f"lock {lock.get('state')}, want free")
        s.rows.append((case, s.store, lock.get("state"), ov, handoff))


class Async:
    def __init__(self, fn):
        import threading
        self.result = None
        self.t = threading.Thread(target=lambda: setattr(self, "result", fn()), daemon=True)
        self.t.start()

    def join(self, timeout):
        self.t.join(timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("envgate")
    ap.add_argument("work")
    ap.add_argument("namespace")
    ap.add_argument("store", choices=["file", "kubernetes"])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--table")
    args = ap.parse_args()
    s = Suite(args)
    started = time.time()
    for style in ("split", "run"):
        run_failures(s, style)
        run_cancels(s, style)
        run_vanished(s, style)
    for fault in ("kill", "stop"):
        run_takeovers(s, fault, args.trials)
    print(f"{'scenario':40} {'store':10} {'final lock':10} {'overlap ms':>10} {'hand-off s':>10}")
    for case, store, state, ov, handoff in s.rows:
        h = "" if handoff is None else f"{handoff:.2f}"
        print(f"{case:40} {store:10} {str(state):10} {ov:10.1f} {h:>10}")
    failed_cases = {f.split(":")[0] for f in s.failures}
    print(f"{len(s.rows)} cases in {time.time() - started:.0f} s ({s.store} store)")
    print(f"{len(s.rows) - len(failed_cases)} passed, {len(failed_cases)} failed")
    if args.table:
        with open(args.table, "w") as f:
            json.dump(s.rows, f)
    sys.exit(1 if s.failures else 0)


if __name__ == "__main__":
    main()
