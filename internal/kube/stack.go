package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The labels and annotation of a namespace perfgate made: managed-by
// selects them all, the run names the run, the owner (an annotation, free
// of a label's limits) names the perfgate that made it, for a later run to
// tell whether it is gone.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "perfgate"
	LabelRun       = "perfgate.dev/run"
	AnnotOwner     = "perfgate.dev/owner"
)

// Options are what a start needs.
type Options struct {
	// RunID names the run: the namespace is perfgate-<RunID>.
	RunID string
	// Objects are the manifests' objects (ReadManifests), each created in
	// the run's namespace.
	Objects []*unstructured.Unstructured
	// Serving are the objects whose readiness is the stack's, KIND/NAME;
	// empty: every Deployment and StatefulSet of Objects.
	Serving []string
	// Service and Port are where requests go: the Service's name and port.
	Service string
	Port    int
	// PortForward reaches the Service through a port-forward to one of its
	// ready pods; else through its cluster DNS name.
	PortForward bool
	// Forward makes the port-forward; nil is client-go's, over the
	// connection of Clients.REST.
	Forward Forwarder
	// Timeout bounds the wait until the serving objects are ready; Poll is
	// the time between looks at them and at the pods (0: a second).
	Timeout, Poll time.Duration
	// Owner names this perfgate (a namespace's owner annotation); OwnerGone
	// says whether the perfgate an owner annotation names is gone (known
	// false when it cannot tell: the namespace is then left alone).
	Owner     string
	OwnerGone func(ctx context.Context, owner string) (gone bool, why string, known bool)
	// Progress receives a line every ProgressEvery while the stack is not
	// ready; Notice the lines the user should see (a gone owner's
	// namespace deleted). Either may be nil.
	Progress, Notice func(msg string)
}

// ProgressEvery is how often a start says what it waits for.
const ProgressEvery = 10 * time.Second

// Forwarder forwards a local loopback port to port of pod in namespace:
// local, or a free one when local is 0. It returns the local address
// (host:port) and a function that ends the forward.
type Forwarder func(ctx context.Context, c *Clients, namespace, pod string, port, local int) (addr string, stop func(), err error)

// Stack is a stack started on a cluster.
type Stack struct {
	c         *Clients
	o         Options
	namespace string
	baseURLs  []string // the Service's DNS name, or one port-forward a ready pod
	id        Identity
	selector  string             // the Service's pods, as a label selector
	selects   labels.Selector    // the same, to match pods already listed; nil without a selector
	target    intstr.IntOrString // the Service's target port

	mu       sync.Mutex
	replicas []replica       // the ready pods behind the Service at the start, in name order, and their replacements
	killed   map[string]bool // the pods a fault deleted (podKey): their end is not a failure
	before   map[string]bool // the pods behind the Service when one was deleted (podKey): none is its replacement
	stopped  bool            // Stop ended the forwards
	series   []ReadyCount    // the ready pods behind the Service, each time the watch saw a change

	done    chan struct{}
	endOnce sync.Once
	err     error // written before done is closed
	tail    []string

	stopWatch context.CancelFunc
	watched   chan struct{}
	stopOnce  sync.Once
	stopErr   error
}

// PodError says a pod of the stack failed: it crashed or was restarted,
// was OOM-killed, evicted, or its image cannot be pulled.
type PodError struct {
	Namespace, Pod, Container string
	// Reason is Kubernetes' (OOMKilled, Error, CrashLoopBackOff, Evicted,
	// ImagePullBackOff, ErrImagePull...); ExitCode the container's, -1
	// when it has none.
	Reason   string
	ExitCode int
	Message  string
	// Tail is the last lines of the container's log, where the cluster
	// had them.
	Tail []string
}

func (e *PodError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s/%s", e.Namespace, e.Pod)
	if e.Container != "" {
		fmt.Fprintf(&b, " (container %s)", e.Container)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, ", exit code %d", e.ExitCode)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// OOMKilled reports whether the container was killed for its memory.
func (e *PodError) OOMKilled() bool { return e.Reason == "OOMKilled" }

// notDNSLabel matches what a DNS label may not hold.
var notDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName is the run's namespace: perfgate-<run id>, as a DNS label.
func namespaceName(runID string) string {
	id := strings.Trim(notDNSLabel.ReplaceAllString(strings.ToLower(runID), "-"), "-")
	return strings.TrimRight(("perfgate-" + id)[:min(63, len("perfgate-"+id))], "-")
}

// Start creates the run's namespace and the manifests' objects in it,
// waits until the serving objects are ready, and reaches the Service. It
// first deletes the namespaces of a gone owner. Whatever fails after the
// namespace exists deletes it again.
func Start(ctx context.Context, c *Clients, o Options) (_ *Stack, err error) {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	s := &Stack{c: c, o: o, namespace: namespaceName(o.RunID), done: make(chan struct{})}
	serving, err := s.serving()
	if err != nil {
		return nil, err
	}
	s.deleteOrphans(ctx)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.namespace,
		Labels:      map[string]string{LabelManagedBy: ManagedBy, LabelRun: o.RunID},
		Annotations: map[string]string{AnnotOwner: o.Owner}}}
	if _, err := c.Core.Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: ManagedBy}); err != nil {
		return nil, fmt.Errorf("kubernetes: create namespace %s: %w", s.namespace, err)
	}
	defer func() {
		if err != nil {
			_ = s.Stop(context.WithoutCancel(ctx))
		}
	}()
	for _, obj := range o.Objects {
		if err := s.create(ctx, obj); err != nil {
			return nil, err
		}
	}
	if err := s.waitReady(ctx, serving); err != nil {
		return nil, err
	}
	if err := s.reach(ctx); err != nil {
		return nil, err
	}
	s.id = s.identify(ctx)
	s.killed, s.before = map[string]bool{}, map[string]bool{}
	if s.selector != "" {
		if pods, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector}); err == nil {
			s.count(pods.Items, time.Now())
		}
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopWatch, s.watched = cancel, make(chan struct{})
	go s.watch(wctx)
	return s, nil
}

// servingRef is one serving object: its kind and name, and the object of
// the manifests it is.
type servingRef struct {
	kind, name string
	gvk        schema.GroupVersionKind
}

func (r servingRef) String() string { return r.kind + "/" + r.name }

// serving resolves Options.Serving against the manifests' objects.
func (s *Stack) serving() ([]servingRef, error) { return resolveServing(s.o.Objects, s.o.Serving) }

// Check reads the manifests at paths and resolves the serving objects
// against them, as a start would, without a cluster: what perfgate
// validate can say before a run. It returns how many objects there are.
func Check(paths, serving []string) (int, error) {
	objs, err := ReadManifests(paths)
	if err != nil {
		return 0, err
	}
	if _, err := resolveServing(objs, serving); err != nil {
		return 0, err
	}
	return len(objs), nil
}

// resolveServing resolves serving (KIND/NAME; empty: every Deployment and
// StatefulSet) against the manifests' objects.
func resolveServing(objects []*unstructured.Unstructured, serving []string) ([]servingRef, error) {
	find := func(kind, name string) (schema.GroupVersionKind, bool) {
		for _, obj := range objects {
			if strings.EqualFold(obj.GetKind(), kind) && obj.GetName() == name {
				return obj.GroupVersionKind(), true
			}
		}
		return schema.GroupVersionKind{}, false
	}
	var out []servingRef
	if len(serving) == 0 {
		for _, obj := range objects {
			if k := obj.GetKind(); k == "Deployment" || k == "StatefulSet" {
				out = append(out, servingRef{kind: k, name: obj.GetName(), gvk: obj.GroupVersionKind()})
			}
		}
		if len(out) == 0 {
			return nil, errors.New("kubernetes: the manifests hold no Deployment or StatefulSet: name the serving objects in stack.kubernetes.serving (InferenceService/NAME)")
		}
		return out, nil
	}
	for _, ref := range serving {
		kind, name, _ := strings.Cut(ref, "/")
		gvk, ok := find(kind, name)
		if !ok {
			return nil, fmt.Errorf("kubernetes: stack.kubernetes.serving names %s, which is not among the manifests' objects", ref)
		}
		out = append(out, servingRef{kind: gvk.Kind, name: name, gvk: gvk})
	}
	return out, nil
}

// create creates obj in the run's namespace; a cluster-scoped object is
// refused: it would outlive the run's namespace.
func (s *Stack) create(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	m, err := s.c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("kubernetes: %s %s: the cluster does not serve this kind: %w", gvk.Kind, obj.GetName(), err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return fmt.Errorf("kubernetes: %s %s is cluster-scoped: perfgate creates a stack's objects in a namespace of the run's own and deletes it after, and a cluster-scoped object would outlive it; create it once, outside the manifests", gvk.Kind, obj.GetName())
	}
	if ns := obj.GetNamespace(); ns != "" && ns != s.namespace {
		return fmt.Errorf("kubernetes: %s %s names namespace %s: perfgate creates every object in the run's own namespace; remove metadata.namespace", gvk.Kind, obj.GetName(), ns)
	}
	obj = obj.DeepCopy()
	obj.SetNamespace(s.namespace)
	if _, err := s.c.Dynamic.Resource(m.Resource).Namespace(s.namespace).Create(ctx, obj, metav1.CreateOptions{FieldManager: ManagedBy}); err != nil {
		return fmt.Errorf("kubernetes: create %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return nil
}

// waitReady polls until every serving object is ready, a pod fails, or
// the timeout passes, saying every ProgressEvery what it waits for.
func (s *Stack) waitReady(ctx context.Context, serving []servingRef) error {
	start := time.Now()
	lastSaid := start
	for {
		if err := s.podFailure(ctx); err != nil {
			return err
		}
		var waiting []string
		for _, ref := range serving {
			ok, why, err := s.ready(ctx, ref)
			if err != nil {
				return err
			}
			if !ok {
				waiting = append(waiting, ref.String()+": "+why)
			}
		}
		if len(waiting) == 0 {
			return nil
		}
		waited := time.Since(start)
		if waited >= s.o.Timeout {
			return fmt.Errorf("kubernetes: not ready after %s (stack.ready_timeout): %s", s.o.Timeout, strings.Join(waiting, "; "))
		}
		if s.o.Progress != nil && time.Since(lastSaid) >= ProgressEvery {
			lastSaid = time.Now()
			s.o.Progress(fmt.Sprintf("waited %s, %s left: %s", waited.Round(time.Second), (s.o.Timeout - waited).Round(time.Second), strings.Join(waiting, "; ")))
		}
		t := time.NewTimer(s.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("kubernetes: waiting for the stack: %w", context.Cause(ctx))
		case <-t.C:
		}
	}
}

// ready says whether a serving object is ready, and if not why.
func (s *Stack) ready(ctx context.Context, ref servingRef) (bool, string, error) {
	m, err := s.c.Mapper.RESTMapping(ref.gvk.GroupKind(), ref.gvk.Version)
	if err != nil {
		return false, "", fmt.Errorf("kubernetes: %s: %w", ref, err)
	}
	obj, err := s.c.Dynamic.Resource(m.Resource).Namespace(s.namespace).Get(ctx, ref.name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("kubernetes: get %s: %w", ref, err)
	}
	switch ref.kind {
	case "Deployment", "StatefulSet":
		want, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		field := "availableReplicas"
		if ref.kind == "StatefulSet" {
			field = "readyReplicas"
		}
		have, _, _ := unstructured.NestedInt64(obj.Object, "status", field)
		if have >= want {
			return true, "", nil
		}
		return false, fmt.Sprintf("%d of %d replicas ready", have, want), nil
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			if m["status"] == "True" {
				return true, "", nil
			}
			msg, _ := m["message"].(string)
			return false, fmt.Sprintf("Ready is %v %s", m["status"], msg), nil
		}
	}
	return false, "no Ready condition yet", nil
}

// waitingFailures are the reasons a container waits that will not pass by
// waiting.
var waitingFailures = []string{"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError"}

// podFailure is the first failure among the namespace's pods, with its
// container's last log lines, or nil.
func (s *Stack) podFailure(ctx context.Context) error {
	pods, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("kubernetes: list pods: %w", err)
	}
	return s.failureIn(ctx, pods.Items)
}

// failureIn is the first failure among pods (not a fault's own deletion),
// with its container's last log lines, or nil.
func (s *Stack) failureIn(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		if s.wasKilled(&pods[i]) {
			continue // a fault's, ending as it was made to
		}
		if pe := failureOf(&pods[i]); pe != nil {
			pe.Namespace = s.namespace
			pe.Tail = s.logTail(ctx, pe.Pod, pe.Container)
			return pe
		}
	}
	return nil
}

// failureOf is how pod failed, or nil: evicted or failed as a whole, a
// container terminated with an error or OOM-killed (now or before a
// restart), or one waiting for what waiting will not bring.
func failureOf(pod *corev1.Pod) *PodError {
	if pod.Status.Phase == corev1.PodFailed {
		return &PodError{Pod: pod.Name, Reason: cmpOr(pod.Status.Reason, "Failed"), ExitCode: -1, Message: pod.Status.Message}
	}
	for _, cs := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t != nil && (t.ExitCode != 0 || t.Reason == "OOMKilled") {
				return &PodError{Pod: pod.Name, Container: cs.Name, Reason: cmpOr(t.Reason, "Error"), ExitCode: int(t.ExitCode), Message: t.Message}
			}
		}
		if w := cs.State.Waiting; w != nil && slices.Contains(waitingFailures, w.Reason) {
			return &PodError{Pod: pod.Name, Container: cs.Name, Reason: w.Reason, ExitCode: -1, Message: w.Message}
		}
		if cs.RestartCount > 0 {
			return &PodError{Pod: pod.Name, Container: cs.Name, Reason: "Restarted", ExitCode: -1, Message: fmt.Sprintf("restarted %d times", cs.RestartCount)}
		}
	}
	return nil
}

func cmpOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// TailLines is how many lines of a failed container's log are kept.
const TailLines = 20

// logTail is the last lines of a container's log (its previous life's,
// where it restarted, else its own); nil when the cluster has none.
func (s *Stack) logTail(ctx context.Context, pod, container string) []string {
	for _, previous := range []bool{true, false} {
		n := int64(TailLines)
		req := s.c.Core.Pods(s.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &n, Previous: previous})
		rc, err := req.Stream(ctx)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(rc, 64<<10))
		rc.Close()
		if err != nil || len(b) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		return lines[max(0, len(lines)-TailLines):]
	}
	return nil
}

// reach finds the address of the Service: its DNS name, where the Service
// spreads the requests over its pods; or a port-forward to each ready pod
// behind it, which perfgate's router then spreads them over (a single
// forward would send every request to one pod). Either way the ready pods
// behind it are the stack's replicas, which a fault deletes one of.
func (s *Stack) reach(ctx context.Context) error {
	svc, err := s.c.Core.Services(s.namespace).Get(ctx, s.o.Service, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("kubernetes: stack.kubernetes.service %s: %w", s.o.Service, err)
	}
	var target *intstr.IntOrString
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == s.o.Port {
			target = &p.TargetPort
		}
	}
	if target == nil {
		return fmt.Errorf("kubernetes: Service %s has no port %d", s.o.Service, s.o.Port)
	}
	s.target = *target
	if len(svc.Spec.Selector) > 0 {
		s.selector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector})
		s.selects = labels.SelectorFromSet(svc.Spec.Selector)
	}
	if !s.o.PortForward {
		s.baseURLs = []string{fmt.Sprintf("http://%s.%s.svc:%d", s.o.Service, s.namespace, s.o.Port)}
		if s.selector == "" {
			return nil // its endpoints are its own: perfgate cannot tell its pods, and a fault cannot be made
		}
	}
	pods, err := s.readyPodsOf(ctx, svc, *target)
	if err != nil {
		return err
	}
	if !s.o.PortForward {
		for _, p := range pods {
			s.replicas = append(s.replicas, replica{pod: p.name, uid: p.uid, port: p.port})
		}
		return nil
	}
	for _, p := range pods {
		r := replica{pod: p.name, uid: p.uid, port: p.port}
		if err := s.forward(ctx, &r, 0); err != nil {
			return err
		}
		s.replicas = append(s.replicas, r)
		s.baseURLs = append(s.baseURLs, "http://"+r.addr)
	}
	return nil
}

// forward forwards local (0: a free port) to r's pod, as r's address.
func (s *Stack) forward(ctx context.Context, r *replica, local int) error {
	fwd := s.o.Forward
	if fwd == nil {
		fwd = portForward
	}
	addr, stop, err := fwd(ctx, s.c, s.namespace, r.pod, r.port, local)
	if err != nil {
		return fmt.Errorf("kubernetes: port-forward to pod %s port %d: %w", r.pod, r.port, err)
	}
	r.addr, r.stop = addr, stop
	return nil
}

// podPort is a pod and the container port a Service's target port names
// on it.
type podPort struct {
	name string
	uid  types.UID
	port int
}

// readyPodsOf are the ready pods the Service selects (at most
// MaxForwards), in name order, each with the container port its target
// port names.
func (s *Stack) readyPodsOf(ctx context.Context, svc *corev1.Service, target intstr.IntOrString) ([]podPort, error) {
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("kubernetes: Service %s selects no pods (no spec.selector): perfgate cannot forward to it", svc.Name)
	}
	pods, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{LabelSelector: s.selector})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: pods of Service %s: %w", svc.Name, err)
	}
	items := pods.Items
	slices.SortFunc(items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var out []podPort
	for _, p := range items {
		if !podReady(&p) || p.DeletionTimestamp != nil || len(out) == MaxForwards {
			continue
		}
		port, err := targetPortOf(&p, target)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: %w (Service %s's targetPort)", err, svc.Name)
		}
		out = append(out, podPort{p.Name, p.UID, port})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("kubernetes: no ready pod behind Service %s", svc.Name)
	}
	return out, nil
}

// MaxForwards bounds the pods perfgate forwards to, as it bounds
// target.base_urls.
const MaxForwards = 64

// targetPortOf is the container port of pod that target names.
func targetPortOf(pod *corev1.Pod, target intstr.IntOrString) (int, error) {
	if target.Type == intstr.Int {
		return target.IntValue(), nil
	}
	for _, c := range pod.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == target.StrVal {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("pod %s has no container port named %s", pod.Name, target.StrVal)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// watch ends the stack at the first pod failure, and counts the ready
// pods behind the Service as it goes.
func (s *Stack) watch(ctx context.Context) {
	defer close(s.watched)
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// One look at the namespace's pods serves both: a failure, and
		// the ready ones behind the Service.
		pods, err := s.c.Core.Pods(s.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		var pe *PodError
		if errors.As(s.failureIn(ctx, pods.Items), &pe) {
			s.end(pe)
			return
		}
		if s.selects != nil {
			behind := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !s.selects.Matches(labels.Set(p.Labels)) })
			s.count(behind, time.Now())
		}
	}
}

// end records how the stack ended, once.
func (s *Stack) end(err error) {
	s.endOnce.Do(func() {
		s.err = err
		var pe *PodError
		if errors.As(err, &pe) {
			s.tail = pe.Tail
		}
		close(s.done)
	})
}

// BaseURLs are the server's roots: the Service's DNS name, or the local
// end of the port-forward to each ready pod behind it.
func (s *Stack) BaseURLs() []string { return slices.Clone(s.baseURLs) }

// Namespace is the run's namespace.
func (s *Stack) Namespace() string { return s.namespace }

// Done is closed when a pod of the stack failed, or the stack was stopped.
func (s *Stack) Done() <-chan struct{} { return s.done }

// Err is how the stack ended (a *PodError), once Done is closed.
func (s *Stack) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Tail is the failed container's last log lines.
func (s *Stack) Tail(n int) []string {
	select {
	case <-s.done:
		return s.tail[max(0, len(s.tail)-n):]
	default:
		return nil
	}
}

// Stop ends the watch and the port-forward and deletes the namespace,
// which deletes every object in it.
func (s *Stack) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		if s.stopWatch != nil {
			s.stopWatch()
			<-s.watched
		}
		s.mu.Lock()
		s.stopped = true
		for _, r := range s.replicas {
			if r.stop != nil {
				r.stop()
			}
		}
		s.mu.Unlock()
		policy := metav1.DeletePropagationBackground
		err := s.c.Core.Namespaces().Delete(ctx, s.namespace, metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			s.stopErr = fmt.Errorf("kubernetes: delete namespace %s: %w", s.namespace, err)
		}
		s.end(errors.New("stopped"))
	})
	return s.stopErr
}

// deleteOrphans deletes the namespaces perfgate made whose owner is gone,
// saying so; those of a live owner, of one it cannot tell, or with no
// owner are left alone. A failure is a notice, not an error.
func (s *Stack) deleteOrphans(ctx context.Context) {
	list, err := s.c.Core.Namespaces().List(ctx, metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy})
	if err != nil {
		s.notice("warning: kubernetes: cannot list the namespaces of earlier perfgate runs: %v", err)
		return
	}
	for _, ns := range list.Items {
		owner := ns.Annotations[AnnotOwner]
		if owner == "" || owner == s.o.Owner || ns.Status.Phase == corev1.NamespaceTerminating {
			continue
		}
		gone, why, known := s.ownerGone(ctx, owner)
		if !known || !gone {
			continue
		}
		policy := metav1.DeletePropagationBackground
		if err := s.c.Core.Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
			s.notice("warning: kubernetes: cannot delete namespace %s of a perfgate that is gone: %v", ns.Name, err)
			continue
		}
		s.notice("deleted namespace %s, left by perfgate run %s: %s", ns.Name, ns.Labels[LabelRun], why)
	}
}

// ownerGone tells a pod owner (pod/<namespace>/<name>) by asking the
// cluster: gone when the pod no longer exists or has ended; any other
// owner by Options.OwnerGone.
func (s *Stack) ownerGone(ctx context.Context, owner string) (bool, string, bool) {
	if rest, ok := strings.CutPrefix(owner, "pod/"); ok {
		ns, name, ok := strings.Cut(rest, "/")
		if !ok {
			return false, "", false
		}
		p, err := s.c.Core.Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, fmt.Sprintf("its pod %s/%s no longer exists", ns, name), true
		case err != nil:
			return false, "", false
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			return true, fmt.Sprintf("its pod %s/%s has ended", ns, name), true
		}
		return false, "", true
	}
	if s.o.OwnerGone == nil {
		return false, "", false
	}
	return s.o.OwnerGone(ctx, owner)
}

func (s *Stack) notice(format string, args ...any) {
	if s.o.Notice != nil {
		s.o.Notice(fmt.Sprintf(format, args...))
	}
}
