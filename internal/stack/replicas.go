package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Replicas is a stack of several replicas of one server, each at its own
// root (target.base_urls), that a fault can kill and start again one at a
// time. A process stack started with two or more roots is one.
type Replicas interface {
	Instance
	// Count is how many replicas the stack has.
	Count() int
	// Kill kills replica i (0-based) at once, as a crash or the loss of its
	// machine would: SIGKILL to its every process, no grace. Its end is
	// not the stack's: Done stays open. It returns once the replica is
	// gone.
	Kill(ctx context.Context, i int) error
	// Restart starts replica i again after Kill; it returns once its
	// process runs, not once it is ready.
	Restart(ctx context.Context, i int) error
	// Replica is replica i seen as a stack of its own: its Tail is that
	// replica's log, its Done and Err the stack's (what a readiness wait
	// for replica i quotes).
	Replica(i int) Instance
}

// ErrRunning says a replica to restart was not killed: it runs.
var ErrRunning = errors.New("it runs")

// replicaSet is a process stack of several replicas: the command started
// once per root, each with its port and number in its environment (and in
// its command, where it says ${PERFGATE_PORT}), its output in a log of its
// own. The stack has crashed when a replica exits that was not killed on
// purpose.
type replicaSet struct {
	cfg   *config.ProcessStack
	o     Options
	roots []string

	exitState
	endOnce sync.Once

	mu       sync.Mutex
	members  []*process // the running process of each replica
	killed   []bool     // replica i was killed on purpose and not restarted
	stopping bool
	crashed  int // the replica whose exit ended the stack, or -1

	stopOnce sync.Once
	stopErr  error
}

var _ Replicas = (*replicaSet)(nil)

// startReplicas starts one replica of p per root, in order; should one
// fail to start, those started are stopped.
func startReplicas(ctx context.Context, p *config.ProcessStack, o Options, roots []string) (Instance, error) {
	rs := &replicaSet{cfg: p, o: o, roots: roots, exitState: newExitState(), crashed: -1,
		members: make([]*process, len(roots)), killed: make([]bool, len(roots))}
	for i := range roots {
		if err := rs.start(ctx, i, false); err != nil {
			_ = rs.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return rs, nil
}

// ReplicaLog is replica i's (0-based) log file among n: the stack's log
// itself for one replica, else its name with -replica<i+1> before the
// extension (perfgate-stack-replica2.log).
func ReplicaLog(path string, i, n int) string {
	if n <= 1 {
		return path
	}
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-replica" + strconv.Itoa(i+1) + ext
}

// replicaOptions are the start options of replica i: its log, its root as
// the target that must be free, and its port and number in its variables.
func (rs *replicaSet) replicaOptions(i int) Options {
	o := rs.o
	o.LogPath = ReplicaLog(rs.o.LogPath, i, len(rs.roots))
	o.Target = rs.roots[i]
	o.replica = replicaVars(rs.roots[i], i)
	return o
}

// replicaVars are the variables replica i (0-based) at root is given.
func replicaVars(root string, i int) map[string]string {
	return map[string]string{config.EnvReplicaPort: config.ReplicaPort(root), config.EnvReplicaIndex: strconv.Itoa(i + 1)}
}

// start starts replica i and watches it; again appends to its log.
func (rs *replicaSet) start(ctx context.Context, i int, again bool) error {
	o := rs.replicaOptions(i)
	o.appendLog = again
	inst, err := startProcess(ctx, rs.cfg, o)
	if err != nil {
		return fmt.Errorf("replica %d (%s): %w", i+1, rs.roots[i], err)
	}
	p := inst.(*process)
	rs.mu.Lock()
	if rs.stopping { // Stop came while it started: it must not outlive the stack
		rs.mu.Unlock()
		_ = p.Stop(context.WithoutCancel(ctx))
		return fmt.Errorf("replica %d (%s): the stack is stopping", i+1, rs.roots[i])
	}
	rs.members[i], rs.killed[i] = p, false
	rs.mu.Unlock()
	go rs.watch(i, p)
	return nil
}

// watch ends the stack when p, replica i's process, exits on its own.
func (rs *replicaSet) watch(i int, p *process) {
	<-p.Done()
	rs.mu.Lock()
	onPurpose := rs.stopping || rs.members[i] != p || rs.killed[i]
	if !onPurpose {
		rs.crashed = i
	}
	rs.mu.Unlock()
	if !onPurpose {
		err := p.Err()
		var ee *ExitError
		if errors.As(err, &ee) {
			ee.What = fmt.Sprintf("replica %d of %d (%s), %s", i+1, len(rs.roots), rs.roots[i], ee.What)
		}
		rs.endOnce.Do(func() { rs.end(err) })
	}
}

func (rs *replicaSet) Count() int { return len(rs.roots) }

// member is replica i's process, or an error for an index out of range.
func (rs *replicaSet) member(i int) (*process, error) {
	if i < 0 || i >= len(rs.roots) {
		return nil, fmt.Errorf("stack: no replica %d (of %d)", i+1, len(rs.roots))
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.members[i], nil
}

func (rs *replicaSet) Kill(ctx context.Context, i int) error {
	p, err := rs.member(i)
	if err != nil {
		return err
	}
	rs.mu.Lock()
	rs.killed[i] = true // before the signal: its end must not read as a crash
	rs.mu.Unlock()
	if err := signalGroup(p.leaderPID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		rs.mu.Lock()
		rs.killed[i] = false // it runs on: nothing to restart
		rs.mu.Unlock()
		return fmt.Errorf("kill replica %d (%s): %w", i+1, rs.roots[i], err)
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		// Killed, not yet reaped: free what it held all the same.
		_ = p.Stop(context.WithoutCancel(ctx))
		return fmt.Errorf("kill replica %d (%s): %w", i+1, rs.roots[i], context.Cause(ctx))
	}
	// Frees what it held: its guard, its log, any process it left.
	if err := p.Stop(ctx); err != nil {
		return fmt.Errorf("kill replica %d (%s): %w", i+1, rs.roots[i], err)
	}
	return nil
}

func (rs *replicaSet) Restart(ctx context.Context, i int) error {
	if _, err := rs.member(i); err != nil {
		return err
	}
	rs.mu.Lock()
	killed, stopping := rs.killed[i], rs.stopping
	rs.mu.Unlock()
	switch {
	case stopping:
		return fmt.Errorf("restart replica %d: the stack is stopping", i+1)
	case !killed:
		return fmt.Errorf("restart replica %d (%s): %w", i+1, rs.roots[i], ErrRunning)
	}
	return rs.start(ctx, i, true)
}

func (rs *replicaSet) Replica(i int) Instance { return replicaView{rs, i} }

// replicaView is one replica of a set, as Replica gives it.
type replicaView struct {
	*replicaSet
	i int
}

func (v replicaView) Tail(n int) []string {
	v.mu.Lock()
	p := v.members[v.i]
	v.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Tail(n)
}

// Tail is the last lines of the replica that crashed, else of the first.
func (rs *replicaSet) Tail(n int) []string {
	rs.mu.Lock()
	i := max(rs.crashed, 0)
	p := rs.members[i]
	rs.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Tail(n)
}

func (rs *replicaSet) Identity() result.Stack {
	return result.Stack{Kind: config.StackProcess, Command: append([]string(nil), rs.cfg.Command...), Replicas: len(rs.roots)}
}

// Stop stops every replica at once, each as a process stack is stopped.
func (rs *replicaSet) Stop(ctx context.Context) error {
	rs.stopOnce.Do(func() {
		rs.mu.Lock()
		rs.stopping = true
		members := append([]*process(nil), rs.members...)
		rs.mu.Unlock()
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		for i, p := range members {
			if p == nil {
				continue
			}
			wg.Go(func() {
				if err := p.Stop(ctx); err != nil {
					errs[i] = fmt.Errorf("replica %d (%s): %w", i+1, rs.roots[i], err)
				}
			})
		}
		wg.Wait()
		rs.stopErr = errors.Join(errs...)
		rs.endOnce.Do(func() {
			rs.end(&ExitError{What: "process stack of " + strconv.Itoa(len(rs.roots)) + " replicas", Signal: "SIGTERM", Code: -1})
		})
	})
	return rs.stopErr
}
