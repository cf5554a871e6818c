// Package route spreads a run's requests over the replicas of one server
// (target.base_urls), as the load balancer in front of them would:
// round-robin, leaving out a replica that refused a connection until its
// health check answers again. It is perfgate's own router for a stack of
// several replicas on one machine, which has no load balancer of its own,
// and the thing a replica-loss fault is measured through: the requests a
// killed replica was serving fail, so do those sent to it before the
// router notices, and the rest go to the replicas left.
package route

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/workload"
)

// Member is one replica's sender. *client.Client is the real one.
type Member interface {
	Do(ctx context.Context, req *workload.Request, requestID string) *client.Response
	ListModels(ctx context.Context) ([]string, error)
	CloseIdleConnections()
}

// Probe checks replica i (0-based) once: nil when it is healthy.
type Probe func(ctx context.Context, i int) error

// Pool is a router over replicas. Its zero value is not usable: use New.
type Pool struct {
	members  []Member
	probe    Probe
	interval time.Duration

	mu      sync.Mutex
	out     []bool // left out of the rotation until its probe passes
	next    int    // the rotation's next place
	changed chan struct{}

	ctx    context.Context // ends the probes, on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New routes over members, probing a replica that was left out every
// interval until probe passes.
func New(members []Member, probe Probe, interval time.Duration) (*Pool, error) {
	switch {
	case len(members) == 0:
		return nil, errors.New("route: no replicas")
	case probe == nil || interval <= 0:
		return nil, errors.New("route: a probe and its interval are required")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{members: members, probe: probe, interval: interval, out: make([]bool, len(members)),
		changed: make(chan struct{}), ctx: ctx, cancel: cancel}, nil
}

// Do sends req to the next replica in the rotation. A replica that refuses
// the connection, or answers 503 (not ready: a replica starting again), is
// left out until its probe passes; the request is not sent again
// elsewhere: its failure is the replica's loss, counted.
func (p *Pool) Do(ctx context.Context, req *workload.Request, requestID string) *client.Response {
	i := p.pick()
	resp := p.members[i].Do(ctx, req, requestID)
	if resp != nil && resp.Err != nil && unavailable(resp.Err) && ctx.Err() == nil {
		p.leaveOut(i)
	}
	return resp
}

// unavailable says a request's failure means its replica is not there.
func unavailable(e *client.Error) bool {
	return e.Kind == client.ErrConnect || e.Kind == client.ErrHTTP && e.Status == http.StatusServiceUnavailable
}

// pick is the next replica in the rotation that is not left out; when all
// are, the next of all (its request fails as the server's failure).
func (p *Pool) pick() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.members)
	for k := range n {
		i := (p.next + k) % n
		if !p.out[i] {
			p.next = i + 1
			return i
		}
	}
	i := p.next % n
	p.next = i + 1
	return i
}

// leaveOut takes replica i out of the rotation and probes it until it
// passes.
func (p *Pool) leaveOut(i int) {
	p.mu.Lock()
	if p.out[i] || p.ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.out[i] = true
	p.signal()
	defer p.mu.Unlock() // the probe is added under the lock, which Close takes to end them
	p.wg.Go(func() {
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C:
			}
			if p.probe(p.ctx, i) == nil {
				p.mu.Lock()
				p.out[i] = false
				p.signal()
				p.mu.Unlock()
				return
			}
		}
	})
}

// signal wakes those waiting for a change; p.mu is held.
func (p *Pool) signal() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// In reports whether replica i is in the rotation, and a channel closed at
// the next change of any replica's state.
func (p *Pool) In(i int) (in bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.out[i], p.changed
}

// WaitIn returns once replica i is in the rotation, or ctx's cause.
func (p *Pool) WaitIn(ctx context.Context, i int) error {
	for {
		in, changed := p.In(i)
		if in {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("replica %d back in the rotation: %w", i+1, context.Cause(ctx))
		}
	}
}

// ListModels asks the first replica in the rotation.
func (p *Pool) ListModels(ctx context.Context) ([]string, error) {
	p.mu.Lock()
	i := 0
	for j := range p.members {
		if !p.out[j] {
			i = j
			break
		}
	}
	p.mu.Unlock()
	return p.members[i].ListModels(ctx)
}

// CloseIdleConnections drops every replica's kept-alive connections.
func (p *Pool) CloseIdleConnections() {
	for _, m := range p.members {
		m.CloseIdleConnections()
	}
}

// Member is replica i's sender, for what must reach one replica (its
// readiness probe).
func (p *Pool) Member(i int) Member { return p.members[i] }

// adapterReloader is a member that can reload a LoRA adapter
// (*client.Client).
type adapterReloader interface {
	ReloadAdapter(ctx context.Context, name, path string) error
}

// ReloadAdapter unloads and loads again adapter name on every replica, in
// order: a cold-adapter scenario's first requests find it cold wherever
// they go.
func (p *Pool) ReloadAdapter(ctx context.Context, name, path string) error {
	for i, m := range p.members {
		r, ok := m.(adapterReloader)
		if !ok {
			return fmt.Errorf("replica %d cannot reload adapters", i+1)
		}
		if err := r.ReloadAdapter(ctx, name, path); err != nil {
			return fmt.Errorf("replica %d: %w", i+1, err)
		}
	}
	return nil
}

// Close stops the probes; the pool routes on, as it stands.
func (p *Pool) Close() {
	p.mu.Lock()
	p.cancel()
	p.mu.Unlock()
	p.wg.Wait()
}
