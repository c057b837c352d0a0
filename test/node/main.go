// Command envgate-nodectl talks CRI to the real node's container runtime for
// test/node/run.sh (test infrastructure only):
//
//	envgate-nodectl version --endpoint unix:///…/containerd.sock
//	    the runtime's name and version, its CRI version, and whether it implements the
//	    RuntimeConfig call (without it the kubelet falls back to its own cgroupDriver)
//	envgate-nodectl clean --endpoint unix:///…/containerd.sock
//	    stops and removes every pod sandbox and container (the runtime then tears down
//	    their network, mounts, cgroups and shims), so nothing outlives the node
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: envgate-nodectl version|clean --endpoint unix:///PATH")
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("envgate-nodectl "+cmd, flag.ExitOnError)
	endpoint := fs.String("endpoint", "", "the runtime's CRI socket, unix:///PATH")
	timeout := fs.Duration("timeout", 60*time.Second, "give up after this long")
	_ = fs.Parse(os.Args[2:])
	if *endpoint == "" {
		fmt.Fprintln(os.Stderr, "envgate-nodectl: --endpoint is required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "envgate-nodectl: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	switch cmd {
	case "version":
		err = version(ctx, rt)
	case "clean":
		err = clean(ctx, rt)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "envgate-nodectl %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

func version(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	v, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return err
	}
	fmt.Printf("runtime %s %s, CRI %s\n", v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion)
	cfg, err := rt.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
	switch {
	case status.Code(err) == codes.Unimplemented:
		fmt.Println("RuntimeConfig: unimplemented (the kubelet uses its own cgroupDriver setting)")
	case err != nil:
		return fmt.Errorf("RuntimeConfig: %w", err)
	default:
		fmt.Printf("RuntimeConfig: cgroup driver %s\n", cfg.GetLinux().GetCgroupDriver())
	}
	return nil
}

func clean(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	sandboxes, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []string
	for _, s := range sandboxes.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("stop sandbox %s (%s/%s): %v", s.Id, s.Metadata.Namespace, s.Metadata.Name, err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("remove sandbox %s: %v", s.Id, err))
		}
	}
	// Removing a sandbox removes its containers; anything left is an orphan.
	containers, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return err
	}
	for _, c := range containers.Containers {
		if _, err := rt.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: c.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("stop container %s: %v", c.Id, err))
		}
		if _, err := rt.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("remove container %s: %v", c.Id, err))
		}
	}
	fmt.Printf("removed %d pod sandboxes and %d orphaned containers\n", len(sandboxes.Items), len(containers.Containers))
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
