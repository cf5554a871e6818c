package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// A fault's deletion and its replacement, the test playing the
// controller: a pod that was there at the deletion (an autoscaler's) is
// not the replacement; a StatefulSet's, with the deleted pod's name and
// another UID, is, forwarded on the replica's local port again; the
// deleted pod's end, reported before it is gone, is no failure.
func TestKillAndReplace(t *testing.T) {
	c := newFakeCluster()
	ctx := t.Context()
	locals := map[string]int{}
	o := options(t, new(string))
	o.Timeout, o.Poll = 200*time.Millisecond, 5*time.Millisecond
	o.Forward = func(_ context.Context, _ *Clients, _, pod string, _, local int) (string, func(), error) {
		if local == 0 {
			local = 20001 + len(locals)
		}
		locals[pod] = local
		return fmt.Sprintf("127.0.0.1:%d", local), func() {}, nil
	}
	out := startAsync(t, c, o)
	const ns = "perfgate-run-1a2b"
	c.createService(t, ns)
	c.podWithUID(t, ns, "vllm-0", "uid-0", nil)
	c.podWithUID(t, ns, "vllm-1", "uid-1", nil)
	c.setAvailable(t, ns, 2)
	r := <-out
	require.NoError(t, r.err)
	s := r.s
	defer func() { _ = s.Stop(context.Background()) }()
	require.Equal(t, 2, s.Count())
	assert.Equal(t, []string{"http://127.0.0.1:20001", "http://127.0.0.1:20002"}, s.BaseURLs())

	c.podWithUID(t, ns, "vllm-2", "uid-2", nil) // an autoscaler's, ready before the fault
	require.NoError(t, s.Kill(ctx, 1))
	assert.Equal(t, []string{"vllm-0", ""}, s.Pods())
	_, err := c.typed.CoreV1().Pods(ns).Get(ctx, "vllm-1", metav1.GetOptions{})
	assert.Error(t, err, "deleted")
	assert.ErrorContains(t, s.Kill(ctx, 1), "replica 2 was deleted and not replaced yet")
	assert.ErrorContains(t, s.Kill(ctx, 2), "no replica 3: the stack has 2")

	// The kubelet reports the deleted pod's end before the API server
	// lets it go: no failure of the stack.
	c.podWithUID(t, ns, "vllm-1", "uid-1", func(st *corev1.PodStatus) {
		st.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}
	})
	assert.NoError(t, s.podFailure(ctx), "the fault's own deletion")
	err = s.Replace(ctx, 1)
	assert.ErrorContains(t, err, "no ready pod replaced replica 2 within stack.ready_timeout 200ms", "vllm-2 was there before the deletion")
	require.NoError(t, c.typed.CoreV1().Pods(ns).Delete(ctx, "vllm-1", metav1.DeleteOptions{}))

	c.podWithUID(t, ns, "vllm-1", "uid-1b", nil) // the StatefulSet's: the name again, another UID
	require.NoError(t, s.Replace(ctx, 1))
	assert.Equal(t, []string{"vllm-0", "vllm-1"}, s.Pods())
	assert.Equal(t, 20002, locals["vllm-1"], "forwarded on the replica's local port again")
	assert.ErrorIs(t, s.Replace(ctx, 0), ErrNotKilled)

	// A deletion the API server refuses leaves the replica as it was.
	c.typed.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "vllm-0", fmt.Errorf("RBAC: no delete"))
	})
	err = s.Kill(ctx, 0)
	assert.ErrorContains(t, err, "kubernetes: delete pod vllm-0: pods \"vllm-0\" is forbidden")
	assert.Equal(t, []string{"vllm-0", "vllm-1"}, s.Pods())
	assert.False(t, s.killed[podKey("vllm-0", "uid-0")], "not taken for killed")
}

// ReadyBetween is the count at the start of a span and each change in it.
func TestReadyBetween(t *testing.T) {
	s := &Stack{}
	t0 := time.Unix(1000, 0)
	ready := func(n int) []corev1.Pod {
		pods := make([]corev1.Pod, n)
		for i := range pods {
			pods[i].Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return pods
	}
	s.count(ready(2), t0)
	s.count(ready(2), t0.Add(time.Second)) // no change, no count
	s.count(ready(1), t0.Add(5*time.Second))
	s.count(ready(3), t0.Add(9*time.Second))
	assert.Len(t, s.series, 3)
	assert.Equal(t, []ReadyCount{{At: t0.Add(2 * time.Second), Ready: 2}, {At: t0.Add(5 * time.Second), Ready: 1}},
		s.ReadyBetween(t0.Add(2*time.Second), t0.Add(8*time.Second)))
	assert.Equal(t, []ReadyCount{{At: t0.Add(9 * time.Second), Ready: 3}}, s.ReadyBetween(t0.Add(9*time.Second), t0.Add(20*time.Second)))
	assert.Nil(t, s.ReadyBetween(t0.Add(-time.Second), t0.Add(-time.Millisecond)), "nothing counted before")
}

// podWithUID is c.pod with a UID: one life of a pod.
func (c *fakeCluster) podWithUID(t *testing.T, ns, name string, uid types.UID, status func(*corev1.PodStatus)) {
	c.pod(t, ns, name, true, func(st *corev1.PodStatus) {
		if status != nil {
			status(st)
		}
	})
	p, err := c.typed.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	p.UID = uid
	_, err = c.typed.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{})
	require.NoError(t, err)
}
