package kube

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	isvcs       = schema.GroupVersionResource{Group: "serving.kserve.io", Version: "v1beta1", Resource: "inferenceservices"}
)

// fakeCluster is an API server without a kubelet or controllers: the test
// plays their part, setting the status of what Start created.
type fakeCluster struct {
	typed   *fake.Clientset
	dynamic *dynamicfake.FakeDynamicClient
	clients *Clients
}

func newFakeCluster(objs ...runtime.Object) *fakeCluster {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "serving.kserve.io", Version: "v1beta1", Kind: "InferenceService"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	typed := fake.NewSimpleClientset(objs...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		deployments: "DeploymentList", services: "ServiceList", isvcs: "InferenceServiceList"})
	return &fakeCluster{typed: typed, dynamic: dyn, clients: &Clients{Core: typed.CoreV1(), Dynamic: dyn, Mapper: mapper}}
}

const manifests = `apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  replicas: 2
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.0
          ports: [{name: http, containerPort: 8000}]
---
# the Service
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec:
  selector: {app: vllm}
  ports: [{port: 80, targetPort: http}]
`

func objects(t *testing.T, yaml string) []*unstructured.Unstructured {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stack.yaml")
	require.NoError(t, os.WriteFile(p, []byte(yaml), 0o644))
	objs, err := ReadManifests([]string{filepath.Dir(p)})
	require.NoError(t, err)
	return objs
}

// startAsync starts the stack in the background, as perfgate does, and
// returns where its outcome arrives.
func startAsync(t *testing.T, c *fakeCluster, o Options) <-chan startOutcome {
	out := make(chan startOutcome, 1)
	go func() {
		s, err := Start(t.Context(), c.clients, o)
		out <- startOutcome{s, err}
	}()
	return out
}

type startOutcome struct {
	s   *Stack
	err error
}

// created waits until Start has created the object, and returns it.
func (c *fakeCluster) created(t *testing.T, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	require.Eventually(t, func() bool {
		var err error
		obj, err = c.dynamic.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "%s %s/%s never created", gvr.Resource, ns, name)
	return obj
}

// createService copies the Service Start created into the typed client,
// as an API server shows one object to every client.
func (c *fakeCluster) createService(t *testing.T, ns string) {
	svc := c.created(t, services, ns, "vllm")
	var typed corev1.Service
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(svc.Object, &typed))
	_, err := c.typed.CoreV1().Services(ns).Create(context.Background(), &typed, metav1.CreateOptions{})
	require.NoError(t, err)
}

// pod plays the kubelet: a pod of the Deployment, ready or not, on a node.
func (c *fakeCluster) pod(t *testing.T, ns, name string, ready bool, status func(*corev1.PodStatus)) {
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "vllm"}},
		Spec: corev1.PodSpec{NodeName: "gpu-node-1", Containers: []corev1.Container{{Name: "vllm", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8000}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(1000, 0))},
			{Type: corev1.PodReady, Status: cond, LastTransitionTime: metav1.NewTime(time.Unix(1042, 0))}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "vllm", Image: "vllm/vllm-openai:v0.9.0", ImageID: "docker-pullable://vllm/vllm-openai@sha256:abc", Ready: ready}}}}
	if status != nil {
		status(&p.Status)
	}
	_, err := c.typed.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	require.NoError(t, err)
}

func (c *fakeCluster) setAvailable(t *testing.T, ns string, n int64) {
	d := c.created(t, deployments, ns, "vllm")
	require.NoError(t, unstructured.SetNestedField(d.Object, n, "status", "availableReplicas"))
	_, err := c.dynamic.Resource(deployments).Namespace(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func options(t *testing.T, forwarded *string) Options {
	return Options{RunID: "Run_1a2b", Objects: objects(t, manifests), Service: "vllm", Port: 80, PortForward: true,
		Timeout: time.Minute, Poll: 5 * time.Millisecond, Owner: "process/boot/ns/42/7",
		Forward: func(ctx context.Context, c *Clients, ns, pod string, port, _ int) (string, func(), error) {
			*forwarded = pod + ":" + string(rune('0'+port/1000)) // 8000 → "8"
			return "127.0.0.1:18555", func() {}, nil
		}}
}

// Start creates the run's namespace, labelled and annotated with its
// owner, creates the objects in it, waits until the Deployment's replicas
// are available, forwards to a ready pod's named target port, reads the
// identity, and Stop deletes the namespace.
func TestStartWaitsForTheDeploymentAndStopDeletesTheNamespace(t *testing.T) {
	c := newFakeCluster(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-1", Labels: map[string]string{GPUProductLabel: "NVIDIA-H100-80GB-HBM3"}}})
	var forwarded string
	var progress []string
	o := options(t, &forwarded)
	o.Progress = func(m string) { progress = append(progress, m) }
	out := startAsync(t, c, o)
	const ns = "perfgate-run-1a2b"
	c.createService(t, ns)
	c.pod(t, ns, "vllm-0", false, nil)
	c.pod(t, ns, "vllm-1", true, nil)
	c.setAvailable(t, ns, 1)
	select {
	case r := <-out:
		t.Fatalf("ready with 1 of 2 replicas available: %v", r.err)
	default:
	}
	c.setAvailable(t, ns, 2)
	r := <-out
	require.NoError(t, r.err)
	s := r.s
	assert.Equal(t, []string{"http://127.0.0.1:18555"}, s.BaseURLs(), "one forward: one pod is ready")
	assert.Equal(t, "vllm-1:8", forwarded, "forwarded to the ready pod's container port 8000, the Service's targetPort http")
	nsObj, err := c.typed.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, ManagedBy, nsObj.Labels[LabelManagedBy])
	assert.Equal(t, "Run_1a2b", nsObj.Labels[LabelRun])
	assert.Equal(t, "process/boot/ns/42/7", nsObj.Annotations[AnnotOwner])
	id := s.Identity()
	assert.Equal(t, []string{"vllm/vllm-openai@sha256:abc"}, id.Images)
	assert.Equal(t, []string{"NVIDIA-H100-80GB-HBM3"}, id.GPUProducts)
	assert.Equal(t, 1, id.Replicas)
	assert.Equal(t, []float64{42}, id.PodStartsS, "the ready pod's start, scheduled to ready")

	require.NoError(t, s.Stop(context.Background()))
	_, err = c.typed.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	assert.Error(t, err, "the namespace is deleted")
	<-s.Done()
}

// An OOM-killed container ends the start with the pod named, the reason
// and the container's log.
func TestOOMKilledPodFailsTheStart(t *testing.T) {
	c := newFakeCluster()
	var forwarded string
	out := startAsync(t, c, options(t, &forwarded))
	c.pod(t, "perfgate-run-1a2b", "vllm-0", false, func(st *corev1.PodStatus) {
		st.ContainerStatuses[0].RestartCount = 1
		st.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}
	})
	r := <-out
	var pe *PodError
	require.ErrorAs(t, r.err, &pe)
	assert.True(t, pe.OOMKilled())
	assert.Equal(t, 137, pe.ExitCode)
	assert.Equal(t, "vllm-0", pe.Pod)
	assert.Equal(t, "pod perfgate-run-1a2b/vllm-0 (container vllm): OOMKilled, exit code 137", pe.Error())
	assert.Equal(t, []string{"fake logs"}, pe.Tail, "the fake cluster's log of the container")
	_, err := c.typed.CoreV1().Namespaces().Get(context.Background(), "perfgate-run-1a2b", metav1.GetOptions{})
	assert.Error(t, err, "a failed start deletes its namespace")
}

// Once ready, a pod that crashes ends the stack.
func TestACrashAfterReadyEndsTheStack(t *testing.T) {
	c := newFakeCluster()
	var forwarded string
	out := startAsync(t, c, options(t, &forwarded))
	const ns = "perfgate-run-1a2b"
	c.createService(t, ns)
	c.pod(t, ns, "vllm-0", true, nil)
	c.setAvailable(t, ns, 2)
	r := <-out
	require.NoError(t, r.err)
	t.Cleanup(func() { _ = r.s.Stop(context.Background()) })
	p, err := c.typed.CoreV1().Pods(ns).Get(context.Background(), "vllm-0", metav1.GetOptions{})
	require.NoError(t, err)
	p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}
	_, err = c.typed.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
	select {
	case <-r.s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the crash did not end the stack")
	}
	var pe *PodError
	require.ErrorAs(t, r.s.Err(), &pe)
	assert.Equal(t, "CrashLoopBackOff", pe.Reason)
	assert.Equal(t, []string{"fake logs"}, r.s.Tail(5))
}

// A custom resource is ready by its Ready condition, and reached by its
// Service's DNS name in the run's namespace.
func TestInferenceServiceReadyCondition(t *testing.T) {
	c := newFakeCluster()
	o := Options{RunID: "r2", Objects: objects(t, `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llama}
spec: {predictor: {model: {modelFormat: {name: huggingface}}}}
---
apiVersion: v1
kind: Service
metadata: {name: vllm}
spec: {ports: [{port: 80, targetPort: 8080}]}
`), Serving: []string{"InferenceService/llama"}, Service: "vllm", Port: 80, Timeout: time.Minute, Poll: 5 * time.Millisecond}
	out := startAsync(t, c, o)
	const ns = "perfgate-r2"
	c.createService(t, ns)
	isvc := c.created(t, isvcs, ns, "llama")
	require.NoError(t, unstructured.SetNestedSlice(isvc.Object, []any{map[string]any{"type": "Ready", "status": "True"}}, "status", "conditions"))
	_, err := c.dynamic.Resource(isvcs).Namespace(ns).UpdateStatus(context.Background(), isvc, metav1.UpdateOptions{})
	require.NoError(t, err)
	r := <-out
	require.NoError(t, r.err)
	assert.Equal(t, []string{"http://vllm.perfgate-r2.svc:80"}, r.s.BaseURLs())
	require.NoError(t, r.s.Stop(context.Background()))
}

// What cannot be started is refused before anything is created, or as the
// object is.
func TestStartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		serving    []string
		want       string
	}{
		{"cluster-scoped", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n---\n" + manifests, nil, "ClusterRole reader is cluster-scoped"},
		{"other namespace", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm, namespace: prod}\nspec: {replicas: 1}\n", nil, "names namespace prod"},
		{"unknown serving", manifests, []string{"StatefulSet/vllm"}, "serving names StatefulSet/vllm, which is not among the manifests' objects"},
		{"nothing serving", "apiVersion: v1\nkind: Service\nmetadata: {name: vllm}\n", nil, "no Deployment or StatefulSet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeCluster()
			_, err := Start(t.Context(), c.clients, Options{RunID: "x", Objects: objects(t, tc.yaml), Serving: tc.serving, Service: "vllm", Port: 80, Timeout: time.Second})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// The namespaces of an owner that is gone are deleted at the next start,
// saying so; those of a live owner, or of one that cannot be told, stay.
func TestGoneOwnersNamespacesAreDeleted(t *testing.T) {
	ns := func(name, owner string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRun: name},
			Annotations: map[string]string{AnnotOwner: owner}}}
	}
	c := newFakeCluster(ns("perfgate-old", "process/gone"), ns("perfgate-live", "process/live"), ns("perfgate-other", "pod/elsewhere"),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod"}})
	var notices []string
	o := Options{RunID: "new", Objects: objects(t, manifests), Service: "vllm", Port: 80, Timeout: 10 * time.Millisecond, Poll: 5 * time.Millisecond,
		Owner: "process/me", Notice: func(m string) { notices = append(notices, m) },
		OwnerGone: func(_ context.Context, owner string) (bool, string, bool) {
			switch owner {
			case "process/gone":
				return true, "its process 42 is no longer running on this host", true
			case "process/live":
				return false, "", true
			}
			return false, "", false
		}}
	_, err := Start(t.Context(), c.clients, o)
	require.Error(t, err, "nothing plays the controller: not ready")
	assert.Contains(t, err.Error(), "not ready after 10ms (stack.ready_timeout): Deployment/vllm: 0 of 2 replicas ready")
	names := map[string]bool{}
	list, err := c.typed.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, n := range list.Items {
		names[n.Name] = true
	}
	assert.Equal(t, map[string]bool{"perfgate-live": true, "perfgate-other": true, "prod": true}, names)
	assert.Equal(t, []string{"deleted namespace perfgate-old, left by perfgate run perfgate-old: its process 42 is no longer running on this host"}, notices)
}

func TestReadManifests(t *testing.T) {
	objs := objects(t, manifests)
	require.Len(t, objs, 2)
	assert.Equal(t, "Deployment", objs[0].GetKind())
	assert.Equal(t, "Service", objs[1].GetKind())

	dir := t.TempDir()
	for name, body := range map[string]string{
		"nokind.yaml": "apiVersion: v1\nmetadata: {name: x}\n",
		"noname.yaml": "apiVersion: v1\nkind: Service\n",
		"list.yaml":   "apiVersion: v1\nkind: List\nmetadata: {name: x}\nitems: []\n",
		"bad.yaml":    "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n---\n: : :\n",
		"empty.yaml":  "# nothing\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := ReadManifests([]string{p})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), p, "%s: the error names the file", name)
	}
	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, make([]byte, MaxManifestBytes+1), 0o644))
	_, err := ReadManifests([]string{big})
	assert.ErrorContains(t, err, "over 4 MiB")
	_, err = ReadManifests([]string{filepath.Join(dir, "missing.yaml")})
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

// A kustomize directory is refused with the command that renders it.
func TestReadManifestsRefusesAKustomization(t *testing.T) {
	_, err := ReadManifests([]string{"testdata/kustomize/overlay"})
	require.EqualError(t, err, "manifests: testdata/kustomize/overlay is a kustomize directory (it holds kustomization.yaml): perfgate reads plain manifests; render it first, `kubectl kustomize testdata/kustomize/overlay > stack.yaml` (or `kustomize build`), and name the file")
}

func TestNamespaceName(t *testing.T) {
	assert.Equal(t, "perfgate-run-1a2b", namespaceName("Run_1a2b"))
	long := namespaceName("x" + string(make([]byte, 0)) + "0123456789012345678901234567890123456789012345678901234567890123456789")
	assert.LessOrEqual(t, len(long), 63)
}

// The shipped examples' manifests read, and name what their configs say.
func TestExampleManifests(t *testing.T) {
	sim, err := ReadManifests([]string{"../../examples/kubernetes/sim"})
	require.NoError(t, err)
	require.Len(t, sim, 2)
	assert.Equal(t, "Deployment", sim[0].GetKind())
	assert.Equal(t, "sim", sim[0].GetName())
	replicas, found, err := unstructured.NestedInt64(sim[0].Object, "spec", "replicas")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, int64(2), replicas, "integers stay integers")
	assert.Equal(t, "Service", sim[1].GetKind())

	kserve, err := ReadManifests([]string{"../../examples/kubernetes/kserve"})
	require.NoError(t, err)
	require.Len(t, kserve, 2)
	assert.Equal(t, "InferenceService", kserve[0].GetKind())
	assert.Equal(t, "llama-openai", kserve[1].GetName())
}
