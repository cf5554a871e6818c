package simstack

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/stack"
)

// Starter starts a simulator at the target's address at every start, and
// remembers the starts. Its Start is safe for concurrent use.
type Starter struct {
	// Config is the simulator's config for a start at addr (host:port).
	Config func(addr string) sim.Config

	mu      sync.Mutex
	refuse  map[string]error
	starts  []string
	running map[string]*Instance
}

// New is a Starter whose simulators are configured by cfg.
func New(cfg func(addr string) sim.Config) *Starter {
	return &Starter{Config: cfg, refuse: map[string]error{}, running: map[string]*Instance{}}
}

// Refuse makes every later start at addr fail with err, as a stack that
// cannot start (a port in use, out of memory) does.
func (s *Starter) Refuse(addr string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse[addr] = err
}

// Start starts a simulator at o.Target's host and port. It is
// session.Options.StartStack.
func (s *Starter) Start(ctx context.Context, _ config.Stack, o stack.Options) (stack.Instance, error) {
	u, err := url.Parse(o.Target)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", o.Target, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refuse[u.Host]; err != nil {
		return nil, err
	}
	cfg := s.Config(u.Host)
	srv, err := sim.Start(ctx, u.Host, cfg)
	if err != nil {
		return nil, fmt.Errorf("start the simulator at %s: %w", u.Host, err)
	}
	inst := &Instance{srv: srv, done: make(chan struct{}),
		command: []string{"perfgate", "sim", "--addr", u.Host, fmt.Sprintf("--slowdown=%g", cfg.Slowdown)}}
	s.starts = append(s.starts, u.Host)
	s.running[u.Host] = inst
	// A simulated out-of-memory ends the simulator as it ends `perfgate
	// sim`'s process: exit status 1, the torch line its last.
	go func() {
		select {
		case <-srv.Crashed():
			inst.exit(&stack.ExitError{What: "process perfgate sim", Code: 1, Tail: []string{srv.CrashError().Error()}})
		case <-inst.done:
		}
	}()
	return inst, nil
}

// Starts are the addresses started at, in order.
func (s *Starter) Starts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.starts...)
}

// Running is the latest simulator started at addr, nil if none was.
func (s *Starter) Running(addr string) *Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[addr]
}

// Instance is one start of the simulator.
type Instance struct {
	srv     *sim.Server
	done    chan struct{}
	once    sync.Once
	err     error
	command []string
}

var _ stack.Instance = (*Instance)(nil)

// Done is closed when the simulator has stopped or crashed.
func (i *Instance) Done() <-chan struct{} { return i.done }

// Err is the crash's exit error, nil after a stop.
func (i *Instance) Err() error { return i.err }

// Tail is one line, as a process's log would have.
func (i *Instance) Tail(int) []string { return []string{"perfgate sim: serving in-process"} }

// Identity is a process stack running the simulator's command.
func (i *Instance) Identity() result.Stack {
	return result.Stack{Kind: config.StackProcess, Command: i.command}
}

// Stop stops the simulator; safe to call more than once.
func (i *Instance) Stop(context.Context) error {
	i.exit(nil)
	return nil
}

// Stopped reports whether the simulator has stopped or crashed.
func (i *Instance) Stopped() bool {
	select {
	case <-i.done:
		return true
	default:
		return false
	}
}

// Crash makes the simulator exit at once with status 3, as a process that
// crashed would.
func (i *Instance) Crash() {
	i.exit(&stack.ExitError{What: "process perfgate sim", Code: 3, Tail: []string{"simulated crash"}})
}

// exit ends the simulator, once, with err as its exit.
func (i *Instance) exit(err error) {
	i.once.Do(func() {
		i.err = err
		_ = i.srv.Close()
		close(i.done)
	})
}

// Server is the simulator, for its truth and drift.
func (i *Instance) Server() *sim.Server { return i.srv }
