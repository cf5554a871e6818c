package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// ControlPlaneEnv names the directory holding etcd and kube-apiserver, as
// scripts/control-plane.sh builds them (make test-apiserver sets it).
const ControlPlaneEnv = "PERFGATE_CONTROL_PLANE"

// ControlPlane is a real API server without nodes, controllers or a
// scheduler, as controller-runtime's envtest runs one: etcd and
// kube-apiserver on loopback, an admin token, a kubeconfig file.
type ControlPlane struct {
	// Kubeconfig is a kubeconfig file whose current context reaches it as
	// an admin (system:masters).
	Kubeconfig string
	// Host is the API server's URL.
	Host string
}

// StartControlPlane starts etcd and kube-apiserver from bin, waits until
// the API server is ready, and stops both when the test ends. The
// ServiceAccount admission plugin is off: with no controller manager, no
// namespace gets its default service account, which it would want of
// every pod.
func StartControlPlane(t testing.TB, bin string) *ControlPlane {
	t.Helper()
	dir := t.TempDir()
	etcdClient, etcdPeer, apiPort := freePort(t), freePort(t), freePort(t)
	run := func(name string, args ...string) <-chan struct{} {
		log, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
			_ = log.Close()
		})
		return done
	}
	etcdURL := "http://127.0.0.1:" + etcdClient
	peerURL := "http://127.0.0.1:" + etcdPeer
	run("etcd", "--data-dir", filepath.Join(dir, "etcd"), "--name", "default",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	saKey := write("sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	saPub := write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	tokens := write("tokens.csv", []byte(token+",admin,admin,system:masters\n"))
	apiExited := run("kube-apiserver", "--etcd-servers", etcdURL, "--cert-dir", filepath.Join(dir, "certs"),
		"--secure-port", apiPort, "--bind-address", "127.0.0.1", "--endpoint-reconciler-type", "none",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", saPub, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.0.0.0/24", "--authorization-mode", "RBAC",
		"--token-auth-file", tokens, "--disable-admission-plugins", "ServiceAccount")

	host := "https://127.0.0.1:" + apiPort
	cp := &ControlPlane{Host: host}
	cp.Kubeconfig = write("kubeconfig", fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %q}}]
contexts: [{name: test, context: {cluster: test, user: admin}}]
current-context: test
`, host, token))
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cp
			}
		}
		exited := false
		select {
		case <-apiExited:
			exited = true
		case <-time.After(200 * time.Millisecond): // polling a server that starts: nothing to wait on but its answer
		}
		if exited || time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(dir, "kube-apiserver.log"))
			t.Fatalf("kube-apiserver not ready within 2m, or exited (last check: %v); its log's end:\n%s", err, tail(logs, 3000))
		}
	}
}

func tail(b []byte, n int) []byte { return b[max(0, len(b)-n):] }

// freePort is a loopback port that was free a moment ago.
func freePort(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// ControlPlaneBin is the directory of the control plane's binaries, from
// ControlPlaneEnv; the test is skipped, saying how to run it, when it is
// not set (make test-apiserver sets it).
func ControlPlaneBin(t testing.TB) string {
	bin := os.Getenv(ControlPlaneEnv)
	if bin == "" {
		t.Skipf("a real API server test: run it with make test-apiserver (%s names the binaries scripts/control-plane.sh builds)", ControlPlaneEnv)
	}
	return bin
}
