package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// StackKubernetes is a stack perfgate applies to a Kubernetes cluster, in
// a namespace of its own per run (internal/kube).
const StackKubernetes = "kubernetes"

// How perfgate reaches a Kubernetes stack's Service (KubernetesStack.Access).
const (
	// AccessAuto is dns when perfgate runs in a pod of the cluster
	// (KUBERNETES_SERVICE_HOST is set), else port-forward.
	AccessAuto = "auto"
	// AccessDNS is the Service's cluster DNS name:
	// http://NAME.NAMESPACE.svc:PORT.
	AccessDNS = "dns"
	// AccessPortForward forwards a local port to a ready pod behind the
	// Service, as kubectl port-forward does.
	AccessPortForward = "port-forward"
)

// KubernetesStack is a stack of Kubernetes objects: perfgate creates a
// namespace of its own for the run (labelled with its owner, as Docker
// containers are), creates the manifests' objects in it, waits until the
// serving objects are ready, reaches the server through the Service, and
// deletes the namespace at the end (docs/kubernetes.md).
type KubernetesStack struct {
	// Manifests are YAML files, or directories of them (*.yaml and
	// *.yml, in name order), relative to the config file, as kubectl
	// apply -f takes them: a plain Deployment and Service, a KServe
	// InferenceService, or a Helm chart rendered with helm template. Each
	// object must be namespaced: it is created in the run's namespace.
	Manifests []string `yaml:"manifests" json:"manifests"`
	// Serving names the objects whose readiness is the stack's, each
	// KIND/NAME: a Deployment or StatefulSet is ready when all its
	// replicas are available, any other kind (InferenceService) when its
	// Ready condition is True. Empty: every Deployment and StatefulSet
	// the manifests hold.
	Serving []string `yaml:"serving" json:"serving,omitempty"`
	// Service is the Service requests go through, NAME:PORT (the
	// Service's port, by number).
	Service string `yaml:"service" json:"service"`
	// Kubeconfig and Context choose the cluster as kubectl does: empty is
	// $KUBECONFIG, else ~/.kube/config, and its current context; in a pod
	// with neither, the pod's service account.
	Kubeconfig string `yaml:"kubeconfig" json:"kubeconfig,omitempty"`
	Context    string `yaml:"context" json:"context,omitempty"`
	// Access is auto (the default), dns or port-forward.
	Access string `yaml:"access" json:"access"`
}

// ServiceRef is Service split: its name and port, ok false when it is not
// NAME:PORT with a port from 1 to 65535.
func (k *KubernetesStack) ServiceRef() (name string, port int, ok bool) {
	name, p, found := strings.Cut(k.Service, ":")
	port, err := strconv.Atoi(p)
	if !found || err != nil || name == "" || port < 1 || port > 65535 {
		return "", 0, false
	}
	return name, port, true
}

// ObjectRef is a KIND/NAME of Serving split, ok false when it is not one.
func ObjectRef(ref string) (kind, name string, ok bool) {
	kind, name, ok = strings.Cut(ref, "/")
	return kind, name, ok && kind != "" && name != "" && !strings.Contains(name, "/")
}

// Paths are the manifests resolved against dir (the config's directory:
// Config.StackDir).
func (k *KubernetesStack) Paths(dir string) []string {
	out := make([]string, len(k.Manifests))
	for i, m := range k.Manifests {
		out[i] = resolve(dir, m)
	}
	return out
}

var accesses = []string{AccessAuto, AccessDNS, AccessPortForward}

// kubernetes checks stack.kubernetes: manifests that exist, serving
// objects and a Service named as perfgate can find them, and no target
// address, which perfgate makes itself.
func (v *validator) kubernetes(k *KubernetesStack) {
	const p = "stack.kubernetes"
	if len(k.Manifests) == 0 {
		v.add(p+".manifests", "required: the YAML files (or directories of them) of the stack's objects, as kubectl apply -f takes them")
	}
	for i, m := range k.Manifests {
		v.existsAny(fmt.Sprintf("%s.manifests[%d]", p, i), m)
	}
	for i, s := range k.Serving {
		if _, _, ok := ObjectRef(s); !ok {
			v.add(fmt.Sprintf("%s.serving[%d]", p, i), "must be KIND/NAME (Deployment/vllm, InferenceService/llama), got %q", s)
		}
	}
	if _, _, ok := k.ServiceRef(); !ok {
		v.add(p+".service", "required: the Service requests go through, NAME:PORT (vllm:8000), got %q", k.Service)
	}
	v.oneOf(p+".access", k.Access, accesses)
	if v.set("target.base_url", false) {
		v.add("target.base_url", "a kubernetes stack is reached through stack.kubernetes.service, at an address perfgate makes for each run (a port-forward, or the Service's DNS name in its namespace): remove target.base_url")
	}
	if len(v.c.Target.BaseURLs) > 0 {
		v.add("target.base_urls", "a kubernetes stack's replicas are its pods, behind stack.kubernetes.service: remove target.base_urls")
	}
}

// existsAny checks that a file or a directory named in the config exists,
// resolved against the config's directory.
func (v *validator) existsAny(path, name string) {
	abs := resolve(v.c.Dir, name)
	if _, err := os.Stat(abs); err != nil {
		if os.IsNotExist(err) {
			v.add(path, "%s not found (resolved to %s)", name, abs)
		} else {
			v.add(path, "%s: %v", name, err)
		}
	}
}
