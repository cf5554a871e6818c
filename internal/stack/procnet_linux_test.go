package stack

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// startStack starts a process stack of command, stopped at the test's end.
func startStack(t *testing.T, command []string, env map[string]string) Instance {
	t.Helper()
	cfg := config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{Command: command, Env: env}}
	inst, err := Start(context.Background(), cfg, Options{LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return inst
}

// refusedAddress returns a loopback address nothing listens on: a port
// that was just free.
func refusedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// A stack that serves on one port while target.base_url names another is
// told apart from one still loading: the wait names the ports the stack's
// processes listen on, read from /proc.
func TestWaitReadyNamesTheStacksPorts(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	// The listener is sh's child, not the stack's leader: the whole tree
	// is looked at.
	inst := startStack(t, []string{"sh", "-c", `"$0" & wait`, self}, map[string]string{testListenEnv: "1"})
	var serving string
	require.Eventually(t, func() bool {
		for _, l := range inst.Tail(10) {
			if a, ok := strings.CutPrefix(l, "listening on "); ok {
				serving = a
				return true
			}
		}
		return exited(inst)
	}, eventTimeout, 10*time.Millisecond)
	require.NotEmpty(t, serving, "the stack's process did not listen: %q", inst.Tail(10))

	addrs, ok := inst.(listener).listening()
	require.True(t, ok)
	assert.Equal(t, []string{serving}, addrs)

	wrong := refusedAddress(t)
	clock := newFakeClock()
	var said lines
	h := Health{BaseURL: "http://" + wrong, Path: "/health", Interval: 200 * time.Millisecond}
	_, err = WaitReady(context.Background(), inst, h, Wait{Timeout: 30 * time.Second, Clock: clock, Progress: said.add},
		func(context.Context) error { return nil })

	hint := "connection refused on " + wrong + "; the stack's processes listen on " + serving
	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	assert.Equal(t, hint, nre.Hint)
	assert.Contains(t, err.Error(), "connect: connection refused; "+hint+"\nlast ")
	got := said.all()
	require.Len(t, got, 2, "lines at 10 s and 20 s")
	for _, l := range got {
		assert.Contains(t, l, "left of stack.ready_timeout")
		assert.True(t, strings.HasSuffix(l, "connect: connection refused; "+hint), "%q", l)
	}
}

// A stack still loading listens on nothing yet, and says so.
func TestWaitReadyStackListensOnNothing(t *testing.T) {
	inst := startStack(t, []string{"sleep", "60"}, nil)
	wrong := refusedAddress(t)
	h := Health{BaseURL: "http://" + wrong, Path: "/health", Interval: 200 * time.Millisecond}
	_, err := WaitReady(context.Background(), inst, h, Wait{Timeout: 5 * time.Second, Clock: newFakeClock()},
		func(context.Context) error { return nil })
	var nre *NotReadyError
	require.ErrorAs(t, err, &nre)
	assert.Equal(t, "connection refused on "+wrong+"; the stack's processes listen on no TCP port yet", nre.Hint)
}

// An answer that is not a refused connection, and a stack that cannot say
// what it listens on, get no hint.
func TestRefusedHintOnlyWhenRefused(t *testing.T) {
	inst := startStack(t, []string{"sleep", "60"}, nil)
	h := Health{BaseURL: "http://127.0.0.1:1"}
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}, Err: os.NewSyscallError("connect", errConnRefused())}
	assert.NotEmpty(t, refusedHint(inst, h, refused))
	assert.Empty(t, refusedHint(inst, h, errors.New("HTTP 503")))
	assert.Empty(t, refusedHint(inst, h, nil))
	assert.Empty(t, refusedHint(external{}, h, refused), "an external server's processes are not perfgate's to read")
	assert.Empty(t, refusedHint(newFakeInstance(), h, refused))
}

func errConnRefused() error { return syscall.ECONNREFUSED }
