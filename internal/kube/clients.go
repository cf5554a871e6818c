package kube

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Clients are how perfgate asks the cluster: the core API's typed client
// for namespaces, pods, services and nodes (only it: the clientset of every
// API group would triple what perfgate links for nothing); dynamic, with a
// mapper from kinds to resources, for the manifests' objects of any kind.
type Clients struct {
	Core    corev1client.CoreV1Interface
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// REST is the connection's config, for a port-forward; nil where there
	// is none (a test's fake cluster).
	REST *rest.Config
}

// Connect builds the clients for the cluster kubectl would use: the
// kubeconfig file (empty: $KUBECONFIG, else ~/.kube/config), its context
// (empty: the current one); with no kubeconfig at all, in a pod, the pod's
// service account.
func Connect(kubeconfig, context string) (*Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: no cluster to reach: %w (perfgate finds it as kubectl does: stack.kubernetes.kubeconfig, $KUBECONFIG, ~/.kube/config, or a pod's service account)", err)
	}
	cfg.UserAgent = "perfgate"
	// client-go's default (5 a second) is kubectl's of years ago; a run
	// looks at its pods about twice a second, a replacement's wait more.
	cfg.QPS, cfg.Burst = 20, 40
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return &Clients{Core: core, Dynamic: dyn, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)), REST: cfg}, nil
}

// InCluster reports whether perfgate runs in a pod of a cluster: the
// Service's DNS name then reaches the server.
func InCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// SelfPod is this perfgate as a namespace's owner when it runs in a pod
// of the cluster: pod/<namespace>/<name>, its name the pod's hostname; ""
// outside a pod. A later run deletes the namespaces of a pod owner that no
// longer exists, or has ended.
func SelfPod() string {
	if !InCluster() {
		return ""
	}
	ns, err := os.ReadFile(serviceAccountNamespace)
	host, herr := os.Hostname()
	if err != nil || herr != nil || len(ns) == 0 || host == "" {
		return ""
	}
	return "pod/" + strings.TrimSpace(string(ns)) + "/" + host
}
