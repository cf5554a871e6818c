package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// eventTimeout bounds every wait on an event (Done, Stop returning) that
// should come within milliseconds: it fails a test instead of hanging it.
const eventTimeout = 10 * time.Second

// startSh starts `sh -c script` as a process stack with o (LogPath defaults to
// a file in a temporary directory), and stops it when the test ends.
func startSh(t *testing.T, script string, env map[string]string, o Options) *process {
	t.Helper()
	if o.LogPath == "" {
		o.LogPath = filepath.Join(t.TempDir(), "stack.log")
	}
	cfg := config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{
		Command: []string{"sh", "-c", script},
		Env:     env,
	}}
	inst, err := Start(context.Background(), cfg, o)
	require.NoError(t, err)
	p, ok := inst.(*process)
	require.True(t, ok, "a process stack is a *process, got %T", inst)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
		defer cancel()
		_ = p.Stop(ctx)
	})
	return p
}

// waitExit waits for inst to exit, failing the test if it does not in time.
func waitExit(t *testing.T, inst Instance) {
	t.Helper()
	select {
	case <-inst.Done():
	case <-time.After(eventTimeout):
		t.Fatalf("the stack did not exit within %s; its log: %q", eventTimeout, inst.Tail(TailLines))
	}
}

// stopProcess stops inst, failing the test if Stop does not return in time. It
// returns Stop's error and how long it took.
func stopProcess(t *testing.T, inst Instance) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- inst.Stop(context.Background()) }()
	select {
	case err := <-errc:
		return time.Since(start), err
	case <-time.After(eventTimeout):
		t.Fatalf("Stop did not return within %s", eventTimeout)
		return 0, nil
	}
}

// waitForLine waits until the stack's output has a line starting with
// prefix, and returns the rest of that line. Output has no event to wait on,
// so it polls.
func waitForLine(t *testing.T, inst Instance, prefix string) string {
	t.Helper()
	var rest string
	require.Eventually(t, func() bool {
		for _, l := range inst.Tail(keepLines) {
			if r, ok := strings.CutPrefix(l, prefix); ok {
				rest = r
				return true
			}
		}
		return false
	}, eventTimeout, 5*time.Millisecond, "no line %q in the stack's output: %q", prefix, inst.Tail(TailLines))
	return rest
}

// waitForPid waits for a line "prefix <pid>" and returns the pid.
func waitForPid(t *testing.T, inst Instance, prefix string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(waitForLine(t, inst, prefix+" ")))
	require.NoError(t, err)
	require.Positive(t, pid)
	return pid
}

// requireGroupGone waits (briefly: the kernel tears processes down
// asynchronously) for process group pgid to have no live process left.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	require.Eventually(t, func() bool { return !proctest.GroupAlive(pgid) }, eventTimeout, 5*time.Millisecond,
		"process group %d still has live processes", pgid)
}

func requireExitError(t *testing.T, inst Instance) *ExitError {
	t.Helper()
	err := inst.Err()
	var ee *ExitError
	require.ErrorAs(t, err, &ee)
	return ee
}

func TestProcessOutputEnvAndDir(t *testing.T) {
	t.Setenv("PERFGATE_TEST_OVERRIDDEN", "from perfgate")
	t.Setenv("PERFGATE_TEST_INHERITED", "inherited") // not on the allow-list: the stack does not get it
	dir := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "stack.log")

	p := startSh(t, `
echo "to stdout"
echo "to stderr" >&2
echo "foo=$FOO"
echo "overridden=$PERFGATE_TEST_OVERRIDDEN"
echo "inherited=$PERFGATE_TEST_INHERITED"
echo "pwd=$(pwd -P)"
printf 'no newline at the end'`,
		map[string]string{"FOO": "bar baz", "PERFGATE_TEST_OVERRIDDEN": "from the config"},
		Options{LogPath: logPath, Dir: dir, Grace: time.Second})
	waitExit(t, p)

	realDir, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	want := []string{
		"to stdout",
		"to stderr",
		"foo=bar baz",
		"overridden=from the config",
		"inherited=",
		"pwd=" + realDir,
		"no newline at the end",
	}
	assert.Equal(t, want, p.Tail(100), "stdout and stderr, in order, in the tail")
	assert.Equal(t, want[5:], p.Tail(2))

	ee := requireExitError(t, p)
	assert.Equal(t, 0, ee.Code)
	assert.Empty(t, ee.Signal)
	assert.Equal(t, want, ee.Tail, "the exit carries the tail")

	_, err = stopProcess(t, p)
	require.NoError(t, err)
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(want, "\n"), string(data), "and all of it in the log file")
}

func TestProcessExitsByItself(t *testing.T) {
	t.Parallel()
	p := startSh(t, `
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do echo "loading $i"; done
echo "fatal: CUDA out of memory" >&2
exit 3`, nil, Options{Grace: time.Second})
	waitExit(t, p)

	ee := requireExitError(t, p)
	assert.Equal(t, "process sh", ee.What)
	assert.Equal(t, 3, ee.Code)
	assert.Empty(t, ee.Signal)
	assert.False(t, ee.OOMKilled)
	require.Len(t, ee.Tail, TailLines, "the exit carries the last TailLines lines")
	assert.Equal(t, "loading 7", ee.Tail[0])
	assert.Equal(t, "fatal: CUDA out of memory", ee.Tail[TailLines-1])

	msg := ee.Error()
	assert.Contains(t, msg, "process sh exited with status 3")
	assert.Contains(t, msg, "last 20 lines of the stack's log")
	assert.Contains(t, msg, "\n  | loading 25\n  | fatal: CUDA out of memory")
	assert.NotContains(t, msg, "| loading 6\n", "no more than the tail")

	assert.Same(t, p.Err(), p.Err(), "Err is stable once Done")
}

func TestProcessStopRunning(t *testing.T) {
	t.Parallel()
	p := startSh(t, `echo "pgid $$"; echo ready; sleep 60`, nil, Options{Grace: eventTimeout})
	pgid := waitForPid(t, p, "pgid")
	waitForLine(t, p, "ready")

	assert.Equal(t, p.leaderPID(), pgid, "the leader's pid is the group id")
	got, err := syscall.Getpgid(pgid)
	require.NoError(t, err)
	assert.Equal(t, pgid, got, "the stack runs in a process group of its own")
	assert.NotEqual(t, syscall.Getpgrp(), pgid, "not perfgate's own group")

	select {
	case <-p.Done():
		t.Fatal("Done closed while the stack still runs")
	default:
	}
	assert.NoError(t, p.Err(), "no Err while it runs")

	took, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.Less(t, took, eventTimeout/2, "SIGTERM stops it without waiting out the grace period")
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed when Stop returns")
	}
	ee := requireExitError(t, p)
	assert.Equal(t, -1, ee.Code)
	assert.Equal(t, "SIGTERM", ee.Signal)
	assert.Contains(t, ee.Error(), "process sh exited (killed by SIGTERM)")
	requireGroupGone(t, pgid)
}

func TestProcessStopKillsChildThatOutlivedItsLeader(t *testing.T) {
	t.Parallel()
	p := startSh(t, `sleep 60 & echo "child $!"; exit 0`, nil, Options{Grace: eventTimeout})
	child := waitForPid(t, p, "child")

	// The leader exits; its child, which still holds the output, lives on.
	waitExit(t, p)
	ee := requireExitError(t, p)
	assert.Equal(t, 0, ee.Code)
	assert.Equal(t, []string{fmt.Sprintf("child %d", child)}, ee.Tail)
	require.True(t, proctest.Alive(child), "the child outlives its leader")
	pgid, err := syscall.Getpgid(child)
	require.NoError(t, err)
	assert.Equal(t, p.leaderPID(), pgid, "the child is in the stack's group")

	took, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.Less(t, took, eventTimeout/2)
	require.Eventually(t, func() bool { return !proctest.Alive(child) }, eventTimeout, 5*time.Millisecond,
		"Stop left the child %d running", child)
	requireGroupGone(t, pgid)
}

func TestProcessStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	const grace = 300 * time.Millisecond
	p := startSh(t, `trap "" TERM; echo "pgid $$"; echo armed; while :; do sleep 0.1; done`, nil, Options{Grace: grace})
	pgid := waitForPid(t, p, "pgid")
	waitForLine(t, p, "armed")

	took, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, took, grace, "SIGKILL only once the grace period is over")
	assert.Less(t, took, eventTimeout/2)
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed when Stop returns")
	}
	ee := requireExitError(t, p)
	assert.Equal(t, -1, ee.Code)
	assert.Equal(t, "SIGKILL", ee.Signal)
	requireGroupGone(t, pgid)
}

func TestProcessStopTwiceAndConcurrently(t *testing.T) {
	t.Parallel()
	p := startSh(t, `echo "pgid $$"; sleep 60`, nil, Options{Grace: eventTimeout})
	pgid := waitForPid(t, p, "pgid")

	errc := make(chan error, 3)
	for range 3 {
		go func() { errc <- p.Stop(context.Background()) }()
	}
	for range 3 {
		select {
		case err := <-errc:
			assert.NoError(t, err)
		case <-time.After(eventTimeout):
			t.Fatal("a concurrent Stop did not return")
		}
	}
	_, err := stopProcess(t, p)
	assert.NoError(t, err, "Stop once more")
	requireGroupGone(t, pgid)
}

func TestProcessStopAfterNaturalExit(t *testing.T) {
	t.Parallel()
	p := startSh(t, `echo bye; exit 0`, nil, Options{Grace: eventTimeout})
	waitExit(t, p)
	before := p.Err()

	took, err := stopProcess(t, p)
	require.NoError(t, err)
	assert.Less(t, took, eventTimeout/2, "nothing to wait for")
	_, err = stopProcess(t, p)
	require.NoError(t, err)
	assert.Same(t, before, p.Err(), "Stop does not change how it ended")
	assert.Equal(t, []string{"bye"}, p.Tail(10), "the tail outlives Stop")
}

func TestProcessStartErrors(t *testing.T) {
	logIn := func(t *testing.T) string { return filepath.Join(t.TempDir(), "stack.log") }
	tests := []struct {
		name    string
		cfg     config.Stack
		logPath func(t *testing.T) string
		want    []string
	}{
		{
			name:    "command not found",
			cfg:     config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{Command: []string{"perfgate-no-such-command-xyz", "--port", "8000"}}},
			logPath: logIn,
			want:    []string{"perfgate-no-such-command-xyz"},
		},
		{
			name:    "command not executable",
			cfg:     config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{Command: []string{"/dev/null"}}},
			logPath: logIn,
			want:    []string{"/dev/null"},
		},
		{
			name:    "log file cannot be created",
			cfg:     config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{Command: []string{"sh", "-c", "exit 0"}}},
			logPath: func(t *testing.T) string { return filepath.Join(t.TempDir(), "missing", "stack.log") },
			want:    []string{"stack log"},
		},
		{
			name:    "kind process without its section",
			cfg:     config.Stack{Kind: config.StackProcess},
			logPath: logIn,
			want:    []string{"stack.process"},
		},
		{
			name:    "unknown kind",
			cfg:     config.Stack{Kind: "nomad"},
			logPath: logIn,
			want:    []string{`unknown kind "nomad"`},
		},
		{
			name:    "kubernetes without its section",
			cfg:     config.Stack{Kind: config.StackKubernetes},
			logPath: logIn,
			want:    []string{"kind kubernetes needs stack.kubernetes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := Start(context.Background(), tt.cfg, Options{LogPath: tt.logPath(t), Grace: time.Second})
			require.Error(t, err)
			assert.Nil(t, inst)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestProcessStartInterrupted(t *testing.T) {
	cause := errors.New("interrupted by the user")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	done := make(chan struct{})
	var (
		inst Instance
		err  error
	)
	go func() {
		defer close(done)
		inst, err = Start(ctx, config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{
			Command: []string{"sh", "-c", "sleep 60"},
		}}, Options{LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: eventTimeout})
	}()
	select {
	case <-done:
	case <-time.After(eventTimeout):
		t.Fatal("Start did not return")
	}
	require.Error(t, err)
	assert.Nil(t, inst)
	assert.ErrorIs(t, err, cause)
	assert.Contains(t, err.Error(), "start process sh")
}

func TestProcessIdentity(t *testing.T) {
	argv := []string{"sh", "-c", "exit 0", "perfgate-arg0", "--flag=x y"}
	ps := &config.ProcessStack{Command: argv}
	inst, err := Start(context.Background(), config.Stack{Kind: config.StackProcess, Process: ps},
		Options{LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	want := slices.Clone(argv)

	id := inst.Identity()
	assert.Equal(t, config.StackProcess, id.Kind)
	assert.Equal(t, want, id.Command)
	assert.Empty(t, id.Image)

	// Neither the config's argv nor a returned identity is shared.
	ps.Command[0] = "changed"
	id.Command[1] = "changed"
	assert.Equal(t, want, inst.Identity().Command)
}

func TestProcessExternalStack(t *testing.T) {
	// Kind external starts nothing: an Instance with nothing to watch or stop.
	inst, err := Start(context.Background(), config.Stack{Kind: config.StackExternal}, Options{})
	require.NoError(t, err)
	assert.Nil(t, inst.Done(), "an external stack's Done never closes")
	assert.NoError(t, inst.Err())
	assert.Nil(t, inst.Tail(10))
	assert.Equal(t, config.StackExternal, inst.Identity().Kind)
	assert.NoError(t, inst.Stop(context.Background()))
}
