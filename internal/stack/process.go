package stack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// process is a command perfgate started in a process group of its own, so
// that stopping it reaches every process it forked (an engine's workers, a
// shell's children), not only the one perfgate knows. On Linux it runs under
// the stack guard (see guard.go), which also reaches the processes that left
// the group, and stops them all should perfgate die; elsewhere it is
// perfgate's own child.
type process struct {
	argv  []string
	log   *logSink
	grace time.Duration

	exitState // ends when the leader has exited
	endOnce   sync.Once

	sys processSys // how it runs: process_linux.go, process_other.go

	stopOnce sync.Once
	stopErr  error
}

// startProcess starts p.Command in o.Dir, in a new process group, its stdout
// and stderr both going to the log. Its environment is explicit (see
// env.go): the variables of perfgate's that every stack inherits, and p.Env,
// never the GitHub token. It refuses when something already answers at
// o.Target.
func startProcess(ctx context.Context, p *config.ProcessStack, o Options) (Instance, error) {
	if len(p.Command) == 0 {
		return nil, errors.New("stack: stack.process.command is empty")
	}
	if err := checkTargetFree(ctx, o.Target); err != nil {
		return nil, err
	}
	argv := replicaArgv(p.Command, o.replica)
	cmdline := strings.Join(argv, " ")
	path, err := commandPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmdline, err)
	}
	lookup := func(name string) (string, bool) {
		if v, ok := o.replica[name]; ok {
			return v, true
		}
		return os.LookupEnv(name)
	}
	env, err := processEnv(os.Environ(), p.Env, lookup)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cmdline, err)
	}
	// The replica's own variables, unless stack.process.env sets them.
	env = dedupEnv(append(replicaEnv(o.replica), env...))
	log, err := openLogSink(o.LogPath, o.appendLog)
	if err != nil {
		return nil, err
	}
	pr := &process{argv: argv, log: log, grace: o.Grace, exitState: newExitState()}
	// Not tied to ctx: the stack must outlive a cancelled start context
	// long enough to be stopped politely, by Stop.
	if err := pr.launch(path, env, o); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", cmdline, err)
	}
	if ctx.Err() != nil { // interrupted while starting: leave nothing behind
		_ = pr.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start %s: %w", pr.what(), context.Cause(ctx))
	}
	return pr, nil
}

// replicaArgv is the command with each ${PERFGATE_PORT} and
// ${PERFGATE_REPLICA} replaced by the replica's values; any other ${NAME}
// is left as it is, for the program to read.
func replicaArgv(command []string, vars map[string]string) []string {
	out := slices.Clone(command)
	for i, a := range out {
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			a = strings.ReplaceAll(a, "${"+name+"}", vars[name])
		}
		out[i] = a
	}
	return out
}

// replicaEnv is vars as KEY=VALUE, sorted.
func replicaEnv(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, name+"="+vars[name])
	}
	return out
}

// commandPath finds the program to run as exec.Command does: a name without
// a slash is looked up in perfgate's PATH; one with a slash is used as it
// is, relative to the stack's directory.
func commandPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	return exec.LookPath(name)
}

// dedupEnv keeps the last value of each variable, as exec.Cmd does, so that
// stack.process.env overrides what the stack inherits from perfgate.
func dedupEnv(env []string) []string {
	last := map[string]int{}
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		last[k] = i
	}
	out := make([]string, 0, len(last))
	for i, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if last[k] == i {
			out = append(out, kv)
		}
	}
	return out
}

func (p *process) what() string { return "process " + p.argv[0] }

// outputDrain is how long, once the leader has exited, its output is still
// read before its end is recorded: processes it left behind may hold the
// output open.
const outputDrain = 500 * time.Millisecond

// finish records how the stack ended, once.
func (p *process) finish(err error) { p.endOnce.Do(func() { p.end(err) }) }

// exitErrorOf describes a leader that exited with ws, with the log's tail.
func (p *process) exitErrorOf(ws syscall.WaitStatus) *ExitError {
	ee := &ExitError{What: p.what(), Code: ws.ExitStatus()}
	if ws.Signaled() {
		ee.Code, ee.Signal = -1, signalName(ws.Signal())
	}
	ee.Tail = p.log.Tail(TailLines)
	return ee
}

func (p *process) Tail(n int) []string { return p.log.Tail(n) }

func (p *process) Identity() result.Stack {
	return result.Stack{Kind: config.StackProcess, Command: slices.Clone(p.argv)}
}

// Stop sends SIGTERM to every process of the stack, waits up to the grace
// period, then sends SIGKILL to whatever is left, which also reaches children
// that outlived their parent. It returns once the leader is reaped. ctx
// bounds the wait after SIGKILL only: a stop is never abandoned half-way.
func (p *process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.stopErr = p.stop(ctx)
		if err := p.log.Close(); err != nil && p.stopErr == nil {
			p.stopErr = err
		}
	})
	return p.stopErr
}

// signalGroup signals every process of group pgid.
func signalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}

// signalName names sig as people write it ("SIGKILL"), not as Signal.String
// describes it ("killed"), which would read "killed by killed".
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
		syscall.SIGTERM: "SIGTERM",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}
