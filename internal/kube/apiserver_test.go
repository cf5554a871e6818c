package kube_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
)

// Against a real kube-apiserver (make test-apiserver): what the fake API
// takes on trust is checked here by the server itself, the objects'
// validation, the status subresources, RBAC's admin, namespaces that
// terminate. The test plays the controllers and the kubelet.
func TestAgainstAPIServer(t *testing.T) {
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneBin(t))
	clients, err := kube.Connect(cp.Kubeconfig, "")
	require.NoError(t, err, "kube.Connect reads the kubeconfig as kubectl would")
	objs, err := kube.ReadManifests([]string{"../../examples/kubernetes/sim"})
	require.NoError(t, err)
	ctx := t.Context()

	t.Run("ready, identified, and its namespace deleted", func(t *testing.T) {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go kubetest.ClusterOf(clients).Serve(sctx, "node-1")
		var forwarded []string
		s, err := kube.Start(ctx, clients, kube.Options{RunID: "real-1", Objects: objs, Serving: []string{"Deployment/sim"},
			Service: "sim", Port: 8000, PortForward: true, Timeout: time.Minute, Poll: 50 * time.Millisecond,
			Forward: func(_ context.Context, _ *kube.Clients, ns, pod string, port, _ int) (string, func(), error) {
				forwarded = append(forwarded, ns+"/"+pod)
				return "127.0.0.1:9", func() {}, nil
			}})
		require.NoError(t, err)
		assert.Equal(t, []string{"perfgate-real-1/sim-a", "perfgate-real-1/sim-b"}, forwarded, "a forward to each ready pod")
		assert.Len(t, s.BaseURLs(), 2)
		assert.Equal(t, 2, s.Identity().Replicas)
		ns, err := clients.Core.Namespaces().Get(ctx, "perfgate-real-1", metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, kube.ManagedBy, ns.Labels[kube.LabelManagedBy])
		require.NoError(t, s.Stop(ctx))
		ns, err = clients.Core.Namespaces().Get(ctx, "perfgate-real-1", metav1.GetOptions{})
		if err == nil { // no namespace controller here: it stays terminating
			assert.NotNil(t, ns.DeletionTimestamp, "the namespace is being deleted")
		}
	})

	t.Run("an OOM-killed pod fails the start", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			_, err := kube.Start(ctx, clients, kube.Options{RunID: "real-2", Objects: objs, Service: "sim", Port: 8000,
				Timeout: time.Minute, Poll: 50 * time.Millisecond})
			done <- err
		}()
		const ns = "perfgate-real-2"
		var pod *corev1.Pod
		require.Eventually(t, func() bool {
			p, err := clients.Core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sim-x", Labels: map[string]string{"app": "sim"}},
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "sim", Image: "ghcr.io/perfgate/perfgate:v1"}}}}, metav1.CreateOptions{})
			pod = p
			return err == nil
		}, 30*time.Second, 50*time.Millisecond, "the namespace is made by the start")
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sim", Image: "ghcr.io/perfgate/perfgate:v1",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}
		_, err := clients.Core.Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		require.NoError(t, err)
		err = <-done
		var pe *kube.PodError
		require.ErrorAs(t, err, &pe)
		assert.True(t, pe.OOMKilled())
		assert.Equal(t, "sim-x", pe.Pod)
		assert.Nil(t, pe.Tail, "no kubelet here to serve the log")
	})

	t.Run("a cluster-scoped object is refused by the server's own mapping", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "role.yaml"), []byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\n"), 0o644))
		more, err := kube.ReadManifests([]string{dir})
		require.NoError(t, err)
		_, err = kube.Start(ctx, clients, kube.Options{RunID: "real-3", Objects: append(more, objs...), Service: "sim", Port: 8000, Timeout: time.Second})
		require.ErrorContains(t, err, "ClusterRole reader is cluster-scoped")
	})

	t.Run("a gone pod's namespaces are deleted by the next start", func(t *testing.T) {
		_, err := clients.Core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perfgate-left",
			Labels:      map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelRun: "left"},
			Annotations: map[string]string{kube.AnnotOwner: "pod/arc-runners/runner-gone"}}}, metav1.CreateOptions{})
		require.NoError(t, err)
		var notices []string
		_, err = kube.Start(ctx, clients, kube.Options{RunID: "real-4", Objects: objs, Service: "sim", Port: 8000, Timeout: 100 * time.Millisecond,
			Notice: func(m string) { notices = append(notices, m) }})
		require.Error(t, err, "nothing serves it: not ready")
		assert.Contains(t, notices, "deleted namespace perfgate-left, left by perfgate run left: its pod arc-runners/runner-gone no longer exists")
		ns, err := clients.Core.Namespaces().Get(ctx, "perfgate-left", metav1.GetOptions{})
		if err == nil {
			assert.NotNil(t, ns.DeletionTimestamp)
		}
	})

	t.Run("a crashed pod's last lines, from its node's kubelet", func(t *testing.T) {
		// The API server fetches a pod's log from the kubelet of its
		// node, at the node's address and kubelet port, over TLS it does
		// not verify without --kubelet-certificate-authority.
		var asked []string
		kubelet := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
			if r.URL.Query().Get("previous") == "true" {
				http.Error(w, "previous terminated container \"sim\" not found", http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, "loading weights\nCUDA error: out of memory\n")
		}))
		defer kubelet.Close()
		host, port, err := net.SplitHostPort(strings.TrimPrefix(kubelet.URL, "https://"))
		require.NoError(t, err)
		portN, err := strconv.Atoi(port)
		require.NoError(t, err)
		node, err := clients.Core.Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-logs"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
		node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(portN)
		_, err = clients.Core.Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		require.NoError(t, err)

		done := make(chan error, 1)
		go func() {
			_, err := kube.Start(ctx, clients, kube.Options{RunID: "real-5", Objects: objs, Service: "sim", Port: 8000,
				Timeout: time.Minute, Poll: 50 * time.Millisecond})
			done <- err
		}()
		const ns = "perfgate-real-5"
		var pod *corev1.Pod
		require.Eventually(t, func() bool {
			p, err := clients.Core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sim-y", Labels: map[string]string{"app": "sim"}},
				Spec: corev1.PodSpec{NodeName: "node-logs", Containers: []corev1.Container{{Name: "sim", Image: "ghcr.io/perfgate/perfgate:v1"}}}}, metav1.CreateOptions{})
			pod = p
			return err == nil
		}, 30*time.Second, 50*time.Millisecond)
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "sim", Image: "ghcr.io/perfgate/perfgate:v1",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}
		_, err = clients.Core.Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		require.NoError(t, err)
		err = <-done
		var pe *kube.PodError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "Error", pe.Reason)
		assert.Equal(t, 1, pe.ExitCode)
		assert.Equal(t, []string{"loading weights", "CUDA error: out of memory"}, pe.Tail, "the pod's last lines, through the API server from its kubelet")
		require.NotEmpty(t, asked)
		assert.Contains(t, asked[len(asked)-1], "/containerLogs/perfgate-real-5/sim-y/sim?")
		assert.Contains(t, asked[len(asked)-1], "tailLines=20")
	})

	t.Run("a deleted pod replaced and forwarded on its local port again", func(t *testing.T) {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		cluster := kubetest.ClusterOf(clients)
		cluster.ColdStart = 200 * time.Millisecond
		go cluster.Serve(sctx, "node-1")
		locals := map[string]int{}
		s, err := kube.Start(ctx, clients, kube.Options{RunID: "real-6", Objects: objs, Serving: []string{"Deployment/sim"},
			Service: "sim", Port: 8000, PortForward: true, Timeout: time.Minute, Poll: 20 * time.Millisecond,
			Forward: func(_ context.Context, _ *kube.Clients, _, pod string, _, local int) (string, func(), error) {
				if local == 0 {
					local = 20000 + len(locals)
				}
				locals[pod] = local
				return fmt.Sprintf("127.0.0.1:%d", local), func() {}, nil
			}})
		require.NoError(t, err)
		defer func() { _ = s.Stop(context.WithoutCancel(ctx)) }()
		require.Equal(t, 2, s.Count())
		require.NoError(t, s.Kill(ctx, 1))
		_, err = clients.Core.Pods("perfgate-real-6").Get(ctx, "sim-b", metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "deleted with no grace period: gone at once (%v)", err)
		require.NoError(t, s.Replace(ctx, 1))
		assert.Equal(t, []string{"sim-a", "sim-c"}, s.Pods())
		assert.Equal(t, locals["sim-b"], locals["sim-c"], "the replacement takes the deleted pod's local port")
		assert.ErrorIs(t, s.Replace(ctx, 0), kube.ErrNotKilled)
		select {
		case <-s.Done():
			t.Fatalf("a deleted pod is no failure of the stack: %v", s.Err())
		default:
		}
	})
}
