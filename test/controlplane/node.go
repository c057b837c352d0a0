package main

// The node agent: one Node object, a scheduler for it, and a kubelet stand-in that
// runs each container's command as a local process (the image is not pulled), as
// kubesim's kubelet does, so the same manifests run on both.

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

type nodeAgent struct {
	client      kubernetes.Interface
	name        string
	workdir     string
	kubeletPort int
	// backoff is the kubelet's first crash-loop back-off (10 s upstream); later ones
	// double up to 30 times it, as upstream's 10 s → 5 min.
	backoff time.Duration

	mu         sync.Mutex
	workers    map[types.UID]*podWorker
	unpullable map[string]bool // images that never pull (set through the control API)
	nodeCache  cache.Store
}

func newNodeAgent(client kubernetes.Interface, name, workdir string, kubeletPort int, backoff time.Duration) *nodeAgent {
	return &nodeAgent{client: client, name: name, workdir: workdir, kubeletPort: kubeletPort,
		backoff: backoff, workers: map[types.UID]*podWorker{}, unpullable: map[string]bool{}}
}

// register creates (or refreshes) the Node: Ready, with the agent's log endpoint as
// its kubelet endpoint so that the API server's pods/log proxy reaches it.
func (n *nodeAgent) register(ctx context.Context) error {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{
			"kubernetes.io/hostname": n.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
	}
	created, err := n.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("register node: %w", err)
	}
	now := metav1.Now()
	created.Status = v1.NodeStatus{
		Capacity: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse("64"),
			v1.ResourceMemory: resource.MustParse("256Gi"),
			v1.ResourcePods:   resource.MustParse("1000"),
		},
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue,
			Reason: "KubeletReady", Message: "node agent is posting ready status",
			LastHeartbeatTime: now, LastTransitionTime: now}},
		Addresses:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "127.0.0.1"}, {Type: v1.NodeHostName, Address: n.name}},
		DaemonEndpoints: v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: int32(n.kubeletPort)}},
		NodeInfo:        v1.NodeSystemInfo{KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64", ContainerRuntimeVersion: "local://processes"},
	}
	created.Status.Allocatable = created.Status.Capacity
	_, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// run watches pods until ctx ends: unassigned ones are scheduled, this node's ones get
// a pod worker.
func (n *nodeAgent) run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactory(n.client, 0)
	pods := factory.Core().V1().Pods().Informer()
	nodes := factory.Core().V1().Nodes().Informer()
	n.nodeCache = nodes.GetStore()
	handle := func(obj interface{}) {
		if pod, ok := obj.(*v1.Pod); ok {
			n.onPod(ctx, pod)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj interface{}) { handle(obj) },
		DeleteFunc: func(obj interface{}) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				n.onPodGone(pod)
			}
		},
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("node agent: cache of %v did not sync", typ)
		}
	}
	go n.rescheduleLoop(ctx, pods.GetStore())
	return nil
}

func (n *nodeAgent) onPod(ctx context.Context, pod *v1.Pod) {
	if pod.Spec.NodeName == "" {
		if pod.DeletionTimestamp == nil && ownScheduler(pod) {
			n.schedule(ctx, pod)
		}
		return
	}
	if pod.Spec.NodeName != n.name {
		return
	}
	n.mu.Lock()
	w, ok := n.workers[pod.UID]
	if !ok {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			n.mu.Unlock()
			return // finished before this agent started (or by an eviction)
		}
		w = newPodWorker(n, pod)
		n.workers[pod.UID] = w
		go w.run(ctx)
	}
	n.mu.Unlock()
	w.update(pod)
}

func (n *nodeAgent) onPodGone(pod *v1.Pod) {
	n.mu.Lock()
	w, ok := n.workers[pod.UID]
	delete(n.workers, pod.UID)
	n.mu.Unlock()
	if ok {
		w.removed()
	}
}

func (n *nodeAgent) worker(ns, name string) (*podWorker, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.workers {
		if w.ns == ns && w.name == name {
			return w, true
		}
	}
	return nil, false
}

func (n *nodeAgent) imageUnpullable(image string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.unpullable[image]
}

func (n *nodeAgent) setUnpullable(image string, on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if on {
		n.unpullable[image] = true
	} else {
		delete(n.unpullable, image)
	}
}

// ownScheduler: the pod is the default scheduler's, which this agent plays. A pod that
// names another scheduler (the real node tier's kube-scheduler) is left to it, as a
// scheduler leaves pods that name no profile of its own.
func ownScheduler(pod *v1.Pod) bool {
	return pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == v1.DefaultSchedulerName
}

// schedule binds the pod to this node, or reports why it cannot (as the scheduler does:
// PodScheduled False, reason Unschedulable) when the node is cordoned or the pod's
// nodeSelector does not match it.
func (n *nodeAgent) schedule(ctx context.Context, pod *v1.Pod) {
	if why := n.unfit(pod); why != "" {
		n.markUnschedulable(ctx, pod, why)
		return
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: n.name},
	}
	err := n.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
	if err != nil {
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			log.Printf("node agent: bind %s/%s: %v", pod.Namespace, pod.Name, err)
		}
		return
	}
	recordEvent(ctx, n.client, pod, v1.EventTypeNormal, "Scheduled",
		fmt.Sprintf("Successfully assigned %s/%s to %s", pod.Namespace, pod.Name, n.name), "default-scheduler", "")
}

func (n *nodeAgent) unfit(pod *v1.Pod) string {
	obj, ok, _ := n.nodeCache.GetByKey(n.name)
	if !ok {
		return "0/0 nodes are available."
	}
	node := obj.(*v1.Node)
	if node.Spec.Unschedulable {
		return "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
	}
	for k, v := range pod.Spec.NodeSelector {
		if node.Labels[k] != v {
			return "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
		}
	}
	return ""
}

func (n *nodeAgent) markUnschedulable(ctx context.Context, pod *v1.Pod, message string) {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Message == message {
			return
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := n.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || cur.UID != pod.UID || cur.Spec.NodeName != "" {
			return err
		}
		setPodCondition(&cur.Status, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse,
			Reason: v1.PodReasonUnschedulable, Message: message})
		cur.Status.Phase = v1.PodPending
		_, err = n.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err == nil {
		recordEvent(ctx, n.client, pod, v1.EventTypeWarning, "FailedScheduling", message, "default-scheduler", "")
	}
}

// rescheduleLoop retries unschedulable pods every second (a node may have been
// uncordoned), as the scheduler's unschedulable queue does.
func (n *nodeAgent) rescheduleLoop(ctx context.Context, store cache.Store) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, obj := range store.List() {
			if pod := obj.(*v1.Pod); pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil && ownScheduler(pod) {
				n.schedule(ctx, pod)
			}
		}
	}
}

// stopAll kills every container process (shutdown); it returns once they are reaped.
func (n *nodeAgent) stopAll() {
	n.mu.Lock()
	ws := make([]*podWorker, 0, len(n.workers))
	for _, w := range n.workers {
		ws = append(ws, w)
	}
	n.mu.Unlock()
	for _, w := range ws {
		w.killAll()
	}
}

// processes lists the running container processes as "ns/pod/container pid".
func (n *nodeAgent) processes() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, w := range n.workers {
		out = append(out, w.processes()...)
	}
	sort.Strings(out)
	return out
}

func (n *nodeAgent) podDir(uid types.UID) string {
	dir := filepath.Join(n.workdir, "pods", string(uid))
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

func setPodCondition(st *v1.PodStatus, c v1.PodCondition) {
	now := metav1.Now()
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			if st.Conditions[i].Status != c.Status {
				c.LastTransitionTime = now
			} else {
				c.LastTransitionTime = st.Conditions[i].LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

// recordEvent writes a core/v1 Event about obj, as a component would (best effort).
func recordEvent(ctx context.Context, client kubernetes.Interface, pod *v1.Pod, typ, reason, message, component, host string) {
	now := metav1.Now()
	ev := &v1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name,
			Namespace: pod.Namespace, UID: pod.UID},
		Reason: reason, Message: message, Type: typ, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source:              v1.EventSource{Component: component, Host: host},
		ReportingController: component, ReportingInstance: component + "-" + host,
	}
	if _, err := client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsNotFound(err) && !strings.Contains(err.Error(), "being terminated") && ctx.Err() == nil {
		log.Printf("node agent: event %s on %s/%s: %v", reason, pod.Namespace, pod.Name, err)
	}
}

// scaled maps one of the kubelet's nominal durations onto this agent's faster clock
// (backoff is what the nominal 10 s first back-off became).
func (n *nodeAgent) scaled(nominal time.Duration) time.Duration {
	return time.Duration(float64(nominal) * float64(n.backoff) / float64(backoffInitialNominal))
}
