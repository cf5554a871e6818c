//go:build unix && !linux

package stack

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// processSys is a stack run as perfgate's own child: no guard outside Linux.
type processSys struct {
	cmd *exec.Cmd
}

// launch starts the stack as perfgate's child, in a process group of its own.
func (p *process) launch(path string, env []string, o Options) error {
	cmd := &exec.Cmd{Path: path, Args: p.argv, Dir: o.Dir, Env: env}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// Processes the stack forks inherit its output pipe and can hold it open
	// long after the leader has exited; without a bound, Wait (so Done, so
	// crash detection) would wait for them too.
	cmd.WaitDelay = outputDrain
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	p.sys.cmd = cmd
	go p.wait()
	return nil
}

// leaderPID is the stack's leader, whose pid is its process group's id.
func (p *process) leaderPID() int { return p.sys.cmd.Process.Pid }

// pids returns the stack's leader: outside Linux there is no /proc to find
// the rest in.
func (p *process) pids() []int { return []int{p.leaderPID()} }

// wait reaps the leader and records how it ended.
func (p *process) wait() {
	err := p.sys.cmd.Wait()
	ws, _ := p.sys.cmd.ProcessState.Sys().(syscall.WaitStatus)
	ee := p.exitErrorOf(ws)
	var exitErr *exec.ExitError
	// ErrWaitDelay: the leader exited cleanly but left processes holding its
	// output; Stop sweeps them.
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		// Not an exit status: the output copy failed. Still an exit.
		ee.Tail = append(ee.Tail, "perfgate: "+err.Error())
	}
	p.finish(ee)
}

// stop sends SIGTERM to the whole process group, waits up to the grace
// period for the leader to exit, then sends SIGKILL to the group.
func (p *process) stop(ctx context.Context) error {
	pgid := p.leaderPID()
	_ = signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(p.grace)
	select {
	case <-p.done:
		t.Stop()
	case <-t.C:
	}
	// The leader may be gone while its children linger: always sweep the
	// group.
	var stopErr error
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		stopErr = fmt.Errorf("stop %s: kill process group %d: %w", p.what(), pgid, err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		if stopErr == nil {
			stopErr = fmt.Errorf("stop %s: still not reaped after SIGKILL: %w", p.what(), ctx.Err())
		}
	}
	return stopErr
}
