package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/sim"
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
			Forward: func(_ context.Context, _ *kube.Clients, ns, pod string, port, _ int) (string, func(), error) {
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

// A replica lost on Kubernetes: the fault deletes the second pod behind
// the Service mid-repetition; the test's Deployment controller makes its
// replacement, ready a cold start later; perfgate forwards the replica's
// local port to it again, and the router takes it back. Each port-forward
// lands on a simulator of its own that its end closes, as a deleted pod's
// forward ends: the replica's address refuses connections meanwhile.
func TestReplicaLossOnKubernetes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stack.yaml"), []byte(kubetest.SimManifests(2)), 0o644))
	yaml := `stack:
  kind: kubernetes
  health_interval: 100ms
  ready_timeout: 10s
  kubernetes: {manifests: [stack.yaml], service: "sim:8000", access: port-forward}
warmup: {method: none}
telemetry: {metrics: off, gpu: off}
repetitions: 2
scenarios:
  - name: lost-pod
    synth: {requests: 64, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson, rate: 20, recovery_window: 1s}
    duration: 7s
    max_error_rate: 0.5
    slo: {ttft: 1s}
    fault: {kill: replica, at: 1s}
`
	path := filepath.Join(dir, "perfgate.yaml")
	cfg, err := config.Parse([]byte(yaml), path)
	require.NoError(t, err)
	scenarios, err := run.Prepare(cfg, nil)
	require.NoError(t, err)

	const coldStart = 500 * time.Millisecond
	cluster := kubetest.NewCluster()
	cluster.ColdStart = coldStart
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go cluster.Serve(ctx, "gpu-1")
	var mu sync.Mutex
	forwards := map[string]string{} // pod → local address
	start := func(ctx context.Context, cfg config.Stack, o stack.Options) (stack.Instance, error) {
		o.Kubernetes = stack.KubernetesOptions{Clients: cluster.Clients, Poll: 20 * time.Millisecond,
			Forward: func(_ context.Context, _ *kube.Clients, _, pod string, _, local int) (string, func(), error) {
				scfg := sim.DefaultConfig()
				scfg.StepBase, scfg.Jitter = time.Millisecond, 0
				// A forward outlives the call that made it.
				srv, err := sim.Start(context.Background(), fmt.Sprintf("127.0.0.1:%d", local), scfg)
				if err != nil {
					return "", nil, err
				}
				addr := strings.TrimPrefix(srv.URL(), "http://")
				mu.Lock()
				forwards[pod] = addr
				mu.Unlock()
				t.Cleanup(func() { _ = srv.Close() })
				return addr, func() { _ = srv.Close() }, nil
			}}
		return stack.Start(ctx, cfg, o)
	}
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, scenarios, Options{RunID: "kf", StartStack: start, Phases: run.NewPhases(&log, false), Log: &log})
	require.NoError(t, err, log.String())

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, forwards["sim-b"], forwards["sim-c"], "the replacement is forwarded on the killed pod's local port")
	assert.Equal(t, forwards["sim-c"], forwards["sim-d"], "and so is the second repetition's")
	assert.NotEqual(t, forwards["sim-a"], forwards["sim-b"])
	require.Len(t, res.Scenarios, 1)
	reps := res.Scenarios[0].Repetitions
	require.Len(t, reps, 2)
	for _, rep := range reps {
		f := rep.Fault
		require.NotNil(t, f, "repetition %d has its fault", rep.Index)
		t.Logf("repetition %d: killed at %.2f s, back at %v s, %d errors of %d; ready pods %+v; recovery %+v",
			rep.Index, f.KilledS, fmtPtr(f.BackS), f.Errors, rep.Sent, rep.Replicas, rep.Recovery)
		assert.Equal(t, 2, f.Replica)
		assert.Equal(t, 2, f.Replicas)
		assert.InDelta(t, 1, f.KilledS, 0.3)
		require.NotNil(t, f.BackS, "repetition %d: the replacement answered within the repetition", rep.Index)
		assert.GreaterOrEqual(t, *f.BackS, f.KilledS+coldStart.Seconds(), "not back before the replacement pod was ready")
		assert.Less(t, *f.BackS, f.KilledS+coldStart.Seconds()+3, "back soon after: the watch looks every 20 ms")
		assert.Positive(t, f.Errors, "the request the router sent to the deleted pod's address before it knew failed")
		assert.Equal(t, rep.Failed, f.Errors, "every failure came from the fault")
		require.NotNil(t, rep.Recovery)

		// The ready pods behind the Service: two, one while the
		// replacement starts, two again.
		require.NotEmpty(t, rep.Replicas)
		assert.Equal(t, result.ReadyReplicas{AtS: 0, Ready: 2}, rep.Replicas[0])
		var counts []int
		for _, c := range rep.Replicas {
			counts = append(counts, c.Ready)
		}
		assert.Equal(t, []int{2, 1, 2}, counts, "repetition %d: %+v", rep.Index, rep.Replicas)
		if len(rep.Replicas) == 3 {
			assert.InDelta(t, f.KilledS, rep.Replicas[1].AtS, 1, "one fewer when the pod was deleted")
			assert.GreaterOrEqual(t, rep.Replicas[2].AtS, f.KilledS+coldStart.Seconds(), "two again once its replacement, made after the deletion, was ready")
		}
	}
	assert.Contains(t, log.String(), "deleted pod perfgate-kf-1/sim-b (replica 2 of 2)")
	assert.Contains(t, log.String(), "pod perfgate-kf-1/sim-c replaces replica 2")
}

func fmtPtr(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'f', 2, 64)
}
