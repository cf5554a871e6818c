// Package kube runs a serving stack on Kubernetes for one perfgate run: it
// creates a namespace of the run's own, labelled as perfgate's and
// annotated with its owner; creates the manifests' objects in it; waits
// until the serving objects are ready (a Deployment's or StatefulSet's
// replicas all available, another kind's Ready condition, KServe's
// InferenceService for one), saying what it waits for; watches the
// serving pods for a crash, an OOM kill, an eviction or an image that
// cannot be pulled, which end the stack with the pod's last log lines;
// reaches the server through its Service, by the Service's cluster DNS
// name or a port-forward; and deletes the namespace when stopped. The next
// run deletes the namespaces of an owner that is gone (a perfgate killed
// with SIGKILL). Everything goes through client-go, as kubectl's own
// configuration finds the cluster; nothing shells out to kubectl.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package kube
