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
// shell's children), not only the one perfgate knows.
type process struct {
	cmd   *exec.Cmd
	argv  []string
	log   *logSink
	grace time.Duration

	exitState // ends when the leader has been reaped

	stopOnce sync.Once
	stopErr  error
}

// startProcess starts p.Command with p.Env added to perfgate's environment, in
// o.Dir, in a new process group, its stdout and stderr both going to the log.
func startProcess(ctx context.Context, p *config.ProcessStack, o Options) (Instance, error) {
	log, err := newLogSink(o.LogPath)
	if err != nil {
		return nil, err
	}
	// Not exec.CommandContext: the stack must outlive a cancelled start
	// context long enough to be stopped politely, by Stop.
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Dir = o.Dir
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		cmd.Env = append(cmd.Env, k+"="+p.Env[k])
	}
	cmd.Stdout, cmd.Stderr = log, log
	// Processes the stack forks inherit its output pipe and can hold it open
	// long after the leader has exited; without a bound, Wait (so Done, so
	// crash detection) would wait for them too.
	cmd.WaitDelay = outputDrain
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", strings.Join(p.Command, " "), err)
	}
	pr := &process{cmd: cmd, argv: slices.Clone(p.Command), log: log, grace: o.Grace, exitState: newExitState()}
	go pr.wait()
	if ctx.Err() != nil { // interrupted while starting: leave nothing behind
		_ = pr.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start %s: %w", pr.what(), context.Cause(ctx))
	}
	return pr, nil
}

func (p *process) what() string { return "process " + p.argv[0] }

// outputDrain is how long, once the leader has exited, its output is still
// read before the pipe is closed on processes it left behind.
const outputDrain = 500 * time.Millisecond

// wait reaps the leader and records how it ended.
func (p *process) wait() {
	err := p.cmd.Wait()
	ee := &ExitError{What: p.what(), Code: p.cmd.ProcessState.ExitCode()}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ee.Code, ee.Signal = -1, signalName(ws.Signal())
	}
	var exitErr *exec.ExitError
	// ErrWaitDelay: the leader exited cleanly but left processes holding its
	// output; Stop sweeps them.
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		// Not an exit status: the output copy failed. Still an exit.
		ee.Tail = append(ee.Tail, "perfgate: "+err.Error())
	}
	ee.Tail = append(p.log.Tail(TailLines), ee.Tail...)
	p.end(ee)
}

func (p *process) Tail(n int) []string { return p.log.Tail(n) }

func (p *process) Identity() result.Stack {
	return result.Stack{Kind: config.StackProcess, Command: slices.Clone(p.argv)}
}

// Stop sends SIGTERM to the whole process group, waits up to the grace period
// for the leader to exit, then sends SIGKILL to the group, which also reaches
// children that outlived their parent. It returns once the leader is reaped.
// ctx bounds the wait after SIGKILL only: a stop is never abandoned half-way.
func (p *process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		pgid := p.cmd.Process.Pid // the leader's pid is the group's id
		_ = signalGroup(pgid, syscall.SIGTERM)
		t := time.NewTimer(p.grace)
		select {
		case <-p.done:
			t.Stop()
		case <-t.C:
		}
		// The leader may be gone while its children linger: always sweep
		// the group.
		if err := signalGroup(pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			p.stopErr = fmt.Errorf("stop %s: kill process group %d: %w", p.what(), pgid, err)
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			if p.stopErr == nil {
				p.stopErr = fmt.Errorf("stop %s: still not reaped after SIGKILL: %w", p.what(), ctx.Err())
			}
		}
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
