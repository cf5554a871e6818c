package stack

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/kube/kubetest"
)

// A perfgate killed with SIGKILL leaves its namespace; the next start on
// the cluster deletes it, saying why, because the process its owner
// annotation names is gone. A namespace of a perfgate still running stays.
func testKilledOwnersNamespace(t *testing.T, clients *kube.Clients) {
	ctx := t.Context()
	killed := exec.Command("sleep", "60")
	require.NoError(t, killed.Start())
	deadOwner, ok := processOwner(killed.Process.Pid)
	require.True(t, ok, "this machine tells processes apart (/proc)")
	require.NoError(t, killed.Process.Kill()) // SIGKILL: no chance to clean up
	_, _ = killed.Process.Wait()
	live, ok := processOwner(os.Getppid())
	require.True(t, ok)
	for name, owner := range map[string]string{"perfgate-killed": deadOwner, "perfgate-live": live} {
		_, err := clients.Core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{kube.LabelManagedBy: kube.ManagedBy, kube.LabelRun: name}, Annotations: map[string]string{kube.AnnotOwner: owner}}},
			metav1.CreateOptions{})
		require.NoError(t, err)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/svc.yaml", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: sim}\nspec: {ports: [{port: 8000}]}\n"), 0o644))
	var notices []string
	cfg := config.Stack{Kind: config.StackKubernetes, ReadyTimeout: time.Second,
		Kubernetes: &config.KubernetesStack{Manifests: []string{"svc.yaml"}, Serving: []string{"Service/sim"}, Service: "sim:8000", Access: config.AccessDNS}}
	_, err := Start(ctx, cfg, Options{RunID: "next", Dir: dir, Kubernetes: KubernetesOptions{Clients: clients},
		Notice: func(m string) { notices = append(notices, m) }})
	require.Error(t, err, "a Service has no Ready condition: the start itself is not the point")
	require.NotEmpty(t, notices)
	assert.Contains(t, notices[0], "deleted namespace perfgate-killed, left by perfgate run perfgate-killed: its process")
	deleted := func(name string) bool {
		ns, err := clients.Core.Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		return err != nil || ns.DeletionTimestamp != nil
	}
	assert.True(t, deleted("perfgate-killed"))
	assert.False(t, deleted("perfgate-live"), "a live owner's namespace stays")
}

func TestKilledOwnersNamespaceIsDeleted(t *testing.T) {
	testKilledOwnersNamespace(t, kubetest.NewCluster().Clients)
}

// The same against a real API server (make test-apiserver).
func TestKilledOwnersNamespaceAgainstAPIServer(t *testing.T) {
	cp := kubetest.StartControlPlane(t, kubetest.ControlPlaneBin(t))
	clients, err := kube.Connect(cp.Kubeconfig, "")
	require.NoError(t, err)
	testKilledOwnersNamespace(t, clients)
}
