package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// What a fault can kill (Fault.Kill).
const (
	// FaultReplica kills one replica of the stack: one of a process
	// stack's processes, one per target.base_urls entry.
	FaultReplica = "replica"
)

// Fault is a disturbance perfgate makes in each repetition of a scenario,
// the same in every repetition and on both sides of a comparison, so that
// how the stack takes it can be gated: the errors it causes, the capacity
// left meanwhile and the time until TTFT p95 is back within slo.ttft
// (docs/faults.md).
type Fault struct {
	// Kill is what is killed: replica.
	Kill string `yaml:"kill" json:"kill"`
	// At is when, from the repetition's start.
	At time.Duration `yaml:"at" json:"at"`
	// Replica is which one, counted from 1 in the order of
	// target.base_urls; 0 (the default) is the last. Perfgate's own health
	// watch checks a replica the fault leaves alone.
	Replica int `yaml:"replica" json:"replica,omitempty"`
	// Restart starts the killed replica again at once, as a Deployment's
	// controller would, and perfgate's router takes it back once its
	// health check answers (default true). With false it stays down for the
	// rest of the repetition, which then measures the capacity the others
	// have; it is started again before the next repetition either way.
	Restart *bool `yaml:"restart" json:"restart,omitempty"`
}

// Restarts reports whether the killed replica is started again at once
// (Restart, default true).
func (f *Fault) Restarts() bool { return f.Restart == nil || *f.Restart }

// ReplicaIndex is the 0-based index in target.base_urls of the replica the
// fault kills, among n.
func (f *Fault) ReplicaIndex(n int) int {
	if f.Replica == 0 {
		return n - 1
	}
	return f.Replica - 1
}

// Disturbed reports whether the scenario disturbs the server on purpose
// and measures its recovery: a step load, or a fault.
func (s *Scenario) Disturbed() bool { return s.Load.Type == LoadStep || s.Fault != nil }

// Replicas are the roots requests go to: target.base_urls, or
// target.base_url alone.
func (t Target) Replicas() []string {
	if len(t.BaseURLs) > 0 {
		return t.BaseURLs
	}
	return []string{t.BaseURL}
}

// MaxReplicas bounds target.base_urls: perfgate starts a process per
// replica and keeps a connection pool to each.
const MaxReplicas = 64

// FaultRecoveryWindows is how many recovery windows a repetition must run
// past its fault: as for a step load (StepRecoveryWindows).
const FaultRecoveryWindows = StepRecoveryWindows

// replicas checks target.base_urls: each a server root, no two alike, and
// not beside a base_url of another value.
func (v *validator) replicas() {
	t := v.c.Target
	if len(t.BaseURLs) == 0 {
		return
	}
	if t.BaseURL != t.BaseURLs[0] {
		v.add("target.base_urls", "set target.base_url or target.base_urls, not both: base_urls lists every replica, base_url is one server (the first of them, when both are given)")
	}
	if !v.c.Stack.healthEnabled() {
		v.add("stack.health_path", "perfgate's router takes a replica it left out back when its health check answers, so replicas need one: remove health_path: none (the engine's, or /v1/models, serves)")
	}
	if len(t.BaseURLs) > MaxReplicas {
		v.add("target.base_urls", "at most %d replicas, got %d", MaxReplicas, len(t.BaseURLs))
	}
	seen := map[string]int{}
	for i, raw := range t.BaseURLs {
		p := fmt.Sprintf("target.base_urls[%d]", i)
		if msg := baseURLProblem(raw); msg != "" {
			v.add(p, "%s", msg)
			continue
		}
		key := ServerAddress(raw)
		if j, dup := seen[key]; dup {
			v.add(p, "%q is the address of target.base_urls[%d] (%s): each replica has an address of its own", raw, j, key)
		}
		seen[key] = i
	}
	if v.c.Stack.Kind == StackDocker {
		v.add("target.base_urls", "a docker stack is one container at one address: use target.base_url, or a process stack to start one replica per URL")
	}
}

// baseURLProblem says what is wrong with a server root, or "".
func baseURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Sprintf("must be an http or https URL like %s, got %q", DefaultBaseURL, raw)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Sprintf("must not have a query or fragment, got %q", raw)
	case hasV1(u.Path):
		return fmt.Sprintf("must be the server root without /v1 (perfgate adds /v1/...), got %q", raw)
	}
	return ""
}

// ServerAddress is the host and port a server root reaches, loopback
// names as 127.0.0.1 and the scheme's default port made explicit: two
// roots alike here are one server (two replicas of base_urls, two arms of
// perfgate ab). The root itself when it does not parse.
func ServerAddress(root string) string {
	u, err := url.Parse(root)
	if err != nil || u.Host == "" {
		return root
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.") {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, ReplicaPort(root))
}

// ReplicaPort is the port of a replica's root: its own, or its scheme's.
func ReplicaPort(root string) string {
	u, err := url.Parse(root)
	if err != nil {
		return ""
	}
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// fault checks scenario p's fault: a replica of a stack perfgate started,
// among two or more, killed at a time the repetition runs past by a few
// recovery windows, at a steady load, with the TTFT SLO its recovery is
// measured against.
func (v *validator) fault(p string, s *Scenario) {
	f := s.Fault
	fp := p + ".fault"
	if f.Kill != FaultReplica {
		v.add(fp+".kill", "must be %s (one replica of the stack, killed), got %q", FaultReplica, f.Kill)
		return
	}
	n := len(v.c.Target.BaseURLs)
	switch {
	case v.c.Stack.Kind == StackKubernetes:
		// Its replicas are the ready pods behind the Service, known
		// once it is up: their count is checked then.
		if f.Replica < 0 {
			v.add(fp+".replica", "must be 1 or more (the pod's place among the ready pods behind the Service, in name order), or 0 for the last, got %d", f.Replica)
		}
	case v.c.Stack.Kind != StackProcess:
		v.add(fp, "kill: replica needs replicas perfgate started: stack.kind process with target.base_urls (one process per URL), or stack.kind kubernetes, and stack.kind is %s", v.c.Stack.Kind)
		return
	case n < 2:
		v.add(fp, "kill: replica needs two or more replicas, one left to serve: list them in target.base_urls (got %d)", n)
		return
	case f.Replica < 0 || f.Replica > n:
		v.add(fp+".replica", "must be from 1 to %d (the replica's place in target.base_urls), or 0 for the last, got %d", n, f.Replica)
	}
	if f.At <= 0 {
		v.add(fp+".at", "required: when, from the repetition's start, the replica is killed (at: 30s)")
		return
	}
	switch {
	case s.Load.Type == LoadStep:
		v.add(fp, "a step load is a disturbance of its own: measure a spike and a lost replica in two scenarios")
	case s.Capacity != nil:
		v.add(fp, "a capacity search probes loads, and a fault disturbs one: measure them in two scenarios")
	case s.Load.SweepParam != "":
		v.add(fp, "a sweep expands into a scenario per load; give a fault scenario one load")
	case s.Load.Type == LoadTrace:
		v.add(fp, "a trace replays its arrivals once and may end before the fault; give a fault scenario a poisson, gamma or closed load and a duration")
	case s.Load.MaxInFlight > 0:
		v.add(p+".load.max_in_flight", "a fault scenario's load must reach the server, not queue in perfgate, for its recovery to be the server's; remove max_in_flight")
	}
	w := s.Load.RecoveryWindow
	if w < MinRecoveryWindow || w > MaxRecoveryWindow {
		v.add(p+".load.recovery_window", "must be from %s to %s, got %s", MinRecoveryWindow, MaxRecoveryWindow, w)
		return
	}
	want := f.At + FaultRecoveryWindows*w
	switch {
	case s.Requests > 0:
		v.add(p+".requests", "a fault scenario is timed: a request count could end a repetition before its fault; remove requests and set duration (at least %s)", want)
	case s.Duration == 0:
		v.add(p+".duration", "required with a fault: each repetition must run past it (%s) for long enough to see the recovery, at least %s (%d recovery windows of %s)", f.At, want, FaultRecoveryWindows, w)
	case s.Duration < want:
		v.add(p+".duration", "ends %s after the fault (%s), and the recovery is looked for in windows of %s: at least %s", s.Duration-f.At, f.At, w, want)
	}
	if s.SLO.TTFT == 0 {
		v.add(p+".slo.ttft", "required with a fault: its recovery is the time until TTFT p95 is back within slo.ttft")
	}
}

// hasV1 reports whether a root's path ends in /v1, which perfgate adds.
func hasV1(path string) bool { return strings.HasSuffix(strings.TrimRight(path, "/"), "/v1") }

// The variables a process stack's replica is given, in its environment and
// wherever its command or env values say ${NAME}: its port (of its entry in
// target.base_urls, or of target.base_url) and its number, from 1.
const (
	EnvReplicaPort  = "PERFGATE_PORT"
	EnvReplicaIndex = "PERFGATE_REPLICA"
)

// UsesPort reports whether the command or an env value refers to
// ${PERFGATE_PORT}: how replicas started from one command listen apart.
func (p *ProcessStack) UsesPort() bool {
	for _, a := range p.Command {
		if slices.Contains(EnvRefs(a), EnvReplicaPort) {
			return true
		}
	}
	for _, val := range p.Env {
		if slices.Contains(EnvRefs(val), EnvReplicaPort) {
			return true
		}
	}
	return false
}

// healthEnabled reports whether the stack has a health path to check
// (health_path none: it has none, and only its process is watched).
func (s Stack) healthEnabled() bool { return s.HealthPath != "none" }
