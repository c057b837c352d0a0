"""The scenarios and the tools of scripts/peers-table: one Job manifest per scenario,
the same for every tool, and how each tool is run on it.

The Jobs are shaped like those of the gate end-to-end tests (test/e2e/gate_e2e.sh): a
migration that crashes twice then passes, one that exits 7 until the restart limit, one
whose pod the kubelet evicts. The control plane's node agent runs their containers as
local processes, so a container script is a file on this machine; its run counter is per
namespace, so that the manifest is byte for byte the same for every tool.
"""
import os

import yaml

# kubectl wait's --timeout (its default) and helm's (its default is 5 min): long enough
# for helm's wait on a failed release Job to give up by itself (30 retries, 2 s apart).
KUBECTL_TIMEOUT_S = 30
HELM_TIMEOUT_S = 90
JOB_GATE = "pre-migrations"


class Scenario:
    def __init__(self, name, title, what, policy, limit, script, evict, cause, exit_code):
        self.name, self.title, self.what = name, title, what
        self.policy, self.limit, self.script, self.evict = policy, limit, script, evict
        # Regular expressions (case-insensitive) of what naming the cause and the exit
        # code means in a tool's output; exit_code None: the scenario has none.
        self.cause, self.exit_code = cause, exit_code

    def manifest(self, script_path):
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "migrations"},
            "spec": {
                "backoffLimit": self.limit,
                "template": {"spec": {
                    "restartPolicy": self.policy,
                    "containers": [{
                        "name": "migrations",
                        "image": "registry.example.com/acme/migrations:1.0",
                        "command": ["sh", script_path],
                    }],
                }},
            },
        }

    def write_manifest(self, run_dir, work):
        """Writes the container script (shared) and the Job manifest into RUN_DIR."""
        script_path = os.path.join(work, f"{self.name}.sh")
        tmp = f"{script_path}.{os.getpid()}.{id(run_dir)}"
        with open(tmp, "w") as f:
            f.write(self.script)
        os.replace(tmp, script_path)
        path = os.path.join(run_dir, "job.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(self.manifest(script_path), f, sort_keys=False)
        return path


# The container's run number in this namespace, in $n.
COUNT = ('count="$0.$KUBESIM_NAMESPACE.count"\n'
         'n=$(( $(cat "$count" 2>/dev/null || echo 0) + 1 )); echo $n > "$count"\n')

SCENARIOS = [
    Scenario(
        "crashloop", "Crash loop, then success",
        "restartPolicy OnFailure, backoffLimit 6: the container fails twice (exit 1, "
        "termination message `PG::LockNotAvailable`), then passes; each run takes 1 s.",
        "OnFailure", 6,
        COUNT + 'echo "run $n: migrating users"; sleep 1\n'
        "if [ $n -le 2 ]; then\n"
        "  echo 'PG::LockNotAvailable' > \"$KUBESIM_TERMINATION_LOG\"; exit 1\nfi\n"
        "echo migrated\n",
        False, r"LockNotAvailable", r"exit(ed|code| code)?[ :=]*1\b"),
    Scenario(
        "restart_limit", "Restart limit exhausted",
        "restartPolicy OnFailure, backoffLimit 2: the container exits 7 (termination "
        "message `relation users missing`) every time; the Job fails with "
        "BackoffLimitExceeded and its controller deletes the pod.",
        "OnFailure", 2,
        COUNT + 'echo "run $n: relation users missing"; sleep 0.5\n'
        "echo 'relation users missing' > \"$KUBESIM_TERMINATION_LOG\"; exit 7\n",
        False, r"relation users missing", r"exit(ed|code| code)?[ :=]*7\b"),
    Scenario(
        "eviction", "Pod evicted",
        "restartPolicy Never, backoffLimit 0: the pod is evicted by the kubelet (`node low "
        "on memory`) while it runs; the Job fails with BackoffLimitExceeded.",
        "Never", 0,
        'echo "migrating users"; sleep 60\n',
        True, r"evict", None),
]


class Tool:
    def __init__(self, name, label, timeout_s, run, prepare=None):
        self.name, self.label, self.timeout_s = name, label, timeout_s
        self.m_run, self.m_prepare = run, prepare

    def prepare(self, run_dir, manifest, ns):
        """The commands (untimed) that set the stage: a release to upgrade."""
        return self.m_prepare(run_dir, manifest, ns) if self.m_prepare else []

    def commands(self, run_dir, manifest, ns, scenario):
        """The timed commands, run in order until one fails."""
        return self.m_run(run_dir, manifest, ns, scenario)


BINARIES = {}  # envgate and helm; set by scripts/peers-table


def write_chart(run_dir, manifest, hook):
    """A chart with a ConfigMap and the Job, as a pre-upgrade hook or a plain resource."""
    chart = os.path.join(run_dir, "hook-chart" if hook else "chart")
    os.makedirs(os.path.join(chart, "templates"))
    with open(os.path.join(chart, "Chart.yaml"), "w") as f:
        f.write("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    with open(os.path.join(chart, "templates", "config.yaml"), "w") as f:
        f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
                "data:\n  revision: \"{{ .Release.Revision }}\"\n")
    with open(manifest) as f:
        job = yaml.safe_load(f)
    if hook:
        job["metadata"]["annotations"] = {"helm.sh/hook": "pre-upgrade"}
    with open(os.path.join(chart, "templates", "migrations.yaml"), "w") as f:
        yaml.safe_dump(job, f, sort_keys=False)
    return chart


def helm(chart, ns, *flags):
    return [BINARIES["helm"], "upgrade", "--install", "app", chart, "-n", ns, *flags]


def helm_install_first(run_dir, manifest, ns):
    # The release exists before the measured upgrade (an install runs no pre-upgrade hook).
    return [helm(write_chart(run_dir, manifest, hook=True), ns)]


def kubectl_wait(condition):
    def run(run_dir, manifest, ns, scenario):
        return [["kubectl", "create", "-f", manifest, "-n", ns],
                ["kubectl", "wait", f"--for=condition={condition}", "job/migrations", "-n", ns,
                 f"--timeout={KUBECTL_TIMEOUT_S}s"]]
    return run


TIMEOUT = f"{HELM_TIMEOUT_S}s"
TOOLS = [
    Tool("envgate", "`envgate gate`", None,
         lambda d, m, ns, s: [[BINARIES["envgate"], "gate", "--env", "e1", "--gate", JOB_GATE,
                               "--manifest", m, "--namespace", ns,
                               "--report-dir", os.path.join(d, "report")]]),
    Tool("helm_hook", "`helm upgrade --install` (pre-upgrade hook)", HELM_TIMEOUT_S,
         lambda d, m, ns, s: [helm(os.path.join(d, "hook-chart"), ns, "--timeout", TIMEOUT)],
         helm_install_first),
    Tool("helm_hook_wait", "`helm upgrade --install --wait --wait-for-jobs` (pre-upgrade hook)",
         HELM_TIMEOUT_S,
         lambda d, m, ns, s: [helm(os.path.join(d, "hook-chart"), ns, "--wait", "--wait-for-jobs",
                                   "--timeout", TIMEOUT)],
         helm_install_first),
    Tool("helm_resource_wait",
         "`helm upgrade --install --wait --wait-for-jobs` (Job in the release)", HELM_TIMEOUT_S,
         lambda d, m, ns, s: [helm(os.path.join(d, "chart"), ns, "--wait", "--wait-for-jobs",
                                   "--timeout", TIMEOUT)],
         lambda d, m, ns: write_chart(d, m, hook=False) and []),
    Tool("kubectl_complete", "`kubectl create` + `kubectl wait --for=condition=complete`",
         KUBECTL_TIMEOUT_S,
         kubectl_wait("complete")),
    Tool("kubectl_failed", "`kubectl create` + `kubectl wait --for=condition=failed`",
         KUBECTL_TIMEOUT_S,
         kubectl_wait("failed")),
]
