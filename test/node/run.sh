#!/usr/bin/env bash
# A real node for the real control plane: containerd + runc + CNI (bridge, host-local,
# loopback) and the real kubelet (built from the pinned k8s.io/kubernetes), registered as
# a second Node of the control plane test/controlplane/run.sh started.
#
#   run.sh start KUBELET NODECTL KUBE_SCHEDULER CP_STATE STATE [NODE_NAME]
#       starts it detached; returns once the Node is Ready and the kube-scheduler ready.
#       STATE gets root (the temp dir everything runs in), node-name, containerd.log,
#       kubelet.log, scheduler.log, pids and timings.
#   run.sh stop STATE CP_STATE
#       stops the kube-scheduler, deletes the node's pods, stops the kubelet, removes
#       every sandbox through CRI, stops containerd, then undoes the mounts, cgroups and
#       bridge and checks that no process, mount, cgroup or link is left (exit 1, naming
#       them, if one is).
#
# The kube-scheduler has one profile, SCHEDULER_NAME: it schedules only the pods that
# name it (spec.schedulerName), onto this node only; no default-scheduler profile exists,
# so every other pod stays the node agent's. The node's allocatable CPU is made small
# (ALLOCATABLE_CPU, the rest systemReserved), and the PriorityClass HIGH_PRIORITY exists:
# a high-priority pod that does not fit preempts a lower one, as on a full node.
#   run.sh check
#       only the preflight: says plainly why this machine cannot run a node (exit 1).
#
# What it leaves the host as it found it: containerd's root, state, runc root, shim
# sockets' state and network namespaces live under the temp dir; the kubelet runs in a
# mount namespace of its own where the six sysctls it would otherwise rewrite on the host
# (vm.overcommit_memory, vm.panic_on_oom, kernel.panic, kernel.panic_on_oops,
# kernel.keys.root_maxkeys/maxbytes) read as the values it wants, its root dir is a
# shared bind mount so the volumes it mounts reach containerd; the pods' cgroups are
# under cgroup root /envgate-node-<id>; the bridge envg-<id> has no address, no gateway,
# no masquerading, and forwarding is not turned on.
set -euo pipefail
action=${1:-}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "node: $*" >&2; exit 1; }

SCHEDULER_NAME=envgate-node-scheduler
HIGH_PRIORITY=envgate-node-high
ALLOCATABLE_CPU=500m
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# poll SECONDS DESCRIPTION COMMAND...: COMMAND until it succeeds, or fail after SECONDS.
poll() {
    local secs=$1 what=$2
    shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < end)) || { echo "node: timed out after ${secs}s waiting for $what" >&2; return 1; }
        sleep 0.1
    done
}

# The cgroup v1 controllers the kubelet and runc use; on a hybrid host the cgroup2
# `unified` mount too (runc puts each container there as well).
cgroup_dirs() {
    local m
    for m in /sys/fs/cgroup/*/; do
        m=${m%/}
        case $(stat -fc %T "$m" 2>/dev/null) in
        cgroupfs | cgroup2fs) echo "$m" ;;
        esac
    done
}

preflight() {
    local why=() b
    [[ $(id -u) == 0 ]] || why+=("not root: containerd, runc and the kubelet need root")
    for b in containerd containerd-shim-runc-v2 runc ctr ip unshare mount; do
        command -v "$b" >/dev/null || why+=("$b is not installed (Debian packages containerd, runc, iproute2, util-linux)")
    done
    for b in bridge host-local loopback; do
        [[ -x /usr/lib/cni/$b ]] || why+=("/usr/lib/cni/$b is missing (Debian package containernetworking-plugins)")
    done
    [[ $(LC_ALL=C ldd /bin/busybox 2>&1) == *'not a dynamic executable'* ]] ||
        why+=("/bin/busybox is not a static busybox (Debian package busybox-static): no image to run")
    case $(stat -fc %T /sys/fs/cgroup 2>/dev/null) in
    cgroup2fs) ;;
    tmpfs)
        for b in cpu cpuacct cpuset memory pids; do
            grep -qE "^cgroup /sys/fs/cgroup/[^ ]*\b$b\b[^ ]* cgroup rw" /proc/mounts ||
                why+=("cgroup v1 controller $b is not mounted read-write under /sys/fs/cgroup")
        done
        ;;
    *) why+=("/sys/fs/cgroup is neither cgroup v2 nor a cgroup v1 tmpfs") ;;
    esac
    unshare -m true 2>/dev/null || why+=("cannot create a mount namespace (unshare -m true failed)")
    if ((${#why[@]})); then
        printf 'node: this machine cannot run a real node:\n' >&2
        printf '  - %s\n' "${why[@]}" >&2
        return 1
    fi
}

start() {
    local kubelet=$1 nodectl=$2 scheduler=$3 cp=$4 state=$5 name=${6:-node-kubelet}
    preflight
    [[ -x $scheduler ]] || die "no kube-scheduler at $scheduler"
    [[ -s $cp/kubeconfig ]] || die "no control plane is running ($cp/kubeconfig missing)"
    mkdir -p "$state"
    [[ ! -s $state/root ]] || stop "$state" "$cp" || true
    rm -f "$state"/{root,node-name,timings,kubelet.pid,containerd.pid,scheduler.pid} "$state"/*.log
    local t0 t_build d id
    t0=$(date +%s%N)
    # A short path: unix sockets live under it.
    d=$(mktemp -d /tmp/envgate-node.XXXXXX)
    id=${d##*.}
    echo "$d" >"$state/root"
    echo "$name" >"$state/node-name"
    echo "$nodectl" >"$state/nodectl"
    export KUBECONFIG=$cp/kubeconfig

    # Images made here (no registry): busybox for the workloads, under its own name and
    # the names the e2e manifests use (migrations, proxy), and the pod sandbox image.
    mkdir -p "$d/images"
    bash "$here/mkimage.sh" "$d/images/busybox.tar" envgate.test/busybox:1
    bash "$here/mkimage.sh" "$d/images/pause.tar" envgate.test/pause:1 /bin/sleep infinity
    t_build=$(ms_since "$t0")

    # containerd, everything under $d.
    # The kubelet gives a pod sandbox oom_score_adj -998 (and Guaranteed containers
    # -997); lowering it needs CAP_SYS_RESOURCE. Without it (some sandboxes drop it from
    # the bounding set) runc fails with "failed to update /proc/self/oom_score_adj:
    # Permission denied"; containerd then clamps scores at its own (restrict_oom_score_adj).
    local restrict_oom=
    if ! (echo -1 >/proc/self/oom_score_adj) 2>/dev/null; then
        restrict_oom="  restrict_oom_score_adj = true"
        echo "node: no CAP_SYS_RESOURCE (cannot lower oom_score_adj): containerd restricts the pods' oom_score_adj to >= its own"
    fi
    mkdir -p "$d/containerd" "$d/cni/net.d" "$d/cni/ipam" "$d/kubelet" "$d/pod-logs"
    cat >"$d/containerd/config.toml" <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.tracing", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$d/containerd/containerd.sock"
[ttrpc]
  address = "$d/containerd/containerd.sock.ttrpc"
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "envgate.test/pause:1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  netns_mounts_under_state_dir = true
$restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
        Root = "$d/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$d/cni/net.d"
    max_conf_num = 1
EOF
    # No gateway, no masquerading: the bridge plugin then neither turns on forwarding
    # nor touches iptables; pods reach nothing but each other.
    cat >"$d/cni/net.d/10-envgate.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "envgate-node-$id",
 "plugins": [
  {"type": "bridge", "bridge": "envg-$id", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$d/cni/ipam", "ranges": [[{"subnet": "10.244.77.0/24"}]]}},
  {"type": "loopback"}
 ]}
EOF
    [[ -d /run/containerd ]] || echo yes >"$d/made-run-containerd"
    local sock=$d/containerd/containerd.sock t1
    t1=$(date +%s%N)
    setsid containerd --config "$d/containerd/config.toml" >"$state/containerd.log" 2>&1 </dev/null &
    echo $! >"$state/containerd.pid"
    poll 60 "containerd's CRI socket" "$nodectl" version --endpoint "unix://$sock" --timeout 2s ||
        { tail -20 "$state/containerd.log" >&2; return 1; }
    "$nodectl" version --endpoint "unix://$sock" | tee "$state/runtime-version"
    local img
    for img in busybox pause; do
        ctr --address "$sock" -n k8s.io images import "$d/images/$img.tar" >/dev/null
    done
    for img in registry.example.com/migrations:1.0 registry.example.com/proxy:1.0; do
        ctr --address "$sock" -n k8s.io images tag envgate.test/busybox:1 "$img" >/dev/null
    done
    local t_containerd
    t_containerd=$(ms_since "$t1")

    # The pods' cgroup root, in every hierarchy.
    local cg
    for cg in $(cgroup_dirs); do mkdir -p "$cg/envgate-node-$id"; done

    # Credentials: a ServiceAccount token with the system:node role (the test API
    # server authenticates tokens, not client certificates, and authorizes with RBAC).
    sa_kubeconfig "$cp" "$name" "$d/kubelet/kubeconfig" system:node
    local ca=$cp/work/ca.crt
    local port cpus
    port=$(free_port)
    # Allocatable CPU: ALLOCATABLE_CPU of the machine's CPUs (the capacity the kubelet
    # reports is every online CPU), the rest reserved for the system.
    cpus=$(getconf _NPROCESSORS_ONLN)
    # The serving certificate the control plane issued for its kubelet endpoint (valid for
    # 127.0.0.1, signed by its CA, which the API server checks); the API server's client
    # certificate is checked against the same CA, and then allowed (no webhook).
    cat >"$d/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /envgate-node-$id
containerRuntimeEndpoint: unix://$sock
imageServiceEndpoint: unix://$sock
address: 127.0.0.1
port: $port
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $cp/work/kubelet.crt
tlsPrivateKeyFile: $cp/work/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $ca}
authorization: {mode: AlwaysAllow}
podLogsDir: $d/pod-logs
failSwapOn: false
resolvConf: ""
# A small node: pods requesting CPU fill it (preemption). Only "pods" is enforced
# (the default), so the reservation limits nothing on the host.
systemReserved: {cpu: "$((cpus * 1000 - ${ALLOCATABLE_CPU%m}))m"}
# A cluster DNS address (no DNS server runs): without one the kubelet warns
# MissingClusterDNS on every sync of a ClusterFirst pod.
clusterDNS: [10.0.0.10]
clusterDomain: cluster.local
maxPods: 30
# Made images only: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
# The crash-loop back-off: 10 s doubling to 5 min upstream; capped at 1 s here
# (KubeletCrashLoopBackOffMax, beta and on by default since 1.35).
crashLoopBackOff: {maxContainerRestartPeriod: 1s}
featureGates: {KubeletCrashLoopBackOffMax: true}
nodeStatusUpdateFrequency: 2s
EOF
    # The sysctls the kubelet insists on (it writes them when they differ, or fails with
    # protectKernelDefaults): in its own mount namespace they read as wanted.
    mkdir -p "$d/sysctl"
    cat >"$d/kubelet/start.sh" <<EOF
set -e
mount --make-rprivate /proc
for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    f=\${kv%=*}
    echo "\${kv#*=}" >"$d/sysctl/\${f//\//.}"
    mount --bind "$d/sysctl/\${f//\//.}" "/proc/sys/\$f"
done
exec "\$@"
EOF
    # The root dir is a shared bind mount made here, so that the volumes the kubelet
    # mounts (in its namespace) show in containerd's.
    mount --bind "$d/kubelet" "$d/kubelet"
    mount --make-rshared "$d/kubelet"
    local t2
    t2=$(date +%s%N)
    setsid unshare -m --propagation unchanged bash "$d/kubelet/start.sh" \
        "$kubelet" --config "$d/kubelet/config.yaml" --kubeconfig "$d/kubelet/kubeconfig" \
        --root-dir "$d/kubelet" --cert-dir "$d/kubelet/pki" --hostname-override "$name" \
        --node-ip 127.0.0.1 --v 2 >"$state/kubelet.log" 2>&1 </dev/null &
    echo $! >"$state/kubelet.pid"
    node_ready() {
        kill -0 "$(cat "$state/kubelet.pid")" || return 2
        [[ $(kubectl get node "$name" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
    }
    local end=$((SECONDS + 120)) rc
    while :; do
        rc=0
        node_ready || rc=$?
        ((rc != 0)) || break
        if ((rc == 2)); then
            echo "node: the kubelet exited while starting:" >&2
            grep -E '^E[0-9]{4}|failed|error' "$state/kubelet.log" | tail -20 >&2
            return 1
        fi
        ((SECONDS < end)) || {
            echo "node: $name not Ready after 120 s:" >&2
            kubectl get node "$name" -o jsonpath='{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}' >&2 || true
            grep -E '^E[0-9]{4}' "$state/kubelet.log" | tail -20 >&2
            return 1
        }
        sleep 0.2
    done
    # The kubelet refuses a loopback node IP ("failed to validate nodeIP: nodeIP can't be
    # loopback address") and then reports no address at all; its serving certificate is
    # valid for 127.0.0.1 only, and the API server reaches kubelets by InternalIP. So the
    # address is set here, once: the kubelet's status patches leave it alone (its address
    # setter fails before touching it).
    kubectl patch node "$name" --subresource=status --type=merge -p \
        '{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":"'"$name"'"}]}}' >/dev/null
    # The API server's TaintNodesByCondition admission taints a new Node not-ready
    # (NoSchedule); the node lifecycle controller lifts it once the Node is Ready. That
    # controller does not run in the test control plane: lifted here, as it would, so the
    # kube-scheduler can place pods on the node.
    kubectl taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
    local t_kubelet alloc
    t_kubelet=$(ms_since "$t2")
    alloc=$(kubectl get node "$name" -o jsonpath='{.status.capacity.cpu} {.status.allocatable.cpu}')
    [[ ${alloc#* } == "$ALLOCATABLE_CPU" ]] ||
        die "node $name: capacity/allocatable CPU $alloc, want allocatable $ALLOCATABLE_CPU ($cpus CPUs counted here)"
    local t3 t_scheduler
    t3=$(date +%s%N)
    start_scheduler "$scheduler" "$cp" "$state" "$d" "$name"
    t_scheduler=$(ms_since "$t3")
    printf 'images %d ms, containerd %d ms, kubelet to Node Ready %d ms, kube-scheduler ready %d ms, total %d ms\n' \
        "$t_build" "$t_containerd" "$t_kubelet" "$t_scheduler" "$(ms_since "$t0")" | tee "$state/timings"
    echo "node $name ready: $(kubectl get node "$name" -o jsonpath='{.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}'), CPU capacity/allocatable $alloc; $SCHEDULER_NAME ready"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sa_kubeconfig CP ACCOUNT FILE CLUSTERROLE...: FILE, a kubeconfig with a token of
# ServiceAccount kube-system/ACCOUNT bound to each CLUSTERROLE (the test API server
# authenticates tokens and authorizes with RBAC).
sa_kubeconfig() {
    local cp=$1 account=$2 file=$3 role token server
    shift 3
    kubectl create serviceaccount -n kube-system "$account" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    for role in "$@"; do
        kubectl create clusterrolebinding "envgate-node:$account:${role#system:}" --clusterrole="$role" \
            --serviceaccount="kube-system:$account" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    done
    token=$(kubectl create token -n kube-system "$account" --duration=24h)
    server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
    cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: controlplane, cluster: {server: "$server", certificate-authority: "$cp/work/ca.crt"}}]
users: [{name: $account, user: {token: "$token"}}]
contexts: [{name: node, context: {cluster: controlplane, user: $account}}]
current-context: node
EOF
    chmod 600 "$file"
}

# start_scheduler KUBE_SCHEDULER CP STATE DIR NODE: the kube-scheduler of the same
# release, with the roles upstream binds to the system:kube-scheduler user, one profile
# (SCHEDULER_NAME) that sees NODE only, no leader election; returns once it is ready
# (its /readyz: informers synced). Also the PriorityClass HIGH_PRIORITY.
start_scheduler() {
    local bin=$1 cp=$2 state=$3 d=$4 name=$5 port
    mkdir -p "$d/scheduler"
    sa_kubeconfig "$cp" "$SCHEDULER_NAME" "$d/scheduler/kubeconfig" system:kube-scheduler system:volume-scheduler
    kubectl create priorityclass "$HIGH_PRIORITY" --value=1000000 \
        --description="envgate node tier: a pod that preempts" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
    # NodeAffinity's addedAffinity applies to every pod of the profile: the node agent's
    # Node is never feasible for them, so neither placement nor preemption looks there.
    cat >"$d/scheduler/config.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $d/scheduler/kubeconfig}
leaderElection: {leaderElect: false}
profiles:
  - schedulerName: $SCHEDULER_NAME
    pluginConfig:
      - name: NodeAffinity
        args:
          addedAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchFields: [{key: metadata.name, operator: In, values: [$name]}]
EOF
    port=$(free_port)
    # Serving (/readyz) with the certificate the control plane issued for 127.0.0.1; no
    # delegated authentication: /readyz is allowed to anyone.
    setsid "$bin" --config "$d/scheduler/config.yaml" --bind-address 127.0.0.1 --secure-port "$port" \
        --tls-cert-file "$cp/work/kubelet.crt" --tls-private-key-file "$cp/work/kubelet.key" \
        --v 2 >"$state/scheduler.log" 2>&1 </dev/null &
    echo $! >"$state/scheduler.pid"
    scheduler_ready() {
        kill -0 "$(cat "$state/scheduler.pid")" || return 2
        [[ $(curl -sk --max-time 2 "https://127.0.0.1:$port/readyz") == ok ]]
    }
    local end=$((SECONDS + 60)) rc
    while :; do
        rc=0
        scheduler_ready || rc=$?
        ((rc != 0)) || break
        if ((rc == 2)); then
            echo "node: the kube-scheduler exited while starting:" >&2
            grep -E '^[EF][0-9]{4}|forbidden' "$state/scheduler.log" | tail -20 >&2
            return 1
        fi
        ((SECONDS < end)) || {
            echo "node: the kube-scheduler is not ready after 60 s:" >&2
            grep -E '^[EF][0-9]{4}|forbidden' "$state/scheduler.log" | tail -20 >&2
            return 1
        }
        sleep 0.1
    done
}

# Processes whose command line, cwd or executable names the node's temp dir: the
# kubelet, containerd, its shims and the containers (their cwd is in a rootfs there).
node_processes() {
    local d=$1 p args cwd root
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [[ $p != "$$" && $p != "$BASHPID" ]] || continue
        # Read with builtins: a grep for the path would find itself.
        args=()
        { mapfile -d '' args <"/proc/$p/cmdline"; } 2>/dev/null || continue
        cwd=$(readlink "/proc/$p/cwd" 2>/dev/null) || true
        root=$(readlink "/proc/$p/root" 2>/dev/null) || true
        if [[ "${args[*]}" == *"$d"* || $cwd == "$d"* || $root == "$d"* ]]; then
            echo "$p ${args[*]:0:6}"
        fi
    done
    return 0
}

stop_pid() {
    local pidfile=$1 what=$2 pid
    pid=$(cat "$pidfile" 2>/dev/null) || return 0
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
        poll 30 "$what (pid $pid) to exit" bash -c "! kill -0 $pid" || kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

stop() {
    local state=$1 cp=$2 d name left=() rc=0
    d=$(cat "$state/root" 2>/dev/null) || { echo "node: not running"; return 0; }
    name=$(cat "$state/node-name" 2>/dev/null || echo node-kubelet)
    export KUBECONFIG=$cp/kubeconfig
    # The scheduler first: nothing is placed or preempted while the node goes.
    stop_pid "$state/scheduler.pid" kube-scheduler
    # The kubelet stops the node's pods itself (their grace periods, their sandboxes).
    if [[ -s $cp/kubeconfig ]] && kill -0 "$(cat "$state/kubelet.pid" 2>/dev/null)" 2>/dev/null; then
        # Jobs whose pods are pinned here would make new ones: they go first.
        kubectl get pods -A --field-selector "spec.nodeName=$name" -o json |
            jq -r '.items[] | .metadata.namespace as $ns | .metadata.ownerReferences[]?
                | select(.kind == "Job") | "\($ns) \(.name)"' | sort -u |
            while read -r ns job; do
                kubectl delete job -n "$ns" "$job" --wait=false >/dev/null 2>&1 || true
            done
        kubectl delete pods -A --field-selector "spec.nodeName=$name" --wait=false >/dev/null 2>&1 || true
        poll 60 "the pods on $name to be gone" \
            bash -c "[[ -z \$(kubectl get pods -A --field-selector spec.nodeName=$name -o name) ]]" ||
            echo "node: pods still on $name after 60 s; removing them through CRI" >&2
    fi
    stop_pid "$state/kubelet.pid" kubelet
    local sock=$d/containerd/containerd.sock
    if [[ -S $sock ]]; then
        "$(cat "$state/nodectl")" clean --endpoint "unix://$sock" 2>&1 ||
            echo "node: CRI clean-up failed; killing what is left" >&2
    fi
    stop_pid "$state/containerd.pid" containerd
    # Shims outlive containerd by design; after `clean` they have exited, unless a
    # sandbox could not be removed.
    local p
    while read -r p _; do
        if [[ -n $p ]]; then kill -KILL "$p" 2>/dev/null || true; fi
    done < <(node_processes "$d")
    local end=$((SECONDS + 10))
    while [[ -n $(node_processes "$d") ]] && ((SECONDS < end)); do sleep 0.1; done
    # Mounts under the temp dir (rootfs overlays, shm, netns, the kubelet's root bind),
    # deepest first.
    local m
    while read -r m; do
        umount -l "$m" 2>/dev/null || true
    done < <(awk -v d="$d" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r)
    local cg
    for cg in $(cgroup_dirs); do
        [[ -d $cg/envgate-node-${d##*.} ]] || continue
        find "$cg/envgate-node-${d##*.}" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
    if ip link show "envg-${d##*.}" >/dev/null 2>&1; then ip link delete "envg-${d##*.}" || true; fi
    rm -rf /var/lib/cni/results/"envgate-node-${d##*.}"-* 2>/dev/null || true
    # containerd 1.6's shims put their sockets in /run/containerd/s whatever its state
    # dir; they remove them, and the directories made for this node go too when empty.
    if [[ -s $d/made-run-containerd ]]; then
        rmdir /run/containerd/s /run/containerd 2>/dev/null || true
    fi

    # What is left is a failure, named.
    while read -r p; do [[ -z $p ]] || left+=("process $p"); done < <(node_processes "$d")
    while read -r m; do [[ -z $m ]] || left+=("mount $m"); done < <(awk -v d="$d" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo)
    for cg in $(cgroup_dirs); do
        [[ ! -d $cg/envgate-node-${d##*.} ]] || left+=("cgroup $cg/envgate-node-${d##*.}")
    done
    ! ip link show "envg-${d##*.}" >/dev/null 2>&1 || left+=("link envg-${d##*.}")
    if [[ -s $cp/kubeconfig ]]; then
        kubectl delete node "$name" --wait=false >/dev/null 2>&1 || true
        kubectl delete clusterrolebinding "envgate-node:$name:node" "envgate-node:$SCHEDULER_NAME:kube-scheduler" \
            "envgate-node:$SCHEDULER_NAME:volume-scheduler" >/dev/null 2>&1 || true
        kubectl delete serviceaccount -n kube-system "$name" "$SCHEDULER_NAME" >/dev/null 2>&1 || true
        kubectl delete priorityclass "$HIGH_PRIORITY" >/dev/null 2>&1 || true
    fi
    if ((${#left[@]})); then
        printf 'node: left behind after stop:\n' >&2
        printf '  %s\n' "${left[@]}" >&2
        rc=1
    else
        rm -rf "$d"
        rm -f "$state/root"
        echo "node stopped; no process, mount, cgroup or link left"
    fi
    return $rc
}

case $action in
start) shift; start "$@" ;;
stop) shift; stop "$@" ;;
check) preflight && echo "node: this machine can run a real node" ;;
*)
    echo "usage: run.sh start KUBELET NODECTL KUBE_SCHEDULER CP_STATE STATE [NODE_NAME] | stop STATE CP_STATE | check" >&2
    exit 2
    ;;
esac
