package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Instance is a started stack.
type Instance interface {
	// Done is closed when the stack has exited, by itself or by Stop. An
	// external stack's Done is never closed.
	Done() <-chan struct{}
	// Err says how the stack ended (an *ExitError), once Done is closed.
	Err() error
	// Tail returns up to the last n lines of the stack's output; nil for an
	// external stack.
	Tail(n int) []string
	// Identity describes what was started, for the result's identity.
	Identity() result.Stack
	// Stop stops the stack and frees all it holds (processes, containers,
	// log files). It is safe to call more than once, and after Done.
	Stop(ctx context.Context) error
}

// Options are what a start needs beyond the config section.
type Options struct {
	// RunID is unique to this perfgate run: it names and labels containers.
	RunID string
	// LogPath is the file the stack's output is written to.
	LogPath string
	// Dir is a process stack's working directory.
	Dir string
	// Grace is the time between the polite stop (SIGTERM, container stop)
	// and the forced one (SIGKILL).
	Grace time.Duration
	// Target is the base URL the stack will answer at (target.base_url).
	// A managed stack is refused (*TargetInUseError) when something
	// already answers there: perfgate would measure it instead. Empty: not
	// checked.
	Target string
	// Replicas are the roots of a process stack's replicas
	// (target.base_urls): with two or more, the command is started once
	// per root (a Replicas). Empty: one, at Target.
	Replicas []string
	// Notice receives lines the user should see about the start: the
	// containers of an earlier perfgate that is gone, removed. nil drops
	// them.
	Notice func(msg string)

	// Kubernetes are a kubernetes stack's clients and port-forward (zero:
	// the cluster kubectl would use, and client-go's port-forward).
	Kubernetes KubernetesOptions

	// replica holds the variables a process stack's replica is given
	// (PERFGATE_PORT, PERFGATE_REPLICA), set by Start.
	replica map[string]string
	// appendLog appends to LogPath rather than starting it anew: a
	// replica restarted after a fault.
	appendLog bool
}

// notice passes a line to o.Notice, if set.
func (o Options) notice(format string, args ...any) {
	if o.Notice != nil {
		o.Notice(fmt.Sprintf(format, args...))
	}
}

// ExitError is how a stack ended on its own: a process's exit status or
// signal, a container's exit code, with the last lines of its output.
type ExitError struct {
	// What names the stack: "process vllm" or "container perfgate-1a2b3c4d".
	What string
	// Code is the exit status, or -1 when it was killed by a signal.
	Code int
	// Signal is the signal that killed it, if one did.
	Signal string
	// OOMKilled is set when Docker reports the container was OOM-killed.
	OOMKilled bool
	// Tail is the last lines of the stack's output.
	Tail []string
}

// TailLines is how many lines of a stack's output errors carry.
const TailLines = 20

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s exited", e.What)
	switch {
	case e.Signal != "":
		fmt.Fprintf(&b, " (killed by %s)", e.Signal)
	default:
		fmt.Fprintf(&b, " with status %d", e.Code)
	}
	if e.OOMKilled {
		b.WriteString(" (out of memory)")
	}
	b.WriteString(FormatTail(e.Tail))
	return b.String()
}

// FormatTail renders log lines for an error message: an indented block headed
// "last lines of the stack's log", or "" when there are none.
func FormatTail(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nlast %d lines of the stack's log:", len(lines))
	for _, l := range lines {
		b.WriteString("\n  | " + l)
	}
	return b.String()
}

// Start starts the stack that cfg describes. For an external stack it starts
// nothing. The returned Instance must be stopped by the caller, on every path.
func Start(ctx context.Context, cfg config.Stack, o Options) (Instance, error) {
	switch cfg.Kind {
	case config.StackExternal:
		return external{}, nil
	case config.StackProcess:
		if cfg.Process == nil {
			return nil, fmt.Errorf("stack: kind process needs stack.process")
		}
		if len(o.Replicas) > 1 {
			return startReplicas(ctx, cfg.Process, o, o.Replicas)
		}
		if o.Target != "" {
			o.replica = replicaVars(o.Target, 0)
		}
		return startProcess(ctx, cfg.Process, o)
	case config.StackDocker:
		if cfg.Docker == nil {
			return nil, fmt.Errorf("stack: kind docker needs stack.docker")
		}
		return startDocker(ctx, cfg.Docker, o)
	case config.StackKubernetes:
		if cfg.Kubernetes == nil {
			return nil, fmt.Errorf("stack: kind kubernetes needs stack.kubernetes")
		}
		return startKubernetes(ctx, cfg, o)
	default:
		return nil, fmt.Errorf("stack: unknown kind %q", cfg.Kind)
	}
}

// external is a stack perfgate does not manage.
type external struct{}

func (external) Done() <-chan struct{}          { return nil }
func (external) Err() error                     { return nil }
func (external) Tail(int) []string              { return nil }
func (external) Identity() result.Stack         { return result.Stack{Kind: config.StackExternal} }
func (external) Stop(ctx context.Context) error { return nil }

// exitState is how a started stack ended, shared by the kinds that run
// something: end records it once, and Done and Err read it, race-free.
type exitState struct {
	done chan struct{} // closed by end
	err  error         // written before done is closed, read after
}

func newExitState() exitState { return exitState{done: make(chan struct{})} }

// end records how the stack ended and closes Done. Call it exactly once.
func (s *exitState) end(err error) {
	s.err = err
	close(s.done)
}

// Done is closed when the stack has exited, by itself or by Stop.
func (s *exitState) Done() <-chan struct{} { return s.done }

// Err is how the stack ended (an *ExitError), or nil while it runs.
func (s *exitState) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}
