// Package kubetest is a Kubernetes API without nodes for tests of
// perfgate's kubernetes stack: client-go's fake clients behind the
// kinds a stack's manifests use, and a stand-in for the controllers and
// the kubelet that makes what perfgate creates ready.
package kubetest

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/perfgate/perfgate/internal/kube"
)

// The resources a test cluster serves beside the core ones.
var (
	Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	Services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
)

// Cluster is an API server to test against: client-go's fake one
// (NewCluster: the typed client holds namespaces, pods, Services and
// nodes, the dynamic one the manifests' objects), or a real one's clients
// (ClusterOf).
type Cluster struct {
	// Typed and Dynamic are the fake clients, nil for a real cluster.
	Typed   *fake.Clientset
	Dynamic *dynamicfake.FakeDynamicClient
	Clients *kube.Clients
}

// NewCluster is a cluster holding objs (nodes, namespaces...).
func NewCluster(objs ...runtime.Object) *Cluster {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace)
	typed := fake.NewSimpleClientset(objs...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		Deployments: "DeploymentList", Services: "ServiceList"})
	return &Cluster{Typed: typed, Dynamic: dyn, Clients: &kube.Clients{Core: typed.CoreV1(), Dynamic: dyn, Mapper: mapper}}
}

// ClusterOf is the cluster the clients reach (a ControlPlane's).
func ClusterOf(c *kube.Clients) *Cluster {
	return &Cluster{Clients: c}
}

// Serve plays the controllers and the kubelet until ctx ends: for every
// Deployment perfgate creates in a namespace of its own, it copies the
// namespace's Services to the typed client, creates the Deployment's
// replicas as ready pods of its template's labels and image on node, and
// marks them available.
func (c *Cluster) Serve(ctx context.Context, node string) {
	served := map[string]bool{}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		nss, err := c.Clients.Core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelManagedBy + "=" + kube.ManagedBy})
		if err != nil {
			continue
		}
		for _, ns := range nss.Items {
			deps, err := c.Clients.Dynamic.Resource(Deployments).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range deps.Items {
				d := &deps.Items[i]
				if key := ns.Name + "/" + d.GetName(); !served[key] {
					served[key] = c.serve(ctx, ns.Name, d, node) == nil
				}
			}
		}
	}
}

// serve makes one Deployment's pods ready and the Deployment available.
func (c *Cluster) serve(ctx context.Context, ns string, d *unstructured.Unstructured, node string) error {
	svcs, err := c.Clients.Dynamic.Resource(Services).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, u := range svcs.Items {
		var svc corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &svc); err != nil {
			return err
		}
		// A real API server shows the Service to both clients already;
		// the fake one keeps the typed objects apart.
		if _, err := c.Clients.Core.Services(ns).Get(ctx, svc.Name, metav1.GetOptions{}); err == nil {
			continue
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		svc.ResourceVersion = ""
		if _, err := c.Clients.Core.Services(ns).Create(ctx, &svc, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	replicas, found, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	labels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"containers": containers}, &spec); err != nil {
		return err
	}
	spec.NodeName = node
	var statuses []corev1.ContainerStatus
	for _, ct := range spec.Containers {
		statuses = append(statuses, corev1.ContainerStatus{Name: ct.Name, Image: ct.Image, ImageID: ct.Image + "@sha256:0123456789abcdef", Ready: true})
	}
	for i := range replicas {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.GetName() + "-" + string(rune('a'+i)), Namespace: ns, Labels: labels}, Spec: spec}
		created, err := c.Clients.Core.Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// The kubelet's part: a real API server takes a pod's status
		// from its status subresource only.
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: statuses,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		if _, err := c.Clients.Core.Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	for _, field := range []string{"replicas", "readyReplicas", "availableReplicas"} {
		if err := unstructured.SetNestedField(d.Object, replicas, "status", field); err != nil {
			return err
		}
	}
	_, err = c.Clients.Dynamic.Resource(Deployments).Namespace(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}
