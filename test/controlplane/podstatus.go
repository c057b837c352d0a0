package main

// The pod status the node agent writes, generated as the kubelet generates it
// (k8s.io/kubernetes v1.37.2, pkg/kubelet/kubelet_pods.go generateAPIPodStatus and
// getPhase, pkg/kubelet/status/generate.go, status_manager.go mergePodStatus and
// TerminatePod): the phase from the container statuses, the kubelet-owned conditions
// from the phase, and a terminal phase held back while the pod's sandbox is up.

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Sandbox states: the kubelet's PodReadyToStartContainers condition is True only while
// the pod's sandbox is up (GeneratePodReadyToStartContainersCondition).
const (
	sandboxNone    = iota // not created yet: the kubelet's first status shows it missing
	sandboxReady          // created (the kubelet's next status: PodReadyToStartContainers True)
	sandboxStopped        // stopped at the pod's end (the pod worker is terminated)
)

// podPhase is the kubelet's getPhase for regular init containers and containers:
// podIsTerminal is true once the pod worker stopped every container (the restart
// policy no longer counts).
func podPhase(policy v1.RestartPolicy, init, app []v1.ContainerStatus, podIsTerminal bool) v1.PodPhase {
	pendingInit, failedInit := 0, 0
	for _, s := range init {
		switch {
		case s.State.Running != nil:
			pendingInit++
		case s.State.Terminated != nil:
			if s.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			if s.LastTerminationState.Terminated.ExitCode != 0 {
				failedInit++
			}
		default:
			pendingInit++
		}
	}
	running, waiting, stopped, succeeded := 0, 0, 0, 0
	for _, s := range app {
		switch {
		case s.State.Running != nil:
			running++
		case s.State.Terminated != nil:
			stopped++
			if s.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case s.State.Waiting != nil && s.LastTerminationState.Terminated != nil:
			stopped++
		default:
			waiting++
		}
	}
	if failedInit > 0 && policy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	switch {
	case pendingInit > 0 || waiting > 0:
		return v1.PodPending
	case running > 0:
		return v1.PodRunning
	case stopped > 0:
		if podIsTerminal || policy == v1.RestartPolicyNever || (policy == v1.RestartPolicyOnFailure && stopped == succeeded) {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		return v1.PodRunning // restarting
	}
	return v1.PodPending
}

func terminalPhase(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }

// kubeletConditions are the conditions the kubelet owns, generated for `phase`.
func kubeletConditions(phase v1.PodPhase, sandbox int, init, app []v1.ContainerStatus) []v1.PodCondition {
	cond := func(t v1.PodConditionType, ok bool, reason, message string) v1.PodCondition {
		if ok {
			return v1.PodCondition{Type: t, Status: v1.ConditionTrue}
		}
		return v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: reason, Message: message}
	}
	prtsc := cond(v1.PodReadyToStartContainers, sandbox == sandboxReady, "PodSandboxNotReady", "")

	// Initialized: PodCompleted once Succeeded; true once a regular container started.
	var initialized v1.PodCondition
	var incomplete []string
	for _, s := range init {
		if !s.Ready {
			incomplete = append(incomplete, s.Name)
		}
	}
	anyStarted := false
	for _, s := range app {
		anyStarted = anyStarted || s.State.Running != nil || s.State.Terminated != nil
	}
	switch {
	case phase == v1.PodSucceeded:
		initialized = v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue, Reason: "PodCompleted"}
	case anyStarted || len(incomplete) == 0:
		initialized = cond(v1.PodInitialized, true, "", "")
	default:
		initialized = cond(v1.PodInitialized, false, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: %s", incomplete))
	}

	// ContainersReady and Ready: PodCompleted / PodFailed in a terminal phase.
	var unready []string
	for _, s := range app {
		if !s.Ready {
			unready = append(unready, s.Name)
		}
	}
	var ready v1.PodCondition
	switch {
	case phase == v1.PodSucceeded:
		ready = cond(v1.ContainersReady, false, "PodCompleted", "")
	case phase == v1.PodFailed:
		ready = cond(v1.ContainersReady, false, "PodFailed", "")
	case len(app) == 0:
		ready = cond(v1.ContainersReady, false, "UnknownContainerStatuses", "")
	default:
		ready = cond(v1.ContainersReady, len(unready) == 0, "ContainersNotReady",
			fmt.Sprintf("containers with unready status: %s", unready))
	}
	podReady := ready
	podReady.Type = v1.PodReady
	return []v1.PodCondition{prtsc, initialized, podReady, ready,
		{Type: v1.PodScheduled, Status: v1.ConditionTrue}}
}

// unknownAtTermination is the state TerminatePod gives a container that has no
// terminated state when the pod worker finished.
func unknownAtTermination() v1.ContainerState {
	return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137,
		Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated"}}
}
