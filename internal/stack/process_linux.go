package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// processSys is a stack run under the stack guard (see guard.go): perfgate's
// child is the guard, and the guard's child is the stack's leader.
type processSys struct {
	guard    *exec.Cmd
	leader   int      // the stack's leader, whose pid is its group's id
	lifeline *os.File // perfgate's end; the guard stops the stack when it closes
	output   *os.File // the read end of the stack's output

	outputDone chan struct{} // closed when the output has been read to its end
	guardDone  chan struct{} // closed when the guard has exited and its status is read

	mu       sync.Mutex
	warnings []string // what the guard warned about
}

const (
	// guardStartTimeout bounds the wait for the guard to say that it
	// started the stack (it takes milliseconds).
	guardStartTimeout = 30 * time.Second
	// guardStopSlack is how much longer than it should need perfgate gives
	// the guard to stop the stack before it kills the guard and the stack's
	// process group itself.
	guardStopSlack = 5 * time.Second
)

// launch starts the stack under a guard, and returns once the guard has
// started the stack's leader (or failed to).
func (p *process) launch(path string, env []string, o Options) error {
	// /proc/self/exe is perfgate's own binary even when the file it came
	// from was replaced or removed since (an upgrade during a run).
	const selfExe = "/proc/self/exe"
	self, err := os.Executable()
	if err != nil {
		self = selfExe
	}
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	lifeR, lifeW := pipe()
	statusR, statusW := pipe()
	outR, outW := pipe()
	if err != nil {
		closeAll()
		return fmt.Errorf("pipes for the stack guard: %w", err)
	}

	s := &p.sys
	s.guard = &exec.Cmd{Path: selfExe, Args: append([]string{self, guardArg, path}, p.argv...)}
	s.guard.Env = append(guardStackEnv(env), guardEnv+"=1", guardGraceEnv+"="+p.grace.String(), guardLogEnv+"="+o.LogPath)
	s.guard.Dir = o.Dir
	s.guard.Stdout, s.guard.Stderr = outW, outW // the guard hands them to the stack
	s.guard.ExtraFiles = []*os.File{lifeR, statusW}
	// The guard's own group keeps a terminal's Ctrl-C for perfgate, which
	// stops the stack itself. SIGHUP if perfgate dies: the guard checks.
	s.guard.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
	err = s.guard.Start()
	// The guard has its copies; perfgate keeps only its ends.
	_, _, _ = lifeR.Close(), statusW.Close(), outW.Close()
	if err != nil {
		_, _, _ = lifeW.Close(), statusR.Close(), outR.Close()
		return fmt.Errorf("start the stack guard (%s): %w", self, err)
	}
	s.lifeline, s.output = lifeW, outR
	s.outputDone, s.guardDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.outputDone)
		_, _ = io.Copy(p.log, outR)
	}()
	started := make(chan guardStatus, 1)
	go p.follow(statusR, started)

	t := time.NewTimer(guardStartTimeout)
	defer t.Stop()
	var st guardStatus
	select {
	case st = <-started:
	case <-s.guardDone:
		// A stack that ends at once can take its guard with it before this
		// select looks: what the guard said is still in started.
		select {
		case st = <-started:
		default:
			p.release()
			return fmt.Errorf("the stack guard exited before it started the stack (%s); "+
				"if this is a test binary, its TestMain must call stack.MaybeGuard first", s.guard.ProcessState)
		}
	case <-t.C:
		_ = s.guard.Process.Kill()
		<-s.guardDone
		p.release()
		return fmt.Errorf("the stack guard did not start the stack within %s", guardStartTimeout)
	}
	if st.kind == "pid" {
		s.leader = st.n
		return nil
	}
	<-s.guardDone // the guard exits at once
	p.release()
	return errors.New(st.text)
}

// leaderPID is the stack's leader, whose pid is its process group's id.
func (p *process) leaderPID() int { return p.sys.leader }

// pids returns the stack's live processes: every process below its guard,
// which adopts those the stack detaches (it is their subreaper), the leader
// among them.
func (p *process) pids() []int {
	var out []int
	for _, st := range descendantsOf(p.sys.guard.Process.Pid, allProcs()) {
		out = append(out, st.pid)
	}
	return out
}

// follow reads the guard's status lines until the guard exits: the first
// pid or error line goes to started; the leader's end is recorded once its
// output has been read (or outputDrain has passed: processes it left behind
// may hold the output); warnings are kept for Stop. When the guard exits
// without having reported the leader's end, that is how the stack ended.
func (p *process) follow(status *os.File, started chan<- guardStatus) {
	s := &p.sys
	defer close(s.guardDone)
	defer status.Close()
	first, ended := true, false
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		st, ok := parseGuardStatus(sc.Text())
		if !ok {
			continue
		}
		switch st.kind {
		case "pid", "error":
			if first {
				first = false
				ended = st.kind == "error" // nothing was started
				started <- st
			}
		case "exit", "signal":
			ended = true
			p.drainOutput()
			ws := syscall.WaitStatus((st.n & 0xff) << 8) // exited with code n
			if st.kind == "signal" {
				ws = syscall.WaitStatus(st.n & 0x7f)
			}
			p.finish(p.exitErrorOf(ws))
		case "warning":
			s.mu.Lock()
			s.warnings = append(s.warnings, st.text)
			s.mu.Unlock()
		}
	}
	_, _ = io.Copy(io.Discard, status) // a line too long for the scanner: drain, or the guard blocks writing
	err := s.guard.Wait()
	if first || ended {
		return // launch reports a start that failed
	}
	// Only if the guard did not report the leader's end: it was killed.
	ee := &ExitError{What: p.what(), Code: -1, Signal: "SIGKILL"}
	p.drainOutput()
	ee.Tail = append(p.log.Tail(TailLines), fmt.Sprintf("perfgate: the stack guard ended before the stack did (%v); its parent-death signal killed the stack", err))
	p.finish(ee)
}

// drainOutput waits until the stack's output has been read to its end, or
// outputDrain has passed.
func (p *process) drainOutput() {
	t := time.NewTimer(outputDrain)
	defer t.Stop()
	select {
	case <-p.sys.outputDone:
	case <-t.C:
	}
}

// release closes perfgate's ends of the guard's pipes once the guard has
// exited, and waits for the output to be read to its end, or for outputDrain
// should a process that escaped the guard still hold it.
func (p *process) release() {
	s := &p.sys
	_ = s.lifeline.Close()
	p.drainOutput()
	_ = s.output.Close() // ends the copy, if something still holds the pipe
	<-s.outputDone
}

// stop asks the guard to stop the stack (SIGTERM to every process of it, then
// SIGKILL after the grace) and waits for it to be done. A guard that does not
// finish in time is killed, and the stack's group with it.
func (p *process) stop(ctx context.Context) error {
	s := &p.sys
	var errs []error
	select {
	case <-s.guardDone:
	default:
		_ = s.guard.Process.Signal(syscall.SIGTERM)
		limit := p.grace + guardKillTimeout + guardStopSlack
		t := time.NewTimer(limit)
		select {
		case <-s.guardDone:
			t.Stop()
		case <-t.C:
			_ = s.guard.Process.Kill()
			_ = signalGroup(s.leader, syscall.SIGKILL)
			errs = append(errs, fmt.Errorf("the stack guard did not stop the stack within %s: killed it, and the stack's process group %d", limit, s.leader))
			select {
			case <-s.guardDone:
			case <-ctx.Done():
				errs = append(errs, fmt.Errorf("still not reaped after SIGKILL: %w", ctx.Err()))
			}
		}
	}
	select {
	case <-s.guardDone:
		if !s.guard.ProcessState.Exited() {
			// The guard was killed before it could stop the stack: only
			// the leader had a parent-death signal. Sweep its group.
			_ = signalGroup(s.leader, syscall.SIGKILL)
		}
	default: // reported above
	}
	p.release()
	s.mu.Lock()
	for _, w := range s.warnings {
		errs = append(errs, errors.New(w))
	}
	s.mu.Unlock()
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("stop %s: %s", p.what(), strings.Join(msgs, "; "))
}
