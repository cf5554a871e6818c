package session

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
)

// A kubernetes stack end to end on a cluster without nodes: perfgate
// creates the namespace and the manifests' objects, the test plays the
// controllers and the kubelet, a port-forward to each of the two pods
// lands on a simulator of its own; the run spreads its requests over both,
// its result says what the cluster said (namespace, images by digest, the
// node's GPU, the replicas), the target is the first forward's address,
// and the namespace is gone after.
func TestRunOnKubernetes(t *testing.T) {
	sims := map[string]string{"sim-a": startSim(t), "sim-b": startSim(t)}
	url := sims["sim-a"]
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: sim}
spec:
  replicas: 2
  selector: {matchLabels: {app: sim}}
  template:
    metadata: {labels: {app: sim}}
    spec:
      containers: [{name: sim, image: ghcr.io/perfgate/perfgate:v1, ports: [{name: http, containerPort: 8000}],
        resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Service
metadata: {name: sim}
spec:
  selector: {app: sim}
  ports: [{port: 8000, targetPort: http}]
`), 0o644))
	yaml := `stack:
  kind: kubernetes
  kubernetes: {manifests: [stack.yaml], service: "sim:8000", access: port-forward}
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: 2
scenarios:
` + scenario("chat", 8, "")
	path := filepath.Join(dir, "perfgate.yaml")
	cfg, err := config.Parse([]byte(yaml), path)
	require.NoError(t, err)
	scenarios, err := run.Prepare(cfg, nil)
	require.NoError(t, err)

	cluster := kubetest.NewCluster(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{kube.GPUProductLabel: "NVIDIA-L4"}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cluster.Serve(ctx, "gpu-1")
	var forwardedTo []string
	start := func(ctx context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error) {
		o.Kubernetes = stack.KubernetesOptions{Clients: cluster.Clients,
			Forward: func(_ context.Context, _ *kube.Clients, ns, pod string, port int) (string, func(), error) {
				forwardedTo = append(forwardedTo, ns+"/"+pod)
				return strings.TrimPrefix(sims[pod], "http://"), func() {}, nil
			}}
		return stack.Start(ctx, cfg, o)
	}
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{RunID: "kt", StartStack: start, Phases: run.NewPhases(&log, false), Log: &log})
	require.NoError(t, err, log.String())

	id := res.Identity
	assert.Equal(t, config.StackKubernetes, id.Stack.Kind)
	assert.Equal(t, "perfgate-kt-1", id.Stack.Namespace)
	assert.Equal(t, []string{"ghcr.io/perfgate/perfgate:v1@sha256:0123456789abcdef"}, id.Stack.Images)
	assert.Equal(t, []string{"NVIDIA-L4"}, id.Stack.GPUProducts)
	assert.Equal(t, 2, id.Stack.GPUs)
	assert.Equal(t, 2, id.Stack.Replicas)
	assert.Equal(t, url, id.Target.BaseURL, "the target is where the first forward lands")
	assert.Equal(t, []string{"perfgate-kt-1/sim-a", "perfgate-kt-1/sim-b"}, forwardedTo, "a forward to each ready pod")
	for pod, u := range sims {
		resp, err := http.Get(u + "/metrics")
		require.NoError(t, err)
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		served := 0.0
		for _, line := range strings.Split(string(page), "\n") {
			if strings.HasPrefix(line, "vllm:request_success_total{") {
				f := strings.Fields(line)
				v, err := strconv.ParseFloat(f[len(f)-1], 64)
				require.NoError(t, err)
				served += v
			}
		}
		assert.Positive(t, served, "%s served requests: the router spreads them over the pods", pod)
	}
	require.Len(t, res.Scenarios, 1)
	assert.Len(t, res.Scenarios[0].Repetitions, 2)
	assert.Contains(t, log.String(), "serving objects ready; the server is at "+url+", "+sims["sim-b"])

	_, err = cluster.Typed.CoreV1().Namespaces().Get(context.Background(), "perfgate-kt-1", metav1.GetOptions{})
	assert.Error(t, err, "the run's namespace is deleted at its end")
}
