package stack

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// guard is the state of a running stack guard (see guard.go).
type guard struct {
	self    int      // the guard's pid
	parent  int      // perfgate's pid, as the guard found it at its start
	status  *os.File // the status pipe to perfgate
	logPath string   // the stack's log, for notes once perfgate is gone
	leader  int      // the stack's leader, whose pid is its group's id

	leaderDone bool
	leaderWS   syscall.WaitStatus
	orphaned   bool         // perfgate is gone: notes go to the log, not the pipe
	refused    map[int]bool // processes SIGKILL could not be sent to, already named
}

// runGuard is the guard process: it starts the stack and stays until no
// process of the stack is left. It returns the guard's exit status: the
// leader's exit code, 128+n when signal n killed it, 127 when the stack could
// not be started, 2 when the guard was started wrongly.
func runGuard(args []string) int {
	// The stack's parent-death signal (a second line behind the guard's
	// own sweep, should the guard itself be killed) follows the OS thread
	// that forks it: keep this goroutine on one thread for good.
	runtime.LockOSThread()
	status, lifeline := guardFile(guardStatusFD, "status"), guardFile(guardLifelineFD, "lifeline")
	grace, err := time.ParseDuration(os.Getenv(guardGraceEnv))
	if status == nil || lifeline == nil || err != nil || grace < 0 || len(args) < 3 || args[0] != guardArg {
		fmt.Fprintln(os.Stderr, "perfgate: the stack guard is started by perfgate itself, not by hand")
		return 2
	}
	g := &guard{self: os.Getpid(), parent: os.Getppid(), status: status, logPath: os.Getenv(guardLogEnv)}

	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		g.warn("the stack guard cannot become a child subreaper (%v): processes the stack detaches may outlive it", err)
	}
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	path, argv := args[1], args[2:]
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   guardStackEnv(os.Environ()),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		g.send("error %s", oneLine((&os.PathError{Op: "fork/exec", Path: path, Err: err}).Error()))
		return 127
	}
	g.leader = pid
	g.send("pid %d", pid)
	// Only the stack holds its output pipe from here on, so the pipe ends
	// when the stack's last process does.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		_ = unix.Dup3(int(null.Fd()), 1, 0)
		_ = unix.Dup3(int(null.Fd()), 2, 0)
		_ = null.Close()
	}

	gone := make(chan struct{})
	go func() {
		// perfgate never writes: a read returns only when its end closes.
		_, _ = io.Copy(io.Discard, lifeline)
		close(gone)
	}()

	for {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGCHLD:
				if g.reap() {
					return g.exitCode() // the stack ended by itself, all of it
				}
			case syscall.SIGTERM, syscall.SIGINT: // perfgate's Stop
				g.terminate(grace, sigs)
				return g.exitCode()
			case syscall.SIGHUP:
				// The parent-death signal perfgate set. Go sends it when the
				// thread that forked the guard exits, which need not mean
				// perfgate did: believe it only if perfgate is gone.
				if os.Getppid() != g.parent {
					g.abandoned(grace, sigs)
					return g.exitCode()
				}
			}
		case <-gone:
			g.abandoned(grace, sigs)
			return g.exitCode()
		}
	}
}

// guardFile returns the descriptor fd perfgate handed the guard, marked
// close-on-exec so that the stack does not inherit it; nil when it is not open.
func guardFile(fd int, name string) *os.File {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}

// abandoned stops the stack once perfgate is gone without stopping it: a
// shorter grace, and a note in the stack's log, since there is no one left
// to tell.
func (g *guard) abandoned(grace time.Duration, sigs <-chan os.Signal) {
	g.orphaned = true
	grace = min(grace, orphanGrace)
	g.note("perfgate (pid %d) is gone without stopping the stack; the stack guard stops it: SIGTERM, then SIGKILL after %s", g.parent, grace)
	g.terminate(grace, sigs)
}

// terminate stops every process of the stack: SIGTERM to its group and to
// every descendant, then, for whatever is left after grace, SIGKILL until
// none is left or guardKillTimeout passes; the survivors are named in a
// warning. It reaps what it stops.
func (g *guard) terminate(grace time.Duration, sigs <-chan os.Signal) {
	g.signalAll(syscall.SIGTERM)
	if g.waitGone(grace, sigs) {
		return
	}
	deadline := time.Now().Add(guardKillTimeout)
	for {
		g.signalAll(syscall.SIGKILL)
		if g.waitGone(100*time.Millisecond, sigs) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	var names []string
	left := descendantsOf(g.self, allProcs())
	for i, p := range left {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(left)-maxNamed))
			break
		}
		names = append(names, fmt.Sprintf("pid %d (%s, state %c)", p.pid, p.comm, p.state))
	}
	if len(names) == 0 {
		names = append(names, "processes it can no longer see")
	}
	g.warn("the stack guard could not stop %s: still there %s after SIGKILL; stop them by hand",
		strings.Join(names, ", "), guardKillTimeout)
}

// maxNamed is how many processes a warning names.
const maxNamed = 20

// signalAll sends sig to the stack's process group and to every descendant
// of the guard, which, the guard being a subreaper, is every process the
// stack started, in its group or not.
func (g *guard) signalAll(sig syscall.Signal) {
	_ = syscall.Kill(-g.leader, sig)
	for _, p := range descendantsOf(g.self, allProcs()) {
		err := syscall.Kill(p.pid, sig)
		if err != nil && !errors.Is(err, syscall.ESRCH) && sig == syscall.SIGKILL && !g.refused[p.pid] {
			if g.refused == nil {
				g.refused = map[int]bool{}
			}
			g.refused[p.pid] = true // say it once, not every round
			if len(g.refused) <= maxNamed {
				g.warn("the stack guard cannot signal pid %d (%s): %v", p.pid, p.comm, err)
			}
		}
	}
}

// waitGone reaps until no child is left (true) or d passes (false).
func (g *guard) waitGone(d time.Duration, sigs <-chan os.Signal) bool {
	if g.reap() {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	// SIGCHLD says when to look; the ticker covers signals merged into one.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sigs: // SIGCHLD, or a stop asked again: either way, look
		case <-tick.C:
		case <-t.C:
			return g.reap()
		}
		if g.reap() {
			return true
		}
	}
}

// reap collects every child that has ended and reports the leader's end to
// perfgate. It returns true when the guard has no child left: since it is a
// subreaper, no process of the stack is left either.
func (g *guard) reap() bool {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return true
		case err != nil:
			return false
		case pid == 0:
			return false // children left, none ended
		case pid == g.leader && !g.leaderDone:
			g.leaderDone, g.leaderWS = true, ws
			if ws.Signaled() {
				g.send("signal %d", int(ws.Signal()))
			} else {
				g.send("exit %d", ws.ExitStatus())
			}
		}
	}
}

// exitCode is the guard's exit status, mirroring the leader's as a shell
// does: its exit code, or 128+n for signal n.
func (g *guard) exitCode() int {
	switch {
	case !g.leaderDone:
		return 1
	case g.leaderWS.Signaled():
		return 128 + int(g.leaderWS.Signal())
	default:
		return g.leaderWS.ExitStatus()
	}
}

// send writes one status line to perfgate; a perfgate that is gone cannot
// read it, which is no error.
func (g *guard) send(format string, args ...any) {
	_, _ = fmt.Fprintf(g.status, format+"\n", args...)
}

// warn tells perfgate, or, once it is gone, the stack's log.
func (g *guard) warn(format string, args ...any) {
	msg := oneLine(fmt.Sprintf(format, args...))
	if g.orphaned {
		g.note("warning: %s", msg)
		return
	}
	g.send("warning %s", msg)
}

// note appends a line to the stack's log, for whoever reads it after a
// perfgate that was killed.
func (g *guard) note(format string, args ...any) {
	if g.logPath == "" {
		return
	}
	f, err := os.OpenFile(g.logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintf(f, "\nperfgate stack guard: %s\n", fmt.Sprintf(format, args...))
}

// oneLine keeps a message on one line of the status pipe.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}
