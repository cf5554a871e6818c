package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/kube"
	"github.com/perfgate/perfgate/internal/result"
)

// Addressed is a stack whose address perfgate learns only once it runs (a
// port-forward to each ready pod, or a Service's name in the run's
// namespace): its roots replace target.base_url, and with two or more
// perfgate routes over them as over target.base_urls.
type Addressed interface {
	BaseURLs() []string
}

// kubeStack is a stack on Kubernetes (internal/kube) as an Instance: a pod
// that fails is its exit.
type kubeStack struct {
	s *kube.Stack
}

var (
	_ Instance       = kubeStack{}
	_ Addressed      = kubeStack{}
	_ Replicas       = kubeStack{}
	_ ReplicaCounter = kubeStack{}
)

// ReplicaCounter is a stack whose ready replicas change by themselves (an
// autoscaler's pods on Kubernetes), counted as the run goes.
type ReplicaCounter interface {
	// ReadyReplicas are the ready replicas from `from` to `to`: the count
	// at from and each change after, at seconds from from.
	ReadyReplicas(from, to time.Time) []result.ReadyReplicas
}

// startKubernetes applies the stack's manifests into a namespace of the
// run's own and waits until its serving objects are ready, deleting first
// the namespaces of an earlier perfgate that is gone. The readiness of the
// server behind the Service (health, a one-token completion) is waited for
// after, as for every stack.
func startKubernetes(ctx context.Context, cfg config.Stack, o Options) (Instance, error) {
	k := cfg.Kubernetes
	objs, err := kube.ReadManifests(k.Paths(o.Dir))
	if err != nil {
		return nil, err
	}
	c := o.Kubernetes.Clients
	if c == nil {
		if c, err = kube.Connect(k.Kubeconfig, k.Context); err != nil {
			return nil, err
		}
	}
	name, port, _ := k.ServiceRef()
	owner := kube.SelfPod()
	if owner == "" {
		owner = kubeOwner()
	}
	s, err := kube.Start(ctx, c, kube.Options{
		RunID: o.RunID, Objects: objs, Serving: k.Serving, Service: name, Port: port,
		PortForward: k.Access == config.AccessPortForward || k.Access == config.AccessAuto && !kube.InCluster(),
		Forward:     o.Kubernetes.Forward, Timeout: cfg.ReadyTimeout, Poll: o.Kubernetes.Poll,
		Owner: owner, OwnerGone: kubeOwnerGone, Progress: o.Notice, Notice: o.Notice,
	})
	if err != nil {
		return nil, err
	}
	return kubeStack{s}, nil
}

// KubernetesOptions are what a kubernetes start needs beyond Options.
type KubernetesOptions struct {
	// Clients reach the cluster; nil connects as kubectl would.
	Clients *kube.Clients
	// Forward makes the port-forward; nil is client-go's.
	Forward kube.Forwarder
	// Poll is the time between looks at the cluster (0: a second).
	Poll time.Duration
}

func (k kubeStack) Done() <-chan struct{} { return k.s.Done() }

// Err is how the stack ended: a failed pod, as an *ExitError.
func (k kubeStack) Err() error {
	err := k.s.Err()
	var pe *kube.PodError
	if !errors.As(err, &pe) {
		return err
	}
	what := fmt.Sprintf("pod %s/%s", pe.Namespace, pe.Pod)
	if pe.Container != "" {
		what += " container " + pe.Container
	}
	ee := &ExitError{What: what + " (" + pe.Reason + ")", Code: pe.ExitCode, OOMKilled: pe.OOMKilled(), Tail: pe.Tail}
	if pe.ExitCode < 0 {
		ee.Signal = pe.Reason
	}
	return ee
}

func (k kubeStack) Tail(n int) []string { return k.s.Tail(n) }

// Count is the ready pods behind the Service at the start: the replicas a
// fault deletes one of.
func (k kubeStack) Count() int { return k.s.Count() }

// Kill deletes replica i's pod with no grace period.
func (k kubeStack) Kill(ctx context.Context, i int) error { return k.s.Kill(ctx, i) }

// Restart waits until the pod's controller has a ready replacement (up to
// stack.ready_timeout) and reaches it where perfgate reached the pod: the
// cluster starts it again, not perfgate.
func (k kubeStack) Restart(ctx context.Context, i int) error {
	if err := k.s.Replace(ctx, i); errors.Is(err, kube.ErrNotKilled) {
		return ErrRunning
	} else if err != nil {
		return err
	}
	return nil
}

// Replica is the stack itself: a failed pod's log tail is the pod's.
func (k kubeStack) Replica(int) Instance { return k }

func (k kubeStack) ReadyReplicas(from, to time.Time) []result.ReadyReplicas {
	var out []result.ReadyReplicas
	for _, c := range k.s.ReadyBetween(from, to) {
		out = append(out, result.ReadyReplicas{AtS: c.At.Sub(from).Seconds(), Ready: c.Ready})
	}
	return out
}
func (k kubeStack) BaseURLs() []string { return k.s.BaseURLs() }

func (k kubeStack) Identity() result.Stack {
	id := k.s.Identity()
	return result.Stack{Kind: config.StackKubernetes, Namespace: k.s.Namespace(), Images: id.Images,
		GPUProducts: id.GPUProducts, GPUs: id.GPUs, Replicas: id.Replicas, PodStartsS: id.PodStartsS}
}

func (k kubeStack) Stop(ctx context.Context) error { return k.s.Stop(ctx) }

// kubeOwner is this perfgate as a namespace's owner annotation: this
// process (as a Docker container's owner label names it); "" when it
// cannot be told, and then its namespaces are left for a person to delete.
func kubeOwner() string {
	owner, _ := processOwner(os.Getpid())
	return owner
}

// kubeOwnerGone says whether the perfgate a namespace's owner names is
// gone: a process on this machine that no longer runs (a pod owner is
// internal/kube's to tell). Any other owner (another runner, another
// boot) cannot be told, and its namespace stays.
func kubeOwnerGone(ctx context.Context, owner string) (bool, string, bool) {
	if !strings.HasPrefix(owner, "process/") {
		return false, "", false
	}
	return ownerGone(ctx, nil, owner)
}
