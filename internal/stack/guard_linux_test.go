package stack

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/proctest"
)

// orphanBound is the promise: after SIGKILL of perfgate, nothing the stack
// started survives for longer than this.
const orphanBound = 10 * time.Second

// needSetsid skips a test that needs setsid(1) where it is not installed.
func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed (util-linux)")
	}
}

// waitSleeps waits until pid has n live descendants named sleep, and returns
// all its live descendants.
func waitSleeps(t *testing.T, pid, n int) []proctest.Proc {
	t.Helper()
	var tree []proctest.Proc
	require.Eventually(t, func() bool {
		tree = proctest.Descendants(pid)
		sleeps := 0
		for _, p := range tree {
			if p.Comm == "sleep" {
				sleeps++
			}
		}
		return sleeps >= n
	}, eventTimeout, 5*time.Millisecond, "pid %d never had %d sleep processes under it; it has %+v", pid, n, tree)
	return tree
}

// requireAllGone waits, up to bound, until none of procs is alive, and
// returns how long that took.
func requireAllGone(t *testing.T, procs []proctest.Proc, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var alive []proctest.Proc
		for _, p := range procs {
			if proctest.Alive(p.PID) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return time.Since(start)
		}
		if time.Since(start) > bound {
			t.Fatalf("still alive %s later: %+v", bound, alive)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}
}

// sessionLeavers are the processes of tree in another session than leader's:
// what a process-group kill cannot reach.
func sessionLeavers(tree []proctest.Proc, leader int) []proctest.Proc {
	var leaderSession int
	for _, p := range tree {
		if p.PID == leader {
			leaderSession = p.Session
		}
	}
	var out []proctest.Proc
	for _, p := range tree {
		if p.Session != leaderSession {
			out = append(out, p)
		}
	}
	return out
}

// The case: perfgate is killed with SIGKILL while a wrapper that
// forks runs the stack, and the stack has started a daemon of its own in
// another session. Within 10 s, nothing is left: not the wrapper, not its
// children, not the daemon, not the guard. (Before the guard, only the
// wrapper died, of its parent-death signal.)
func TestGuardStopsEverythingWhenPerfgateIsKilled(t *testing.T) {
	needSetsid(t)
	self, err := os.Executable()
	require.NoError(t, err)
	log := filepath.Join(t.TempDir(), "stack.log")
	script := `setsid sleep 300 & sleep 300 & sleep 300; echo done`
	parent := exec.Command(self, "-test.run=^$")
	parent.Env = append(os.Environ(), testParentEnv+"=1", testParentScriptEnv+"="+script, testParentLogEnv+"="+log)
	stdin, err := parent.StdinPipe()
	require.NoError(t, err)
	stdout, err := parent.StdoutPipe()
	require.NoError(t, err)
	parent.Stderr = os.Stderr
	require.NoError(t, parent.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})
	startedc := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		startedc <- line
	}()
	select {
	case line := <-startedc:
		require.Equal(t, "started\n", line, "the perfgate-like parent did not start the stack")
	case <-time.After(eventTimeout):
		t.Fatal("the perfgate-like parent did not start the stack in time")
	}

	// perfgate → guard → sh → {sleep, sleep, setsid sleep}
	tree := waitSleeps(t, parent.Process.Pid, 3)
	self2, ok := proctest.Read(parent.Process.Pid)
	require.True(t, ok)
	require.Len(t, sessionLeavers(append(tree, self2), parent.Process.Pid), 1,
		"the setsid daemon runs in a session of its own: %+v", tree)

	require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
	_ = parent.Wait()
	took := requireAllGone(t, tree, orphanBound)
	t.Logf("%d processes of the stack and its guard gone %s after SIGKILL of perfgate", len(tree), took.Round(time.Millisecond))

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(b), "perfgate stack guard: perfgate (pid "+strconv.Itoa(parent.Process.Pid)+") is gone without stopping the stack",
		"the log says what happened")
	assert.NotContains(t, string(b), "done", "the wrapper was stopped, not left to run on")
}

// Stop reaches what left the stack's process group and session: the guard
// is a subreaper, so a setsid daemon is still its descendant. (Before the
// guard, Stop signalled the group only, and the daemon lived on.)
func TestProcessStopReachesDaemons(t *testing.T) {
	needSetsid(t)
	t.Parallel()
	p := startSh(t, `setsid sh -c 'sleep 300 & exec sleep 300' & echo ready; sleep 300`, nil, Options{Grace: eventTimeout})
	waitForLine(t, p, "ready")
	tree := waitSleeps(t, p.sys.guard.Process.Pid, 3)
	require.Len(t, sessionLeavers(tree, p.leaderPID()), 2, "the daemon and its child left the session: %+v", tree)

	took, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.Less(t, took, eventTimeout/2, "SIGTERM stops them all without waiting out the grace")
	requireAllGone(t, tree, eventTimeout)
	assert.False(t, proctest.Alive(p.sys.guard.Process.Pid), "the guard is gone when Stop returns")
}

// A daemon left behind by a leader that has exited is still stopped: the
// exit is reported at once, and Stop sweeps what it left.
func TestProcessStopReachesDaemonsOfAnExitedLeader(t *testing.T) {
	needSetsid(t)
	t.Parallel()
	p := startSh(t, `setsid sleep 300 & echo "daemon $!"; exit 4`, nil, Options{Grace: eventTimeout})
	daemon := waitForPid(t, p, "daemon")
	waitExit(t, p)
	assert.Equal(t, 4, requireExitError(t, p).Code)
	require.True(t, proctest.Alive(daemon), "the daemon outlives its leader")

	_, err := stopProcess(t, p)
	require.NoError(t, err)
	requireAllGone(t, []proctest.Proc{{PID: daemon}}, eventTimeout)
}

// The stack gets nothing of the guard's: not its variables, not its pipes;
// its stdin is /dev/null.
func TestGuardHandsTheStackNothingOfItsOwn(t *testing.T) {
	t.Parallel()
	p := startSh(t, `
echo "vars=$(env | grep -c '^PERFGATE_STACK_GUARD')"
echo "stdin=$(readlink /proc/$$/fd/0)"
for fd in 3 4 5 6; do [ -e /proc/$$/fd/$fd ] && echo "open fd $fd: $(readlink /proc/$$/fd/$fd)"; done
echo end`, nil, Options{Grace: eventTimeout})
	waitExit(t, p)
	assert.Equal(t, []string{"vars=0", "stdin=/dev/null", "end"}, p.Tail(10))
}

// The guard's parent-death signal comes when the OS thread that forked it
// exits, which need not be perfgate's death: while perfgate lives, a SIGHUP
// leaves the stack alone. The guard handles its signals in order, so the
// SIGHUP has been dealt with by the time the stop that follows it is.
func TestGuardIgnoresHangupWhilePerfgateLives(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "stack.log")
	p := startSh(t, `echo ready; sleep 300`, nil, Options{LogPath: log, Grace: eventTimeout})
	waitForLine(t, p, "ready")
	require.NoError(t, syscall.Kill(p.sys.guard.Process.Pid, syscall.SIGHUP))
	_, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.Equal(t, "SIGTERM", requireExitError(t, p).Signal)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "ready\n", string(b), "the guard took the SIGHUP for perfgate's death")
}

// A guard killed from outside (out of memory) takes the stack's leader with
// it, by the leader's parent-death signal, and the stack's end says so.
func TestGuardKilled(t *testing.T) {
	t.Parallel()
	p := startSh(t, `echo ready; sleep 300`, nil, Options{Grace: eventTimeout})
	waitForLine(t, p, "ready")
	leader := p.leaderPID()
	require.NoError(t, p.sys.guard.Process.Kill())
	waitExit(t, p)
	ee := requireExitError(t, p)
	assert.Equal(t, "SIGKILL", ee.Signal)
	assert.Contains(t, ee.Error(), "the stack guard ended before the stack did")
	requireAllGone(t, []proctest.Proc{{PID: leader}}, eventTimeout)
	_, err := stopProcess(t, p)
	require.NoError(t, err)
	requireGroupGone(t, leader) // the leader's child, which had no such signal, too
}

// A command the guard cannot run fails the start with what exec said.
func TestGuardCannotRunTheCommand(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "not-a-program"), []byte("just text\n"), 0o644))
	_, err := Start(context.Background(), processStack("./not-a-program"), Options{Dir: dir, LogPath: filepath.Join(dir, "stack.log"), Grace: time.Second})
	require.Error(t, err)
	assert.Regexp(t, regexp.MustCompile(`^start ./not-a-program: fork/exec ./not-a-program: permission denied$`), err.Error())
}

// processStack is a process stack running argv.
func processStack(argv ...string) config.Stack {
	return config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{Command: argv}}
}

func TestParseGuardStatus(t *testing.T) {
	tests := []struct {
		line string
		want guardStatus
		ok   bool
	}{
		{"pid 1234\n", guardStatus{kind: "pid", n: 1234}, true},
		{"exit 3", guardStatus{kind: "exit", n: 3}, true},
		{"signal 9", guardStatus{kind: "signal", n: 9}, true},
		{"error fork/exec x: no such file", guardStatus{kind: "error", text: "fork/exec x: no such file"}, true},
		{"warning could not stop pid 7", guardStatus{kind: "warning", text: "could not stop pid 7"}, true},
		{"exit x", guardStatus{}, false},
		{"hello", guardStatus{}, false},
		{"", guardStatus{}, false},
	}
	for _, tt := range tests {
		got, ok := parseGuardStatus(tt.line)
		assert.Equal(t, tt.ok, ok, "parseGuardStatus(%q) ok", tt.line)
		assert.Equal(t, tt.want, got, "parseGuardStatus(%q)", tt.line)
	}
}

func TestGuardStackEnv(t *testing.T) {
	got := guardStackEnv([]string{"PATH=/bin", guardEnv + "=1", guardGraceEnv + "=1s", "PERFGATE_STACK_GUARDIAN=x", "HOME=/h"})
	assert.Equal(t, []string{"PATH=/bin", "PERFGATE_STACK_GUARDIAN=x", "HOME=/h"}, got)
	assert.Empty(t, strings.Join(guardStackEnv(nil), ""))
}

// A test binary that starts a process stack but forgot MaybeGuard in its
// TestMain gets the guard's arguments: it must fail at once on them rather
// than run its tests (and start stacks) again.
func TestGuardArgumentStopsATestBinary(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, guardArg, "/bin/sh", "sh", "-c", "exit 0")
	cmd.Env = guardStackEnv(os.Environ()) // not in guard mode
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the test binary ran: %s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "flag provided but not defined: "+guardArg)
}
