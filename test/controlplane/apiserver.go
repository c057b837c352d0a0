package main

// The real kube-apiserver, in process: the same options, config and server chain as
// the kube-apiserver command, with TLS from our CA, bearer-token users and RBAC.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// users of the token file: the admin (system:masters) that tests, kubectl and the
// controllers use, and a user with no rights beyond what RBAC grants it, for tests of
// a refused request.
type users struct {
	adminToken      string
	restrictedToken string
}

const restrictedUser = "envgate-restricted"

func writeTokenFile(dir string, u users) (string, error) {
	path := filepath.Join(dir, "tokens.csv")
	body := fmt.Sprintf("%s,envgate-admin,uid-admin,\"system:masters\"\n%s,%s,uid-restricted\n",
		u.adminToken, u.restrictedToken, restrictedUser)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

type apiServerConfig struct {
	port       int // 0: any free port
	etcdURL    string
	workdir    string
	pki        *pki
	tokenFile  string
	kubeletCrt string
	kubeletKey string
}

// startAPIServer runs the API server until ctx ends; it returns the bound port and a
// channel that yields the server's exit error.
func startAPIServer(ctx context.Context, c apiServerConfig) (int, <-chan error, error) {
	certFile, keyFile, err := c.pki.servingCert("apiserver")
	if err != nil {
		return 0, nil, err
	}
	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	flags := []string{
		"--etcd-servers=" + c.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--tls-cert-file=" + certFile,
		"--tls-private-key-file=" + keyFile,
		"--token-auth-file=" + c.tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://controlplane.envgate.invalid",
		"--service-account-key-file=" + c.pki.saKeyFile,
		"--service-account-signing-key-file=" + c.pki.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No service-account controller runs, so pods would wait for their account.
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
		"--kubelet-certificate-authority=" + c.pki.caFile,
		"--kubelet-client-certificate=" + c.kubeletCrt,
		"--kubelet-client-key=" + c.kubeletKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false",
		"--cert-dir=" + filepath.Join(c.workdir, "apiserver-certs"),
	}
	if err := fs.Parse(flags); err != nil {
		return 0, nil, err
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", c.port))
	if err != nil {
		return 0, nil, fmt.Errorf("listen: %w", err)
	}
	s.SecureServing.Listener = ln
	s.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return 0, nil, err
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	completed, err := s.Complete(ctx)
	if err != nil {
		return 0, nil, err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return 0, nil, utilerrors.NewAggregate(errs)
	}
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, completed) }()
	return s.SecureServing.BindPort, done, nil
}
