// Package kubetest is a Kubernetes API without nodes for tests of
// perfgate's kubernetes stack: client-go's fake clients behind the
// kinds a stack's manifests use, and a stand-in for the controllers and
// the kubelet that makes what perfgate creates ready.
package kubetest

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

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
	// ColdStart is how long a pod Serve makes takes to be ready.
	ColdStart time.Duration
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

// ClusterOf is the cluster the clients reach (a ControlPlane's), through
// clients of its own without client-go's rate limit: the controllers it
// plays look often, and perfgate's own requests must not wait behind them.
func ClusterOf(c *kube.Clients) *Cluster {
	if c.REST == nil {
		return &Cluster{Clients: c}
	}
	cfg := rest.CopyConfig(c.REST)
	cfg.QPS = -1 // no limit
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return &Cluster{Clients: c}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return &Cluster{Clients: c}
	}
	return &Cluster{Clients: &kube.Clients{Core: core, Dynamic: dyn, Mapper: c.Mapper, REST: cfg}}
}

// Serve plays the controllers and the kubelet until ctx ends: for every
// Deployment perfgate creates in a namespace of its own, it copies the
// namespace's Services to the typed client and keeps the Deployment's
// replicas (spec.replicas, which a test may change as an autoscaler
// would) as pods of its template's labels and image on node, named
// <deployment>-a, -b, ... in order of creation: a deleted pod is replaced
// by a new one, ready ColdStart after it was made, and the Deployment's
// status counts the ready ones.
func (c *Cluster) Serve(ctx context.Context, node string) {
	d := &deploymentController{c: c, node: node, made: map[string]time.Time{}, next: map[string]int{}, services: map[string]bool{}}
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
			if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
				continue // an ended run's
			}
			deps, err := c.Clients.Dynamic.Resource(Deployments).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range deps.Items {
				_ = d.reconcile(ctx, ns.Name, &deps.Items[i])
			}
		}
	}
}

// deploymentController is Serve's state: when each pod was made, the
// next pod's letter of each Deployment, the namespaces whose Services
// were copied.
type deploymentController struct {
	c        *Cluster
	node     string
	made     map[string]time.Time // ns/pod
	next     map[string]int       // ns/deployment
	services map[string]bool      // ns
}

// reconcile brings one Deployment's pods to its replicas and its status
// to its pods.
func (d *deploymentController) reconcile(ctx context.Context, ns string, dep *unstructured.Unstructured) error {
	c := d.c
	if !d.services[ns] {
		if err := c.copyServices(ctx, ns); err != nil {
			return err
		}
		d.services[ns] = true
	}
	replicas, found, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	labels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"containers": containers}, &spec); err != nil {
		return err
	}
	spec.NodeName = d.node
	pods, err := c.Clients.Core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: labels})})
	if err != nil {
		return err
	}
	var alive []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && strings.HasPrefix(p.Name, dep.GetName()+"-") {
			alive = append(alive, p)
		}
	}
	key := ns + "/" + dep.GetName()
	for int64(len(alive)) < replicas {
		name := fmt.Sprintf("%s-%c", dep.GetName(), 'a'+d.next[key]%26)
		if n := d.next[key]; n >= 26 {
			name = fmt.Sprintf("%s-%c%d", dep.GetName(), 'a'+n%26, n/26)
		}
		d.next[key]++
		p, err := c.Clients.Core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels,
			UID: types.UID(fmt.Sprintf("uid-%s-%d", name, time.Now().UnixNano()))}, Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		d.made[ns+"/"+name] = time.Now()
		alive = append(alive, *p)
	}
	for int64(len(alive)) > replicas { // scaled down: the newest goes
		last := alive[len(alive)-1]
		if err := c.Clients.Core.Pods(ns).Delete(ctx, last.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		alive = alive[:len(alive)-1]
	}
	ready := int64(0)
	for i := range alive {
		p := &alive[i]
		if podReady(p) {
			ready++
			continue
		}
		if made, ok := d.made[ns+"/"+p.Name]; ok && time.Since(made) < c.ColdStart {
			continue
		}
		// The kubelet's part: a real API server takes a pod's status
		// from its status subresource only.
		var statuses []corev1.ContainerStatus
		for _, ct := range spec.Containers {
			statuses = append(statuses, corev1.ContainerStatus{Name: ct.Name, Image: ct.Image, ImageID: ct.Image + "@sha256:0123456789abcdef", Ready: true})
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: statuses,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		if _, err := c.Clients.Core.Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
		ready++
	}
	if have, _, _ := unstructured.NestedInt64(dep.Object, "status", "availableReplicas"); have == ready {
		if r, _, _ := unstructured.NestedInt64(dep.Object, "status", "replicas"); r == int64(len(alive)) {
			return nil
		}
	}
	for field, n := range map[string]int64{"replicas": int64(len(alive)), "readyReplicas": ready, "availableReplicas": ready} {
		if err := unstructured.SetNestedField(dep.Object, n, "status", field); err != nil {
			return err
		}
	}
	_, err = c.Clients.Dynamic.Resource(Deployments).Namespace(ns).UpdateStatus(ctx, dep, metav1.UpdateOptions{})
	return err
}

// copyServices shows the namespace's Services to the typed client, as a
// real API server does already; the fake one keeps the typed objects
// apart.
func (c *Cluster) copyServices(ctx context.Context, ns string) error {
	svcs, err := c.Clients.Dynamic.Resource(Services).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, u := range svcs.Items {
		var svc corev1.Service
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &svc); err != nil {
			return err
		}
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
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// SimManifests is a stack's manifests for the tests of whole runs on a
// cluster: a Deployment "sim" of replicas pods of perfgate's image and a
// Service "sim" on port 8000 in front of them, which Cluster.Serve brings
// up and a test's port-forward (or DNS) reaches.
func SimManifests(replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: sim}
spec:
  replicas: %d
  selector: {matchLabels: {app: sim}}
  template:
    metadata: {labels: {app: sim}}
    spec: {containers: [{name: sim, image: ghcr.io/perfgate/perfgate:v1}]}
---
apiVersion: v1
kind: Service
metadata: {name: sim}
spec:
  selector: {app: sim}
  ports: [{port: 8000}]
`, replicas)
}
