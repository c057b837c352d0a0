package main

// The node agent's kubelet endpoint: the API server proxies `pods/log` here
// (GET /containerLogs/NS/POD/CONTAINER), over TLS with its kubelet client certificate.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func startKubeletServer(ctx context.Context, n *nodeAgent, p *pki) (int, error) {
	certFile, keyFile, err := p.servingCert("kubelet")
	if err != nil {
		return 0, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return 0, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/", func(w http.ResponseWriter, r *http.Request) { serveLogs(ctx, n, w, r) })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
		MinVersion: tls.VersionTLS12}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func serveLogs(ctx context.Context, n *nodeAgent, w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 {
		http.Error(w, "expected /containerLogs/NAMESPACE/POD/CONTAINER", http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	worker, ok := n.worker(parts[0], parts[1])
	if !ok {
		http.Error(w, fmt.Sprintf("pod %q in namespace %q is not on this node", parts[1], parts[0]), http.StatusNotFound)
		return
	}
	path, running, err := worker.logFile(parts[2], q.Get("previous") == "true")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, _ := os.ReadFile(path)
	if s := q.Get("tailLines"); s != "" {
		if lines, err := strconv.Atoi(s); err == nil && lines >= 0 {
			data = []byte(lastLines(string(data), lines))
		}
	}
	limit := -1
	if s := q.Get("limitBytes"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			limit = v
		}
	}
	w.Header().Set("Content-Type", "text/plain")
	if limit >= 0 && len(data) > limit {
		data = data[:limit]
	}
	_, _ = w.Write(data)
	if q.Get("follow") != "true" || !running || (limit >= 0 && len(data) >= limit) {
		return
	}
	followLog(ctx, worker, parts[2], path, int64(len(data)), w, r)
}

// followLog streams what the running instance appends until it ends or the client goes.
func followLog(ctx context.Context, worker *podWorker, container, path string, offset int64, w http.ResponseWriter, r *http.Request) {
	flusher, _ := w.(http.Flusher)
	for {
		// Looked at before the copy, so the bytes of an instance that just ended are sent.
		cur, running, err := worker.logFile(container, false)
		if f, ferr := os.Open(path); ferr == nil {
			_, _ = f.Seek(offset, io.SeekStart)
			n, _ := io.Copy(w, f)
			f.Close()
			offset += n
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil || !running || cur != path {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-r.Context().Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func lastLines(text string, n int) string {
	if n == 0 {
		return ""
	}
	trimmed := strings.TrimSuffix(text, "\n")
	lines := strings.Split(trimmed, "\n")
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[len(lines)-n:], "\n") + "\n"
}
