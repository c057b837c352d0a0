// Command envgate-controlplane runs, in one process, a real Kubernetes control plane
// for envgate's tests: embedded etcd, the real kube-apiserver (TLS from a generated CA,
// bearer tokens, RBAC), the real Job controller with its pod-failure back-off lowered,
// the garbage collector, TTL-after-finished and namespace controllers, and a node agent
// that runs each container's command as a local process (as kubesim's kubelet does).
//
//	envgate-controlplane --port 0 --write-kubeconfig FILE [--workdir DIR] ...
//	envgate-controlplane ctl [--control FILE] COMMAND ...
//
// It prints the API server's port on stdout once everything is ready, serves until
// SIGTERM or SIGINT, then stops every container process and exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

type cpOptions struct {
	port            int
	kubeconfig      string
	workdir         string
	nodeName        string
	timings         controllerTimings
	restartBackoff  time.Duration
	verbosity       string
	startupDeadline time.Duration
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "ctl" {
		os.Exit(ctlMain(os.Args[2:]))
	}
	var o cpOptions
	fs := flag.NewFlagSet("envgate-controlplane", flag.ExitOnError)
	fs.IntVar(&o.port, "port", 0, "API server port on 127.0.0.1 (0: any free port)")
	fs.StringVar(&o.kubeconfig, "write-kubeconfig", "", "write a kubeconfig for the admin user here (and FILE.control for `ctl`)")
	fs.StringVar(&o.workdir, "workdir", "", "state directory (default: a temporary one, removed on exit)")
	fs.StringVar(&o.nodeName, "node-name", "node-1", "name of the one Node")
	fs.DurationVar(&o.timings.podFailureBackoff, "pod-failure-backoff", 100*time.Millisecond, "the Job controller's first pod-failure back-off (upstream 10s)")
	fs.DurationVar(&o.timings.maxPodFailureBackoff, "max-pod-failure-backoff", time.Second, "the Job controller's back-off cap (upstream 10m)")
	fs.DurationVar(&o.timings.syncBatchPeriod, "job-sync-batch-period", time.Second, "the Job controller's sync batching (upstream 1s)")
	fs.DurationVar(&o.restartBackoff, "container-restart-backoff", 100*time.Millisecond, "the node agent's first crash-loop back-off (kubelet: 10s); later ones scale alike")
	fs.StringVar(&o.verbosity, "v", "0", "log verbosity of the Kubernetes components")
	fs.DurationVar(&o.startupDeadline, "startup-timeout", 120*time.Second, "give up when not ready by then")
	_ = fs.Parse(os.Args[1:])
	if o.kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "envgate-controlplane: --write-kubeconfig FILE is required")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "envgate-controlplane: %v\n", err)
		os.Exit(1)
	}
}

func run(o cpOptions) error {
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("v", o.verbosity)

	started := time.Now()
	tempDir := o.workdir == ""
	if tempDir {
		dir, err := os.MkdirTemp("", "envgate-controlplane.")
		if err != nil {
			return err
		}
		o.workdir = dir
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(o.workdir, 0o755); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)

	p, err := newPKI(o.workdir)
	if err != nil {
		return err
	}
	u := users{adminToken: randomToken(), restrictedToken: randomToken()}
	tokenFile, err := writeTokenFile(o.workdir, u)
	if err != nil {
		return err
	}
	etcd, etcdURL, err := startEtcd(o.workdir)
	if err != nil {
		return err
	}
	defer etcd.Close()
	etcdReady := time.Since(started)

	apiCtx, stopAPI := context.WithCancel(context.Background())
	defer stopAPI()
	kubeletCrt, kubeletKey, err := p.clientCert("apiserver-kubelet-client")
	if err != nil {
		return err
	}
	port, apiDone, err := startAPIServer(apiCtx, apiServerConfig{port: o.port, etcdURL: etcdURL,
		workdir: o.workdir, pki: p, tokenFile: tokenFile, kubeletCrt: kubeletCrt, kubeletKey: kubeletKey})
	if err != nil {
		return err
	}
	cfg := &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), BearerToken: u.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: p.caPEM}, QPS: 200, Burst: 400}
	if err := waitReady(cfg, apiDone, time.Now().Add(o.startupDeadline)); err != nil {
		return err
	}
	apiReady := time.Since(started)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	setJobControllerTimings(o.timings)
	if err := startControllers(ctx, cfg); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(rest.CopyConfig(cfg), "node-agent"))
	if err != nil {
		return err
	}
	agent := newNodeAgent(client, o.nodeName, o.workdir, 0, o.restartBackoff)
	kubeletPort, err := startKubeletServer(ctx, agent, p)
	if err != nil {
		return err
	}
	agent.kubeletPort = kubeletPort
	if err := agent.register(ctx); err != nil {
		return err
	}
	if err := agent.run(ctx); err != nil {
		return err
	}
	controlURL, err := startControlServer(ctx, agent, u.adminToken)
	if err != nil {
		return err
	}
	if err := writeKubeconfig(o.kubeconfig, cfg.Host, p.caPEM, u); err != nil {
		return err
	}
	if err := writeControl(o.kubeconfig+".control", controlInfo{URL: controlURL, Token: u.adminToken}); err != nil {
		return err
	}
	fmt.Printf("%d\n", port)
	fmt.Fprintf(os.Stderr, "envgate-controlplane: ready in %d ms (etcd %d ms, kube-apiserver %d ms); API https://127.0.0.1:%d, control %s\n",
		time.Since(started).Milliseconds(), etcdReady.Milliseconds(), apiReady.Milliseconds(), port, controlURL)

	select {
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "envgate-controlplane: %v: shutting down\n", s)
	case err := <-apiDone:
		agent.stopAll()
		return fmt.Errorf("kube-apiserver stopped: %v", err)
	}
	stop()
	agent.stopAll()
	stopAPI()
	select {
	case <-apiDone:
	case <-time.After(15 * time.Second):
		fmt.Fprintln(os.Stderr, "envgate-controlplane: kube-apiserver did not stop within 15s")
	}
	return nil
}

// waitReady polls /readyz until the API server says ready and the default namespace exists.
func waitReady(cfg *rest.Config, apiDone <-chan error, deadline time.Time) error {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-apiDone:
			return fmt.Errorf("kube-apiserver stopped while starting: %v", err)
		default:
		}
		status := 0
		res := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(context.Background())
		res.StatusCode(&status)
		if status == http.StatusOK {
			_, err := client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
			if err == nil {
				return nil
			}
			last = err
		} else {
			last = fmt.Errorf("/readyz: %d %v", status, res.Error())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.Join(errors.New("kube-apiserver not ready in time"), last)
}

func writeKubeconfig(path, server string, ca []byte, u users) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["controlplane"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: u.adminToken}
	c.AuthInfos[restrictedUser] = &clientcmdapi.AuthInfo{Token: u.restrictedToken}
	c.Contexts["controlplane"] = &clientcmdapi.Context{Cluster: "controlplane", AuthInfo: "admin", Namespace: "default"}
	c.Contexts["controlplane-restricted"] = &clientcmdapi.Context{Cluster: "controlplane", AuthInfo: restrictedUser, Namespace: "default"}
	c.CurrentContext = "controlplane"
	tmp := path + ".tmp"
	if err := clientcmd.WriteToFile(*c, tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeControl(path string, info controlInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
