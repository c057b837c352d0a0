package main

// One container of a pod on the node agent: its process, its instances' logs and the
// container state machine (running, waiting CrashLoopBackOff / ErrImagePull /
// CreateContainerConfigError, terminated) as the kubelet reports it.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	backoffInitialNominal = 10 * time.Second  // kubelet's first crash-loop back-off
	backoffMaxNominal     = 300 * time.Second // its cap
	backoffResetNominal   = 600 * time.Second // a run this long forgives earlier crashes
	terminationMessageMax = 4096
)

type exitMsg struct {
	c    *container
	pid  int
	code int
}

type container struct {
	spec  v1.Container
	init  bool
	pod   *podWorker
	index int

	instances    int // processes started so far
	restartCount int32
	state        v1.ContainerState
	lastState    v1.ContainerState
	prevLast     v1.ContainerState // lastState before a crash loop's waiting state
	cmd          *exec.Cmd
	startedAt    time.Time
	done         bool // will not run again
	stopping     bool
	crashes      int
	restartAt    time.Time     // when a pending restart is due
	backoff      time.Duration // nominal back-off of a crash not yet shown as CrashLoopBackOff
	pending      bool          // a restart (or a retried start) is pending
	imageTries   int
	configErrMsg string
}

func newContainer(p *podWorker, spec v1.Container, init bool, index int) *container {
	return &container{spec: spec, init: init, pod: p, index: index,
		state: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultWaiting(p.pod)}}}
}

// defaultWaiting is the kubelet's waiting reason for a container it has not created:
// PodInitializing in a pod with init containers (for all of them), else ContainerCreating.
func defaultWaiting(pod *v1.Pod) string {
	if len(pod.Spec.InitContainers) > 0 {
		return "PodInitializing"
	}
	return "ContainerCreating"
}

func (c *container) running() bool { return c.cmd != nil }

func (c *container) succeeded() bool {
	return c.done && c.state.Terminated != nil && c.state.Terminated.ExitCode == 0
}

func (c *container) containerID(instance int) string {
	uid := strings.ReplaceAll(string(c.pod.uid), "-", "")
	if len(uid) > 12 {
		uid = uid[:12]
	}
	return fmt.Sprintf("local://%s-%s-%d", uid, c.spec.Name, instance)
}

func (c *container) logPath(instance int) string {
	return filepath.Join(c.pod.dir, fmt.Sprintf("%s-%d.log", c.spec.Name, instance))
}

func (c *container) termLogPath(instance int) string {
	return filepath.Join(c.pod.dir, fmt.Sprintf("%s-%d.termlog", c.spec.Name, instance))
}

// due reports whether the container should be started now.
func (c *container) due(now time.Time) bool {
	return !c.done && c.cmd == nil && !c.stopping && (!c.pending || !now.Before(c.restartAt))
}

// start starts the container's process, or records why it cannot start (an image that
// never pulls, a missing Secret or ConfigMap, no command). It returns true when the
// container's status changed.
func (c *container) start(now time.Time) bool {
	agent := c.pod.agent
	if agent.imageUnpullable(c.spec.Image) {
		return c.imagePullFailed(now)
	}
	env, err := c.pod.resolveEnv(c.spec)
	if err != nil {
		return c.configError(now, err.Error())
	}
	argv := append(append([]string{}, c.spec.Command...), c.spec.Args...)
	argv = expandArgs(argv, env)
	if len(c.spec.Command) == 0 {
		return c.configError(now, "the node agent runs container commands only: no command")
	}
	instance := c.instances
	logFile, err := os.OpenFile(c.logPath(instance), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return c.configError(now, err.Error())
	}
	defer logFile.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.pod.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	restarts := c.restartCount
	if c.instances > 0 {
		restarts++
	}
	cmd.Env = append([]string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + c.pod.dir,
		"HOSTNAME=" + c.pod.name,
		// The same variables as kubesim's kubelet, so one manifest runs on both.
		"KUBESIM_POD_NAME=" + c.pod.name,
		"KUBESIM_NAMESPACE=" + c.pod.ns,
		"KUBESIM_POD_UID=" + string(c.pod.uid),
		"KUBESIM_CONTAINER=" + c.spec.Name,
		fmt.Sprintf("KUBESIM_RESTART_COUNT=%d", restarts),
		"KUBESIM_TERMINATION_LOG=" + c.termLogPath(instance),
	}, envList(env)...)
	// Its own process group (signals reach the whole container), killed with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	startErr := cmd.Start()
	if c.instances > 0 {
		c.restartCount++
		if c.state.Terminated != nil {
			c.lastState = c.state
		}
	}
	c.instances++
	c.pending, c.backoff = false, 0
	c.startedAt = now
	c.configErrMsg = ""
	if startErr != nil {
		fmt.Fprintln(logFile, startErr)
		c.state = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			ExitCode: 128, Reason: "StartError", Message: startErr.Error(),
			FinishedAt: metav1.NewTime(now), ContainerID: c.containerID(instance)}}
		c.exited(128, now)
		return true
	}
	c.cmd = cmd
	pid := cmd.Process.Pid
	go func() {
		_ = cmd.Wait()
		c.pod.exits <- exitMsg{c: c, pid: pid, code: exitCode(cmd.ProcessState)}
	}()
	c.state = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
	c.pod.event(v1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", c.spec.Image))
	c.pod.event(v1.EventTypeNormal, "Created", "Created container: "+c.spec.Name)
	c.pod.event(v1.EventTypeNormal, "Started", "Started container "+c.spec.Name)
	return true
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 128
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// imagePullFailed: ErrImagePull at first, then ImagePullBackOff, retried with the
// kubelet's back-off, forever while the image stays unpullable.
func (c *container) imagePullFailed(now time.Time) bool {
	c.imageTries++
	c.pending = true
	c.restartAt = now.Add(c.pod.agent.scaled(backoffInitialNominal))
	msg := fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %q: not found",
		c.spec.Image, c.spec.Image, c.spec.Image)
	if c.imageTries == 1 || c.imageTries%2 == 1 {
		c.pod.event(v1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", c.spec.Image, msg))
		c.pod.event(v1.EventTypeWarning, "Failed", "Error: ErrImagePull")
		c.state = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull", Message: msg}}
	} else {
		c.pod.event(v1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", c.spec.Image))
		c.pod.event(v1.EventTypeWarning, "Failed", "Error: ImagePullBackOff")
		c.state = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", c.spec.Image, msg)}}
	}
	return true
}

// configError: CreateContainerConfigError (a missing Secret or key), retried every
// second or so as the kubelet's pod sync does.
func (c *container) configError(now time.Time, msg string) bool {
	c.pending = true
	c.restartAt = now.Add(time.Second)
	if c.configErrMsg == msg {
		return false
	}
	c.configErrMsg = msg
	c.pod.event(v1.EventTypeWarning, "Failed", "Error: "+msg)
	c.state = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: msg}}
	return true
}

// finished records the end of the running process.
func (c *container) finished(code int, now time.Time) {
	c.cmd = nil
	instance := c.instances - 1
	started := metav1.NewTime(c.startedAt)
	if c.state.Running != nil {
		started = c.state.Running.StartedAt
	}
	reason := "Error"
	if code == 0 {
		reason = "Completed"
	}
	t := &v1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason, StartedAt: started,
		FinishedAt: metav1.NewTime(now), ContainerID: c.containerID(instance),
		Message: c.terminationMessage(code, instance)}
	c.state = v1.ContainerState{Terminated: t}
	c.exited(code, now)
}

func (c *container) terminationMessage(code, instance int) string {
	msg := readLimited(c.termLogPath(instance), terminationMessageMax)
	if msg == "" && code != 0 && c.spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError {
		msg = tailLines(readLimited(c.logPath(instance), 1<<20), 80, 2048)
	}
	return msg
}

// exited applies the restart policy to a run that ended with `code`.
func (c *container) exited(code int, now time.Time) {
	policy := c.pod.restartPolicy
	restart := !c.stopping && (policy == v1.RestartPolicyAlways || (policy == v1.RestartPolicyOnFailure && code != 0))
	if !restart {
		c.done = true
		return
	}
	if now.Sub(c.startedAt) >= c.pod.agent.scaled(backoffResetNominal) {
		c.crashes = 0
	}
	c.crashes++
	c.pending = true
	if c.crashes == 1 {
		c.restartAt = now // the kubelet restarts a first crash at once
		return
	}
	delay := backoffInitialNominal
	for i := 2; i < c.crashes && delay < backoffMaxNominal; i++ {
		delay = min(delay*2, backoffMaxNominal)
	}
	c.restartAt = now.Add(c.pod.agent.scaled(delay))
	c.backoff = delay // CrashLoopBackOff once the terminated state was written (backOff)
}

// backOff moves a crashed container whose restart is backed off from its terminated
// state to waiting CrashLoopBackOff (the kubelet's next status, after the SyncPod that
// met the back-off); it reports whether it did.
func (c *container) backOff() bool {
	if c.backoff == 0 || c.done || !c.pending || c.state.Terminated == nil {
		return false
	}
	podRef := fmt.Sprintf("%s_%s(%s)", c.pod.name, c.pod.ns, c.pod.uid)
	c.pod.event(v1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s", c.spec.Name, podRef))
	c.prevLast, c.lastState = c.lastState, c.state
	c.state = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
		Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", c.backoff, c.spec.Name, podRef)}}
	c.backoff = 0
	return true
}

// deleting: the state the kubelet reports for the container once its pod is deleted.
// A start error (the reason cache: CrashLoopBackOff, CreateContainerConfigError,
// ErrImagePull) is shown only for a container that would be restarted, which a deleted
// pod's are not: a crash-looping container shows its last run terminated (and the run
// before as its last state), one never started the default waiting reason.
func (c *container) deleting() {
	if c.state.Waiting == nil {
		return
	}
	if c.lastState.Terminated != nil {
		c.state, c.lastState = c.lastState, c.prevLast
		return
	}
	c.state = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: defaultWaiting(c.pod.pod)}}
}

// terminate begins a graceful stop (the pod is being deleted).
func (c *container) terminate() {
	c.stopping = true
	c.pending = false
	switch {
	case c.cmd != nil:
		// The runtime stops a container by signalling its PID 1 alone, and the kernel
		// delivers a signal to a PID namespace's init only when it set a handler: a
		// shell that did not trap TERM carries on (SIGKILL at the grace period's end
		// ends it and everything it started). The node agent's container processes are
		// not PID 1 of a namespace, so it asks first.
		if pid := c.cmd.Process.Pid; catches(pid, syscall.SIGTERM) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
		c.pod.event(v1.EventTypeNormal, "Killing", "Stopping container "+c.spec.Name)
	default:
		c.done = true
	}
}

// catches reports whether process pid has a handler for sig (SigCgt in
// /proc/PID/status): what a PID namespace's init must have for the signal to reach it.
func catches(pid int, sig syscall.Signal) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}

func (c *container) kill() {
	c.stopping = true
	c.pending = false
	if c.cmd != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// evicted: the container was killed by a kubelet eviction; its state is what the
// kubelet reports for a container it no longer finds.
func (c *container) evicted() {
	c.done = true
	c.state = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137,
		Reason:  "ContainerStatusUnknown",
		Message: "The container could not be located when the pod was terminated"}}
}

func (c *container) status() v1.ContainerStatus {
	isRunning := c.state.Running != nil
	st := v1.ContainerStatus{Name: c.spec.Name, Image: c.spec.Image, ImageID: "",
		Ready: isRunning, RestartCount: c.restartCount, State: c.state, LastTerminationState: c.lastState}
	started := isRunning
	st.Started = &started
	if c.instances > 0 && c.state.Waiting == nil {
		st.ContainerID = c.containerID(c.instances - 1)
	}
	if c.init {
		st.Ready = c.succeeded()
		st.Started = nil
	}
	return st
}

// logFile finds the log of the current (or, with previous, the last terminated)
// instance, with the kubelet's error texts.
func (c *container) logFile(previous bool) (string, error) {
	id := ""
	if previous {
		if c.lastState.Terminated != nil {
			id = c.lastState.Terminated.ContainerID
		}
		if id == "" {
			return "", fmt.Errorf("previous terminated container %q in pod %q not found", c.spec.Name, c.pod.name)
		}
	} else {
		switch {
		case c.state.Running != nil:
			id = c.containerID(c.instances - 1)
		case c.state.Terminated != nil:
			id = c.state.Terminated.ContainerID
		case c.lastState.Terminated != nil:
			id = c.lastState.Terminated.ContainerID
		default:
			return "", fmt.Errorf("container %q in pod %q is waiting to start: %s", c.spec.Name, c.pod.name, c.state.Waiting.Reason)
		}
	}
	for i := 0; i < c.instances; i++ {
		if c.containerID(i) == id {
			return c.logPath(i), nil
		}
	}
	return "", fmt.Errorf("container %q in pod %q: log not found", c.spec.Name, c.pod.name)
}

func readLimited(path string, limit int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, limit)
	n, _ := f.Read(buf)
	return string(buf[:n])
}

func tailLines(text string, maxLines, maxBytes int) string {
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out = out[len(out)-maxBytes:]
	}
	return out
}
