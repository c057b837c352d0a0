package main

// The control API (plain HTTP on 127.0.0.1, the admin token required) through which
// tests make things happen that only a node or a scheduler can: a kubelet eviction,
// a preemption, an image that never pulls. `envgate-controlplane ctl` is its client.

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// controlInfo is what --write-kubeconfig FILE also writes to FILE.control.
type controlInfo struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

func startControlServer(ctx context.Context, n *nodeAgent, token string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/namespaces/{ns}/pods/{pod}/{action}", func(w http.ResponseWriter, r *http.Request) {
		podAction(ctx, n, w, r)
	})
	mux.HandleFunc("POST /v1/images/unpullable", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Image string `json:"image"`
			On    *bool  `json:"unpullable"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Image == "" {
			reply(w, http.StatusBadRequest, map[string]string{"error": `want {"image": NAME, "unpullable": true|false}`})
			return
		}
		on := body.On == nil || *body.On
		n.setUnpullable(body.Image, on)
		reply(w, http.StatusOK, map[string]any{"image": body.Image, "unpullable": on})
	})
	mux.HandleFunc("GET /v1/processes", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, map[string]any{"processes": n.processes()})
	})
	mux.HandleFunc("GET /v1/healthz", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	auth := func(w http.ResponseWriter, r *http.Request) {
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			reply(w, http.StatusUnauthorized, map[string]string{"error": "Unauthorized"})
			return
		}
		mux.ServeHTTP(w, r)
	}
	srv := &http.Server{Handler: http.HandlerFunc(auth), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

func reply(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func podAction(ctx context.Context, n *nodeAgent, w http.ResponseWriter, r *http.Request) {
	ns, name, action := r.PathValue("ns"), r.PathValue("pod"), r.PathValue("action")
	message := r.URL.Query().Get("message")
	var err error
	switch action {
	case "evict":
		if message == "" {
			message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 10Mi."
		}
		worker, ok := n.worker(ns, name)
		if !ok {
			reply(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("pod %s/%s is not running on this node", ns, name)})
			return
		}
		err = worker.evict(ctx, message)
	case "preempt":
		err = preempt(ctx, n, ns, name)
	case "api-evict":
		err = n.client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})
	default:
		reply(w, http.StatusNotFound, map[string]string{"error": "unknown action " + action + " (evict, preempt, api-evict)"})
		return
	}
	if err != nil {
		reply(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	reply(w, http.StatusOK, map[string]string{"pod": ns + "/" + name, "action": action})
}

// preempt does what the kube-scheduler does to a victim (checked against v1.37.2's on the
// real node tier, test/node): DisruptionTarget PreemptionByScheduler on its status, with
// the pod's generation as observedGeneration, a graceful delete (the pod's own grace
// period), and a Preempted event written as the scheduler writes it (events.k8s.io/v1,
// action Preempting). There is no preemptor here, so the event names none; the
// scheduler's names its UID ("Preempted by pod <uid> on node <node>").
func preempt(ctx context.Context, n *nodeAgent, ns, name string) error {
	pods := n.client.CoreV1().Pods(ns)
	var pod *v1.Pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		setPodCondition(&cur.Status, v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			ObservedGeneration: cur.Generation, Reason: v1.PodReasonPreemptionByScheduler,
			Message: v1.DefaultSchedulerName + ": preempting to accommodate a higher priority pod"})
		pod, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	// Named as client-go's events recorder names them (events.k8s.io rejects a
	// generateName ending in ".").
	now := metav1.NowMicro()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", pod.Name, now.UnixNano()), Namespace: pod.Namespace},
		EventTime:  now, Type: v1.EventTypeNormal, Reason: "Preempted", Action: "Preempting",
		Note:                "Preempted by pod on node " + n.name,
		ReportingController: v1.DefaultSchedulerName, ReportingInstance: v1.DefaultSchedulerName + "-" + host,
		Regarding: v1.ObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, Namespace: pod.Namespace,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion},
	}
	if _, err := n.client.EventsV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		log.Printf("node agent: event Preempted on %s/%s: %v", ns, name, err)
	}
	uid := pod.UID
	return pods.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// ctlMain is `envgate-controlplane ctl [--control FILE] COMMAND ARGS`.
func ctlMain(args []string) int {
	file := ""
	if k := os.Getenv("KUBECONFIG"); k != "" {
		file = k + ".control"
	}
	if len(args) >= 2 && args[0] == "--control" {
		file, args = args[1], args[2:]
	}
	if file == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, ctlUsage)
		return 2
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctl: %v\n", err)
		return 2
	}
	var info controlInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		fmt.Fprintf(os.Stderr, "ctl: %s: %v\n", file, err)
		return 2
	}
	method, path, body, err := ctlRequest(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctl: %v\n%s\n", err, ctlUsage)
		return 2
	}
	req, err := http.NewRequest(method, info.URL+path, strings.NewReader(body))
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctl: %v\n", err)
		return 2
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctl: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	var out json.RawMessage
	_ = json.NewDecoder(resp.Body).Decode(&out)
	fmt.Println(string(out))
	if resp.StatusCode/100 != 2 {
		return 1
	}
	return 0
}

const ctlUsage = `usage: envgate-controlplane ctl [--control FILE] COMMAND
  evict NS/POD [--message TEXT]   kubelet eviction (phase Failed, reason Evicted, DisruptionTarget)
  preempt NS/POD                  DisruptionTarget PreemptionByScheduler, then graceful delete
  api-evict NS/POD                the Eviction API (policy/v1)
  unpullable IMAGE [on|off]       containers of IMAGE never start (ErrImagePull, ImagePullBackOff)
  processes                       the container processes the node agent runs
  healthz
FILE defaults to $KUBECONFIG.control (written by --write-kubeconfig).`

func ctlRequest(args []string) (method, path, body string, err error) {
	switch args[0] {
	case "evict", "preempt", "api-evict":
		if len(args) < 2 || !strings.Contains(args[1], "/") {
			return "", "", "", fmt.Errorf("%s needs NS/POD", args[0])
		}
		ns, pod, _ := strings.Cut(args[1], "/")
		path = fmt.Sprintf("/v1/namespaces/%s/pods/%s/%s", ns, pod, args[0])
		if len(args) == 4 && args[2] == "--message" {
			path += "?message=" + url.QueryEscape(args[3])
		}
		return http.MethodPost, path, "", nil
	case "unpullable":
		if len(args) < 2 {
			return "", "", "", fmt.Errorf("unpullable needs IMAGE")
		}
		on := len(args) < 3 || args[2] != "off"
		b, _ := json.Marshal(map[string]any{"image": args[1], "unpullable": on})
		return http.MethodPost, "/v1/images/unpullable", string(b), nil
	case "processes":
		return http.MethodGet, "/v1/processes", "", nil
	case "healthz":
		return http.MethodGet, "/v1/healthz", "", nil
	}
	return "", "", "", fmt.Errorf("unknown command %q", args[0])
}
