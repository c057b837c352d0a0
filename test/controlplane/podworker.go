package main

// A pod worker of the node agent: it owns one pod on this node, starts its init
// containers in order and then its containers, applies the restart policy, stops the
// pod gracefully when it is deleted, and writes the pod's status as the kubelet does.

import (
	"context"
	"fmt"
	"log"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

type podWorker struct {
	agent         *nodeAgent
	ns, name      string
	uid           types.UID
	dir           string
	restartPolicy v1.RestartPolicy

	mu          sync.Mutex // guards the fields below and the containers' state
	pod         *v1.Pod    // the newest object seen
	init, app   []*container
	startTime   metav1.Time
	terminating bool
	sandbox     int // sandboxNone, sandboxReady, sandboxStopped
	killAt      time.Time
	finished    bool // final status written (or evicted): no more status writes
	gone        bool
	lastWritten *v1.PodStatus
	events      []pendingEvent

	updates chan struct{}
	exits   chan exitMsg
	stop    chan struct{}
	ctx     context.Context
}

type pendingEvent struct{ typ, reason, message string }

func newPodWorker(agent *nodeAgent, pod *v1.Pod) *podWorker {
	w := &podWorker{agent: agent, ns: pod.Namespace, name: pod.Name, uid: pod.UID,
		dir: agent.podDir(pod.UID), restartPolicy: pod.Spec.RestartPolicy, pod: pod,
		startTime: metav1.Now(),
		updates:   make(chan struct{}, 1), exits: make(chan exitMsg, 16), stop: make(chan struct{})}
	for i, c := range pod.Spec.InitContainers {
		w.init = append(w.init, newContainer(w, c, true, i))
	}
	for i, c := range pod.Spec.Containers {
		w.app = append(w.app, newContainer(w, c, false, i))
	}
	return w
}

func (w *podWorker) all() []*container { return append(append([]*container{}, w.init...), w.app...) }

func (w *podWorker) update(pod *v1.Pod) {
	w.mu.Lock()
	w.pod = pod
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) poke() {
	select {
	case w.updates <- struct{}{}:
	default:
	}
}

// removed: the pod object is gone; its processes are killed at once.
func (w *podWorker) removed() {
	w.mu.Lock()
	w.gone = true
	w.mu.Unlock()
	w.poke()
}

func (w *podWorker) run(ctx context.Context) {
	w.ctx = ctx
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			w.killAll()
			return
		case <-w.updates:
		case e := <-w.exits:
			w.mu.Lock()
			if e.c.cmd != nil && e.c.cmd.Process.Pid == e.pid {
				e.c.finished(e.code, time.Now())
			}
			w.mu.Unlock()
		case <-timer.C:
		}
		next, done := w.sync(ctx)
		if done {
			return
		}
		timer.Reset(next)
	}
}

// sync moves the pod one step on as the kubelet's pod worker does: it writes the
// status of what it observed, then acts (creates the sandbox, starts or restarts
// containers, stops the pod); what an action changes is written by the next sync. It
// returns when to look again, and whether the worker is done.
func (w *podWorker) sync(ctx context.Context) (time.Duration, bool) {
	w.mu.Lock()
	now := time.Now()
	if w.gone {
		w.killLocked()
		w.mu.Unlock()
		w.waitReaped()
		_ = os.RemoveAll(w.dir)
		return 0, true
	}
	if w.finished {
		w.mu.Unlock()
		return time.Hour, false
	}
	var writes []*v1.PodStatus
	emit := func(st *v1.PodStatus) {
		if st != nil {
			writes = append(writes, st)
		}
	}
	pod := w.pod
	soon, final := false, false
	if pod.DeletionTimestamp != nil && !w.terminating {
		// SyncTerminatingPod: the status as seen (a deleted pod's waiting containers show
		// no start error any more), then the containers are stopped.
		w.terminating = true
		grace := int64(30)
		if pod.DeletionGracePeriodSeconds != nil {
			grace = *pod.DeletionGracePeriodSeconds
		}
		w.killAt = now.Add(time.Duration(grace) * time.Second)
		for _, c := range w.all() {
			c.deleting()
		}
		emit(w.buildStatus(false))
		for _, c := range w.all() {
			c.terminate()
		}
	}
	switch {
	case w.terminating:
		anyRunning := false
		for _, c := range w.all() {
			if c.running() && !now.Before(w.killAt) {
				c.kill()
			}
			anyRunning = anyRunning || c.running()
		}
		// Once all stopped, the sandbox goes, the terminal status is written, then
		// TerminatePod's. While one still runs, a container that ended is published:
		// the kubelet writes nothing while its killPod waits, but the agent's back-off
		// (1/100 of the kubelet's) can start a run the kubelet's would not have, and a
		// container holding the pod (trap '' TERM) would hide that run's end until the
		// pod is deleted at once after it (test/controlplane/README.md, "Differences").
		if anyRunning {
			emit(w.buildStatus(false))
		} else {
			final = true
			w.sandbox = sandboxStopped
			emit(w.buildStatus(true))
			emit(w.terminatePod())
		}
	case w.sandbox == sandboxStopped:
		// Ended on its own: nothing runs until the pod is deleted.
	default:
		emit(w.buildStatus(false))
		switch {
		case terminalPhase(w.naturalPhase()):
			// The pod ended (SyncPod says terminal): its worker stops the sandbox and
			// writes the terminal phase, held back until then.
			w.sandbox = sandboxStopped
			emit(w.buildStatus(true))
		case w.sandbox == sandboxNone:
			w.sandbox = sandboxReady
			soon = true
		default:
			soon = w.startDue(now)
		}
	}
	events := w.events
	w.events = nil
	wake := w.nextWake(now)
	if soon {
		wake = time.Millisecond
	}
	if final {
		w.finished = true
	}
	w.mu.Unlock()

	w.flushEvents(ctx, events)
	for _, st := range writes {
		w.writeStatus(ctx, st)
	}
	if final {
		w.finalDelete(ctx)
	}
	return wake, false
}

// startDue starts (or restarts) the containers due now, and puts a crashed one whose
// restart is backed off into CrashLoopBackOff; it returns whether a status changed.
// A container that exited is acted on only here, after the sync wrote its terminated
// state: the kubelet's SyncPod writes the status it observed before it restarts
// (kubelet.go SyncPod: generateAPIPodStatus and SetPodStatus, then the runtime's
// SyncPod), so a failed run is published as terminated, restartCount unchanged.
func (w *podWorker) startDue(now time.Time) bool {
	changed := false
	act := func(c *container) {
		switch {
		case c.due(now):
			changed = c.start(now) || changed
		case c.backOff():
			changed = true
		}
	}
	for _, c := range w.init {
		if c.succeeded() {
			continue
		}
		if c.done { // failed for good (restartPolicy Never)
			return changed
		}
		act(c)
		return changed
	}
	for _, c := range w.app {
		act(c)
	}
	return changed
}

func (w *podWorker) nextWake(now time.Time) time.Duration {
	next := time.Hour
	for _, c := range w.all() {
		if c.pending && !c.done {
			next = min(next, c.restartAt.Sub(now))
		}
	}
	if w.terminating {
		next = min(next, w.killAt.Sub(now))
	}
	return max(next, time.Millisecond)
}

func (w *podWorker) statuses() (init, app []v1.ContainerStatus) {
	for _, c := range w.init {
		init = append(init, c.status())
	}
	for _, c := range w.app {
		app = append(app, c.status())
	}
	return init, app
}

// naturalPhase is the phase SyncPod computes (the restart policy still counts).
func (w *podWorker) naturalPhase() v1.PodPhase {
	init, app := w.statuses()
	return podPhase(w.restartPolicy, init, app, false)
}

// oldPhase is the phase last written (or the API's): what a held-back terminal phase
// stays at.
func (w *podWorker) oldPhase() v1.PodPhase {
	switch {
	case w.lastWritten != nil:
		return w.lastWritten.Phase
	case w.pod.Status.Phase != "":
		return w.pod.Status.Phase
	}
	return v1.PodPending
}

// buildStatus generates the status as the kubelet does (generateAPIPodStatus, then the
// status manager's merge: a terminal phase is held back while the sandbox is up, with
// the conditions already those of the terminal phase); nil when nothing changed since
// the last write.
func (w *podWorker) buildStatus(podIsTerminal bool) *v1.PodStatus {
	init, app := w.statuses()
	phase := podPhase(w.restartPolicy, init, app, podIsTerminal)
	st := v1.PodStatus{Phase: phase, HostIP: "127.0.0.1", PodIP: "127.0.0.1",
		HostIPs: []v1.HostIP{{IP: "127.0.0.1"}}, PodIPs: []v1.PodIP{{IP: "127.0.0.1"}},
		StartTime: &w.startTime, QOSClass: v1.PodQOSBestEffort,
		ContainerStatuses: app, InitContainerStatuses: init,
		Conditions: kubeletConditions(phase, w.sandbox, init, app)}
	if old := w.oldPhase(); terminalPhase(phase) && !terminalPhase(old) && w.sandbox != sandboxStopped {
		st.Phase = old
	}
	return w.changed(&st)
}

func (w *podWorker) changed(st *v1.PodStatus) *v1.PodStatus {
	if w.lastWritten != nil && reflect.DeepEqual(*w.lastWritten, *st) {
		return nil
	}
	w.lastWritten = st.DeepCopy()
	return st
}

// terminatePod is the status manager's TerminatePod: once the pod worker finished, a
// container with no terminated state is reported 137 ContainerStatusUnknown (an init
// container only up to the last one that started) and a Pending or Running phase
// becomes Failed; the conditions stay as they were.
func (w *podWorker) terminatePod() *v1.PodStatus {
	if w.lastWritten == nil {
		return nil
	}
	st := w.lastWritten.DeepCopy()
	lastStarted := -1
	for i, s := range st.InitContainerStatuses {
		if s.State.Waiting == nil || s.LastTerminationState.Terminated != nil {
			lastStarted = i
		}
	}
	initialized := len(st.InitContainerStatuses) == 0
	for _, c := range w.app {
		initialized = initialized || c.instances > 0
	}
	for i := range st.InitContainerStatuses {
		if i <= lastStarted && st.InitContainerStatuses[i].State.Terminated == nil {
			st.InitContainerStatuses[i].State = unknownAtTermination()
		}
	}
	if initialized {
		for i := range st.ContainerStatuses {
			if st.ContainerStatuses[i].State.Terminated == nil {
				st.ContainerStatuses[i].State = unknownAtTermination()
			}
		}
	}
	if !terminalPhase(st.Phase) {
		st.Phase = v1.PodFailed
	}
	return w.changed(st)
}

// writeStatus merges the kubelet's part of the status into the newest pod: conditions
// written by others (DisruptionTarget) are kept, and a terminal phase is never left.
func (w *podWorker) writeStatus(ctx context.Context, mine *v1.PodStatus) {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := w.agent.client.CoreV1().Pods(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.UID != w.uid {
			return nil
		}
		st := cur.Status
		if !terminalPhase(st.Phase) {
			st.Phase = mine.Phase
		}
		st.HostIP, st.PodIP, st.HostIPs, st.PodIPs = mine.HostIP, mine.PodIP, mine.HostIPs, mine.PodIPs
		st.StartTime, st.QOSClass = mine.StartTime, mine.QOSClass
		st.ContainerStatuses, st.InitContainerStatuses = mine.ContainerStatuses, mine.InitContainerStatuses
		for _, c := range mine.Conditions {
			if terminalPhase(st.Phase) && (c.Type == v1.PodReady || c.Type == v1.ContainersReady) && c.Status == v1.ConditionTrue {
				c = v1.PodCondition{Type: c.Type, Status: v1.ConditionFalse, Reason: "PodFailed"}
				if st.Phase == v1.PodSucceeded {
					c.Reason = "PodCompleted"
				}
			}
			setPodCondition(&st, c)
		}
		cur.Status = st
		_, err = w.agent.client.CoreV1().Pods(w.ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		log.Printf("node agent: status of %s/%s: %v", w.ns, w.name, err)
	}
}

// finalDelete is the kubelet's last word on a deleted pod: delete with grace 0 (the
// object goes once no finalizer holds it).
func (w *podWorker) finalDelete(ctx context.Context) {
	zero := int64(0)
	uid := w.uid
	err := w.agent.client.CoreV1().Pods(w.ns).Delete(ctx, w.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		log.Printf("node agent: final delete of %s/%s: %v", w.ns, w.name, err)
	}
}

func (w *podWorker) event(typ, reason, message string) {
	w.events = append(w.events, pendingEvent{typ, reason, message})
}

func (w *podWorker) flushEvents(ctx context.Context, events []pendingEvent) {
	for _, e := range events {
		recordEvent(ctx, w.agent.client, w.pod, e.typ, e.reason, e.message, "kubelet", w.agent.name)
	}
}

// evict is the kubelet's eviction manager: containers killed, then one status write
// with phase Failed, reason Evicted and DisruptionTarget TerminationByKubelet.
func (w *podWorker) evict(ctx context.Context, message string) error {
	w.mu.Lock()
	// Finished before the kill: the run loop may reap a container first, and its sync
	// must not write a Failed/137 status of its own ahead of the eviction's one write.
	w.finished = true
	w.killLocked()
	w.mu.Unlock()
	w.waitReaped()
	w.mu.Lock()
	for _, c := range w.all() {
		c.evicted()
	}
	init, app := w.statuses()
	w.mu.Unlock()
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := w.agent.client.CoreV1().Pods(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		st := &cur.Status
		st.Phase, st.Reason, st.Message = v1.PodFailed, "Evicted", message
		st.ContainerStatuses, st.InitContainerStatuses = app, init
		setPodCondition(st, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Reason: "TerminationByKubelet", Message: message})
		setPodCondition(st, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: "PodFailed"})
		setPodCondition(st, v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: "PodFailed"})
		_, err = w.agent.client.CoreV1().Pods(w.ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	recordEvent(ctx, w.agent.client, w.pod, v1.EventTypeWarning, "Evicted", message, "kubelet", w.agent.name)
	return nil
}

func (w *podWorker) killLocked() {
	for _, c := range w.all() {
		c.kill()
	}
}

func (w *podWorker) killAll() {
	w.mu.Lock()
	w.killLocked()
	w.mu.Unlock()
	w.waitReaped()
}

// waitReaped waits (at most 5 s) until no container process of the pod is alive; it
// must be called without w.mu held.
func (w *podWorker) waitReaped() {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		alive := false
		for _, c := range w.all() {
			alive = alive || c.running()
		}
		w.mu.Unlock()
		if !alive {
			return
		}
		select {
		case e := <-w.exits:
			w.mu.Lock()
			if e.c.cmd != nil && e.c.cmd.Process.Pid == e.pid {
				e.c.finished(e.code, time.Now())
			}
			w.mu.Unlock()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *podWorker) processes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.all() {
		if c.cmd != nil {
			out = append(out, fmt.Sprintf("%s/%s/%s %d", w.ns, w.name, c.spec.Name, c.cmd.Process.Pid))
		}
	}
	return out
}

func (w *podWorker) logFile(container string, previous bool) (string, bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.all() {
		if c.spec.Name == container {
			path, err := c.logFile(previous)
			return path, c.running() && !previous, err
		}
	}
	return "", false, fmt.Errorf("container %s is not valid for pod %s", container, w.name)
}

// resolveEnv resolves the container's env and envFrom as the kubelet does (fieldRef,
// Secret and ConfigMap keys, $(VAR) references), or says why it cannot.
func (w *podWorker) resolveEnv(spec v1.Container) (map[string]string, error) {
	env := map[string]string{}
	set := func(k, v string) { env[k] = v }
	for _, from := range spec.EnvFrom {
		data, err := w.envSource(from)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	for _, e := range spec.Env {
		value := e.Value
		if e.ValueFrom == nil {
			value = expansion.Expand(value, expansion.MappingFuncFor(env))
		} else {
			v, err := w.envValueFrom(e.ValueFrom)
			if err != nil {
				return nil, err
			}
			value = v
		}
		set(e.Name, value)
	}
	return env, nil
}

func (w *podWorker) envValueFrom(src *v1.EnvVarSource) (string, error) {
	switch {
	case src.FieldRef != nil:
		switch src.FieldRef.FieldPath {
		case "metadata.name":
			return w.name, nil
		case "metadata.namespace":
			return w.ns, nil
		case "metadata.uid":
			return string(w.uid), nil
		case "spec.nodeName":
			return w.agent.name, nil
		case "spec.serviceAccountName":
			return w.pod.Spec.ServiceAccountName, nil
		case "status.hostIP", "status.podIP":
			return "127.0.0.1", nil
		}
		if key, ok := subscript(src.FieldRef.FieldPath, "metadata.annotations"); ok {
			return w.pod.Annotations[key], nil
		}
		if key, ok := subscript(src.FieldRef.FieldPath, "metadata.labels"); ok {
			return w.pod.Labels[key], nil
		}
		return "", fmt.Errorf("unsupported fieldPath %q", src.FieldRef.FieldPath)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		return w.key("Secret", ref.Name, ref.Key, ref.Optional)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		return w.key("ConfigMap", ref.Name, ref.Key, ref.Optional)
	}
	return "", nil
}

// key is one key of a Secret or ConfigMap, with the kubelet's error texts.
func (w *podWorker) key(kind, name, key string, optional *bool) (string, error) {
	data, found, err := w.sourceData(kind, name)
	opt := optional != nil && *optional
	switch {
	case err != nil:
		return "", err
	case !found && opt:
		return "", nil
	case !found:
		return "", fmt.Errorf("%s %q not found", strings.ToLower(kind), name)
	}
	v, ok := data[key]
	if !ok && !opt {
		return "", fmt.Errorf("couldn't find key %s in %s %s/%s", key, kind, w.ns, name)
	}
	return v, nil
}

func (w *podWorker) envSource(from v1.EnvFromSource) (map[string]string, error) {
	kind, name, optional := "", "", (*bool)(nil)
	switch {
	case from.SecretRef != nil:
		kind, name, optional = "Secret", from.SecretRef.Name, from.SecretRef.Optional
	case from.ConfigMapRef != nil:
		kind, name, optional = "ConfigMap", from.ConfigMapRef.Name, from.ConfigMapRef.Optional
	default:
		return map[string]string{}, nil
	}
	data, found, err := w.sourceData(kind, name)
	switch {
	case err != nil:
		return nil, err
	case !found && optional != nil && *optional:
		return map[string]string{}, nil
	case !found:
		return nil, fmt.Errorf("%s %q not found", strings.ToLower(kind), name)
	}
	return data, nil
}

// sourceData reads a Secret's (decoded) or a ConfigMap's data; found is false when it
// does not exist.
func (w *podWorker) sourceData(kind, name string) (map[string]string, bool, error) {
	out := map[string]string{}
	var err error
	if kind == "Secret" {
		var s *v1.Secret
		if s, err = w.agent.client.CoreV1().Secrets(w.ns).Get(w.ctx, name, metav1.GetOptions{}); err == nil {
			for k, v := range s.Data {
				out[k] = string(v)
			}
		}
	} else {
		var cm *v1.ConfigMap
		if cm, err = w.agent.client.CoreV1().ConfigMaps(w.ns).Get(w.ctx, name, metav1.GetOptions{}); err == nil {
			out = cm.Data
		}
	}
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	return out, err == nil, err
}

func expandArgs(argv []string, env map[string]string) []string {
	mapping := expansion.MappingFuncFor(env)
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = expansion.Expand(a, mapping)
	}
	return out
}

func envList(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

// subscript parses `PREFIX['KEY']` (a fieldRef such as metadata.annotations['a/b']).
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}
