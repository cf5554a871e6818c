package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
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
			Forward: func(_ context.Context, _ *kube.Clients, ns, pod string, port int) (string, func(), error) {
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
}
