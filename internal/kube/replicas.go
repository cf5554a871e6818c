package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A stack's replicas are the ready pods behind its Service at the start,
// in name order. A fault (config fault: {kill: replica}) deletes one at
// once, as the loss of its node would, and the stack's own controller (a
// Deployment's, a StatefulSet's) makes its replacement; perfgate waits for
// it to be ready and, through a port-forward, forwards the same local port
// to it, so that the router's address for the replica stays. Meanwhile
// that port refuses connections, which is how the router learns the
// replica is gone. Through the Service's DNS name the Service itself stops
// sending to the deleted pod.

// replica is one serving pod perfgate reaches: the pod filling its place
// (none between a fault and the replacement), the container port the
// Service's target port names on it, and, through a port-forward, the
// forward's local address and its end.
type replica struct {
	pod  string
	uid  types.UID
	port int
	addr string
	stop func()
}

// ErrNotKilled says a replica to replace was not deleted: it serves.
var ErrNotKilled = errors.New("its pod was not deleted")

// Count is how many replicas the stack has: the ready pods behind its
// Service at the start (0 when the Service selects none).
func (s *Stack) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replicas)
}

// podKey names one life of a pod: a StatefulSet's replacement has its
// predecessor's name and another UID.
func podKey(name string, uid types.UID) string { return name + "/" + string(uid) }

// wasKilled says whether a fault deleted pod.
func (s *Stack) wasKilled(pod *corev1.Pod) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.killed[podKey(pod.Name, pod.UID)]
}

// Kill deletes replica i's pod (0-based) with no grace period, ending
// then its port-forward: from now its address refuses connections. The
// pod's end is not the stack's failure. It returns once the API server
// took the deletion; a deletion it refuses leaves the replica as it was.
func (s *Stack) Kill(ctx context.Context, i int) error {
	s.mu.Lock()
	if i < 0 || i >= len(s.replicas) {
		s.mu.Unlock()
		return fmt.Errorf("kubernetes: no replica %d: the stack has %d", i+1, len(s.replicas))
	}
	r := s.replicas[i]
	if r.pod == "" {
		s.mu.Unlock()
		return fmt.Errorf("kubernetes: replica %d was deleted and not replaced yet", i+1)
	}
	key := podKey(r.pod, r.uid)
	s.killed[key] = true // before the deletion: the watch must not take its end for a failure
	s.mu.Unlock()
	// The pods there are now cannot be the replacement (an autoscaler's,
	// a pod past MaxForwards).
	present, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector})
	if err == nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		now := int64(0)
		err = s.c.Core.Pods(s.namespace).Delete(dctx, r.pod, metav1.DeleteOptions{GracePeriodSeconds: &now, Preconditions: uidPrecondition(r.uid)})
		cancel()
		if apierrors.IsNotFound(err) {
			err = nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		delete(s.killed, key)
		return fmt.Errorf("kubernetes: delete pod %s: %w", r.pod, err)
	}
	for _, p := range present.Items {
		s.before[podKey(p.Name, p.UID)] = true
	}
	if r.stop != nil {
		r.stop()
	}
	s.replicas[i].pod, s.replicas[i].uid, s.replicas[i].stop = "", "", nil
	s.notice("deleted pod %s/%s (replica %d of %d), with no grace period", s.namespace, r.pod, i+1, len(s.replicas))
	return nil
}

// deleteTimeout bounds a fault's deletion: the API server takes it at once
// or not at all.
const deleteTimeout = 30 * time.Second

func uidPrecondition(uid types.UID) *metav1.Preconditions {
	if uid == "" {
		return nil
	}
	return &metav1.Preconditions{UID: &uid}
}

// Replace waits, up to the start's timeout, until a pod behind the
// Service that is no replica's is ready, the deleted replica i's
// replacement, and makes it replica i: through a port-forward, forwarded
// on replica i's local port again. It returns ErrNotKilled when replica i
// was not deleted.
func (s *Stack) Replace(ctx context.Context, i int) error {
	s.mu.Lock()
	if i < 0 || i >= len(s.replicas) {
		s.mu.Unlock()
		return fmt.Errorf("kubernetes: no replica %d: the stack has %d", i+1, len(s.replicas))
	}
	if s.replicas[i].pod != "" {
		s.mu.Unlock()
		return ErrNotKilled
	}
	addr := s.replicas[i].addr
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	var last error // the last look that failed, said if none succeeds
	for {
		p, err := s.replacement(ctx)
		if err != nil && ctx.Err() == nil {
			last = err
		}
		if p != nil {
			r := replica{pod: p.name, uid: p.uid, port: p.port}
			if s.o.PortForward {
				if err := s.forward(ctx, &r, localPort(addr)); err != nil {
					return err
				}
				if r.addr != addr {
					r.stop()
					return fmt.Errorf("kubernetes: the port-forward to pod %s could not take replica %d's local address %s again (got %s)", r.pod, i+1, addr, r.addr)
				}
			}
			s.mu.Lock()
			if s.stopped { // its forwards were ended meanwhile, and so is this one
				s.mu.Unlock()
				if r.stop != nil {
					r.stop()
				}
				return fmt.Errorf("kubernetes: the stack was stopped while replica %d was replaced", i+1)
			}
			s.replicas[i] = r
			s.mu.Unlock()
			s.notice("pod %s/%s replaces replica %d", s.namespace, r.pod, i+1)
			return nil
		}
		t := time.NewTimer(s.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			msg := fmt.Sprintf("kubernetes: no ready pod replaced replica %d within stack.ready_timeout %s", i+1, s.o.Timeout)
			if last != nil {
				return fmt.Errorf("%s; the last look: %w", msg, last)
			}
			return errors.New(msg)
		case <-t.C:
		}
	}
}

// replacement is a ready pod behind the Service that was not there when
// a replica was deleted and is no replica's, or nil: the deleted pod's
// controller's new one (a StatefulSet's has the deleted one's name and
// another UID).
func (s *Stack) replacement(ctx context.Context) (*podPort, error) {
	svc, err := s.c.Core.Services(s.namespace).Get(ctx, s.o.Service, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("stack.kubernetes.service %s: %w", s.o.Service, err)
	}
	pods, err := s.readyPodsOf(ctx, svc, s.target)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range pods {
		key := podKey(p.name, p.uid)
		held := slices.ContainsFunc(s.replicas, func(r replica) bool { return r.pod == p.name && r.uid == p.uid })
		if !held && !s.killed[key] && !s.before[key] {
			return &p, nil
		}
	}
	return nil, nil
}

// localPort is the port of a host:port, 0 when there is none.
func localPort(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(port)
	return n
}

// ReadyCount is how many pods behind the Service were ready from At on.
type ReadyCount struct {
	At    time.Time
	Ready int
}

// MaxReadySeries bounds the changes kept: a count flapping every poll of
// a day-long run stays bounded; the oldest go first.
const MaxReadySeries = 10000

// count records the ready pods among pods at now, when they changed.
func (s *Stack) count(pods []corev1.Pod, now time.Time) {
	n := 0
	for i := range pods {
		if podReady(&pods[i]) && pods[i].DeletionTimestamp == nil && !s.wasKilled(&pods[i]) {
			n++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := len(s.series); k > 0 && s.series[k-1].Ready == n {
		return
	}
	s.series = append(s.series, ReadyCount{At: now, Ready: n})
	if len(s.series) > MaxReadySeries {
		s.series = slices.Delete(s.series, 0, len(s.series)-MaxReadySeries)
	}
}

// ReadyBetween is the ready pods behind the Service from `from` to `to`:
// the count at from (the last seen before it) and each change after, up
// to to. Nil when nothing was counted before to (a Service that selects
// no pods).
func (s *Stack) ReadyBetween(from, to time.Time) []ReadyCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ReadyCount
	for _, c := range s.series {
		switch {
		case c.At.After(to):
			return out
		case !c.At.After(from):
			out = []ReadyCount{{At: from, Ready: c.Ready}}
		default:
			out = append(out, c)
		}
	}
	return out
}

// Pods are the replicas' pods, in their order ("" for one deleted and not
// replaced yet).
func (s *Stack) Pods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.replicas))
	for i, r := range s.replicas {
		out[i] = r.pod
	}
	return out
}
