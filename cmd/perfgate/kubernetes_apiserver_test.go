package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	out := filepath.Join(dir, "result.json")
	var ns string
	interruptWhen(t, "serving objects ready", func() {
		list, err := clients.Core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedBy})
		require.NoError(t, err)
		require.Len(t, list.Items, 1, "the run's namespace")
		ns = list.Items[0].Name
		assert.Nil(t, list.Items[0].DeletionTimestamp)
	}, "run", "-c", conf, "-o", out)
	got, err := clients.Core.Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err == nil { // no namespace controller here: it stays terminating
		assert.NotNil(t, got.DeletionTimestamp, "namespace %s is being deleted after SIGINT", ns)
	}
	assert.NoFileExists(t, out)
}
