package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
)

// SIGINT to perfgate while its kubernetes stack starts deletes the run's
// namespace: perfgate run, the binary, against a real kube-apiserver
// (make test-apiserver), the test playing the controllers and the
// kubelet. The Service's DNS name resolves nowhere here, so the run is
// still waiting for the server to answer when it is interrupted.
func TestInterruptDeletesTheNamespaceAgainstAPIServer(t *testing.T) {
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneBin(t))
	clients, err := kube.Connect(cp.Kubeconfig, "")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go kubetest.ClusterOf(clients).Serve(ctx, "node-1")

	sim, err := filepath.Abs("../../examples/kubernetes/sim")
	require.NoError(t, err)
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, fmt.Appendf(nil, `stack:
  kind: kubernetes
  ready_timeout: 2m
  kubernetes: {manifests: [%q], serving: [Deployment/sim], service: "sim:8000", kubeconfig: %q, access: dns}
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: 1
scenarios:
  - name: s
    synth: {requests: 8, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 2}
`, sim, cp.Kubeconfig), 0o644))
	self, err := os.Executable()
	require.NoError(t, err)
	out := filepath.Join(dir, "result.json")
	cmd := exec.Command(self, "run", "-c", conf, "-o", out)
	cmd.Env = append(os.Environ(), beMain+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var seen []string
	ready := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if !said && strings.Contains(sc.Text(), "serving objects ready") {
				said = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("the serving objects were never ready")
	}
	list, err := clients.Core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedBy})
	require.NoError(t, err)
	require.Len(t, list.Items, 1, "the run's namespace")
	ns := list.Items[0].Name
	assert.Nil(t, list.Items[0].DeletionTimestamp)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	<-drained
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "perfgate exited 0 after SIGINT; stderr:\n%s", strings.Join(seen, "\n"))
	assert.Equal(t, exit.RunFailed, ee.ExitCode())
	assert.True(t, slices.ContainsFunc(seen, func(l string) bool { return strings.Contains(l, "interrupted") }),
		"stderr does not say it was interrupted:\n%s", strings.Join(seen, "\n"))
	got, err := clients.Core.Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err == nil { // no namespace controller here: it stays terminating
		assert.NotNil(t, got.DeletionTimestamp, "namespace %s is being deleted after SIGINT", ns)
	}
	assert.NoFileExists(t, out)
}
