package kube

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPUResource is the extended resource NVIDIA's device plugin gives pods,
// and GPUProductLabel the node label its feature discovery sets.
const (
	GPUResource     = corev1.ResourceName("nvidia.com/gpu")
	GPUProductLabel = "nvidia.com/gpu.product"
)

// Identity is what the cluster says of a ready stack, for the result.
type Identity struct {
	// Images are the ready pods' images as the nodes pulled them, by
	// digest where the runtime says (repo@sha256:...), sorted, each once.
	Images []string
	// GPUProducts are the products of the GPUs of the ready pods' nodes
	// (their nvidia.com/gpu.product label), sorted, each once.
	GPUProducts []string
	// GPUs is the GPUs the ready pods ask for (nvidia.com/gpu), in all.
	GPUs int
	// Replicas is how many pods were ready.
	Replicas int
	// PodStartsS are the ready pods' starts: from scheduled to ready
	// (their PodScheduled and Ready conditions, on the API server's clock,
	// to the second), in seconds, in the pods' name order: each replica's
	// cold start on the cluster, an image pull included where its node
	// had to pull.
	PodStartsS []float64
}

// identify reads the stack's identity from its ready pods and their nodes.
func (s *Stack) identify(ctx context.Context) Identity {
	var id Identity
	pods, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return id
	}
	nodes := map[string]bool{}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for i := range pods.Items {
		p := &pods.Items[i]
		if !podReady(p) {
			continue
		}
		id.Replicas++
		if d, ok := podStart(p); ok {
			id.PodStartsS = append(id.PodStartsS, d.Seconds())
		}
		for _, cs := range p.Status.ContainerStatuses {
			img := cs.Image
			if cs.ImageID != "" {
				img = strings.TrimPrefix(cs.ImageID, "docker-pullable://")
			}
			if img != "" && !slices.Contains(id.Images, img) {
				id.Images = append(id.Images, img)
			}
		}
		for _, c := range p.Spec.Containers {
			q, ok := c.Resources.Limits[GPUResource]
			if !ok {
				q, ok = c.Resources.Requests[GPUResource]
			}
			if ok {
				id.GPUs += int(q.Value())
			}
		}
		if p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName] = true
		}
	}
	for name := range nodes {
		n, err := s.c.Core.Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if prod := n.Labels[GPUProductLabel]; prod != "" && !slices.Contains(id.GPUProducts, prod) {
			id.GPUProducts = append(id.GPUProducts, prod)
		}
	}
	slices.Sort(id.Images)
	slices.Sort(id.GPUProducts)
	return id
}

// podStart is the time from pod's PodScheduled condition to its Ready
// one; ok false when either is missing or they are out of order.
func podStart(p *corev1.Pod) (time.Duration, bool) {
	var scheduled, ready time.Time
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case corev1.PodScheduled:
			scheduled = c.LastTransitionTime.Time
		case corev1.PodReady:
			ready = c.LastTransitionTime.Time
		}
	}
	if scheduled.IsZero() || ready.IsZero() || ready.Before(scheduled) {
		return 0, false
	}
	return ready.Sub(scheduled), true
}

// Identity is what the cluster said of the stack once it was ready.
func (s *Stack) Identity() Identity { return s.id }
