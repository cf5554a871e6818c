package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/route"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
)

// A target of several replicas (target.base_urls) is reached through
// perfgate's own router (internal/route): a client per replica, requests
// round-robin, a replica that refuses connections left out until its
// health check passes. A process stack starts one replica per root, each
// waited for in turn; a scenario's fault kills one and starts it again
// (faultInjector).

// healthAt is the health check of the replica at root, at interval.
func (s *session) healthAt(root string, interval time.Duration) stack.Health {
	h := s.health(interval)
	h.BaseURL = root
	return h
}

// replicaCount is how many replicas the stack has: the processes perfgate
// started, or a kubernetes stack's pods behind its Service (one address,
// the Service's, through its DNS name).
func (s *session) replicaCount() int {
	if reps, ok := s.inst.(stack.Replicas); ok {
		return reps.Count()
	}
	return len(s.cfg.Target.Replicas())
}

// watchedRoot is the replica whose health the crash watch checks while sc
// runs: the first that sc's fault leaves alone. Every replica's process is
// watched besides (a Replicas ends when one exits that was not killed).
func (s *session) watchedRoot(c config.Scenario) string {
	roots := s.cfg.Target.Replicas()
	if c.Fault == nil {
		return roots[0]
	}
	killed := c.Fault.ReplicaIndex(len(roots))
	for i, r := range roots {
		if i != killed {
			return r
		}
	}
	return roots[0]
}

// routed wraps first, the client of the first replica (its model resolved),
// in a router over a client of each replica when the target has several.
func routed(cfg *config.Config, headers config.ExpandedHeaders, first *client.Client) (Sender, error) {
	roots := cfg.Target.Replicas()
	if len(roots) < 2 {
		return first, nil
	}
	members := []route.Member{first}
	for _, root := range roots[1:] {
		c, err := targetClient(cfg, headers, root, cfg.Target.Model)
		if err != nil {
			return nil, err
		}
		members = append(members, c)
	}
	path := cfg.Stack.HealthPath
	if path == "" || path == "none" { // the router needs a check to take a replica back
		path = stack.ModelsPath
	}
	h := stack.Health{Path: path, Headers: headers.Values, Redact: headers.Redactor(), Interval: cfg.Stack.HealthInterval}
	probe := func(ctx context.Context, i int) error {
		hi := h
		hi.BaseURL = roots[i]
		return hi.Check(ctx, max(h.Interval, 5*time.Second))
	}
	return route.New(members, probe, cfg.Stack.HealthInterval)
}

// replicaProbe is the readiness completion of replica i: until the router
// is built, the first connects (resolving model: auto) and sends through
// it (the rotation starts at the first replica); from then on each goes to
// its replica alone, not through the router, which would leave out a
// replica not yet ready and answer for one with another.
func (s *session) replicaProbe(i int) func(context.Context) error {
	return func(ctx context.Context) error {
		pool, ok := s.client.(*route.Pool)
		if !ok { // the first connects, and so builds the router
			return s.probe(ctx)
		}
		resp := pool.Member(i).Do(ctx, readinessRequest(s.cfg.Target.API), fmt.Sprintf("perfgate-%s-ready-%d", s.runID, i+1))
		if resp.Err != nil {
			return resp.Err
		}
		return nil
	}
}

// closeRouter stops the router's probes, if the sender is one.
func (s *session) closeRouter() {
	if pool, ok := s.client.(*route.Pool); ok {
		pool.Close()
	}
}

// faultInjector makes a scenario's fault on the replicas perfgate
// started: it kills one, starts it again (at once, or before the next
// repetition when the fault says restart: false) and waits until its
// health check passes and the router has it back.
type faultInjector struct {
	s        *session
	ctx      context.Context // the scenario's: a restart ends with it
	replicas stack.Replicas
	killed   int
	repair   chan repaired // the restart begun at the kill, if any
}

// repaired is how a restart went: when the replica was healthy again.
type repaired struct {
	back time.Time
	err  error
}

// injector is the fault injector of sc, or nil when sc has no fault. A
// fault needs replicas perfgate started (validation says so first). ctx
// is the scenario's: a restart begun at a kill outlives its repetition,
// not the scenario.
func (s *session) injector(ctx context.Context, c config.Scenario) (run.Injector, error) {
	if c.Fault == nil {
		return nil, nil
	}
	reps, ok := s.inst.(stack.Replicas)
	if !ok {
		return nil, fmt.Errorf("scenario %s: fault kill: replica needs a stack of replicas perfgate started, and this one is not", c.Name)
	}
	if n := reps.Count(); n < 2 {
		return nil, fmt.Errorf("scenario %s: fault kill: replica needs two or more replicas, one left to serve, and the stack has %d (on Kubernetes: the ready pods behind the Service; set the serving object's replicas)", c.Name, n)
	} else if r := c.Fault.Replica; r > n {
		return nil, fmt.Errorf("scenario %s: fault.replica is %d, and the stack has %d replicas", c.Name, r, n)
	}
	return &faultInjector{s: s, ctx: ctx, replicas: reps, killed: c.Fault.ReplicaIndex(reps.Count())}, nil
}

func (f *faultInjector) Inject(ctx context.Context, fc config.Fault) error {
	f.repair = nil
	if err := f.replicas.Kill(ctx, f.killed); err != nil {
		return err
	}
	if fc.Restarts() {
		f.repair = make(chan repaired, 1)
		go func() {
			back, err := f.restart(f.ctx)
			f.repair <- repaired{back: back, err: err}
		}()
	}
	return nil
}

func (f *faultInjector) Repaired(ctx context.Context) (time.Time, bool, error) {
	if f.repair == nil { // left down, or the fault was never made
		if _, err := f.restart(ctx); err != nil {
			return time.Time{}, false, err
		}
		return time.Time{}, false, f.rejoined(ctx)
	}
	select {
	case r := <-f.repair:
		f.repair = nil
		if r.err != nil {
			return time.Time{}, true, r.err
		}
		return r.back, true, f.rejoined(ctx)
	case <-ctx.Done():
		return time.Time{}, true, context.Cause(ctx)
	}
}

// restart starts the killed replica again and waits, as a start does (up
// to stack.ready_timeout), until it answers its health check; it returns
// when it did. A replica that was not killed (the repetition ended before
// the fault) is left as it is.
func (f *faultInjector) restart(ctx context.Context) (time.Time, error) {
	s := f.s
	root := f.root()
	if err := f.replicas.Restart(ctx, f.killed); err != nil {
		if errors.Is(err, stack.ErrRunning) {
			return s.clock.Now(), nil
		}
		return time.Time{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Stack.ReadyTimeout)
	defer cancel()
	h := s.healthAt(root, readyPoll)
	for {
		if err := h.Check(ctx, max(readyPoll, 5*time.Second)); err == nil {
			return s.clock.Now(), nil
		} else if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("replica %d (%s) restarted but not healthy within stack.ready_timeout %s: %w", f.killed+1, root, s.cfg.Stack.ReadyTimeout, err)
		}
		if err := s.clock.SleepUntil(ctx, s.clock.Now().Add(readyPoll)); err != nil {
			return time.Time{}, fmt.Errorf("replica %d (%s) restarted but not healthy within stack.ready_timeout %s", f.killed+1, root, s.cfg.Stack.ReadyTimeout)
		}
	}
}

// root is the address of the killed replica: its own, or the one address
// of a kubernetes stack reached through its Service's DNS name, which
// answers for every pod behind it (its replacement was waited for by
// Restart).
func (f *faultInjector) root() string {
	roots := f.s.cfg.Target.Replicas()
	if f.killed < len(roots) {
		return roots[f.killed]
	}
	return roots[0]
}

// rejoined waits until the router has the restarted replica back, so that
// the next repetition starts with every replica serving.
func (f *faultInjector) rejoined(ctx context.Context) error {
	pool, ok := f.s.client.(*route.Pool)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.s.cfg.Stack.ReadyTimeout)
	defer cancel()
	return pool.WaitIn(ctx, f.killed)
}
