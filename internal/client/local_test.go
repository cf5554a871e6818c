package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDoLocalErrors: a resource perfgate's own machine ran out of is
// ErrLocal, named, and never blamed on the server. The dial returns the
// errno wrapped as net's dialer does. The unfixed client called each of these
// a connect error.
func TestDoLocalErrors(t *testing.T) {
	tests := []struct {
		errno   syscall.Errno
		syscall string
		text    string
	}{
		{syscall.EMFILE, "socket", "perfgate ran out of open files"},
		{syscall.ENFILE, "socket", "perfgate's machine ran out of open files system-wide"},
		{syscall.ENOBUFS, "connect", "perfgate's machine ran out of socket buffers"},
		{syscall.ENOMEM, "socket", "perfgate's machine ran out of memory"},
		{syscall.EADDRNOTAVAIL, "connect", "perfgate's machine could not give a new connection a local address, most often because it ran out of local ports"},
	}
	for _, tt := range tests {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			c := newClient(t, "http://127.0.0.1:9", APIChat)
			dials := 0
			c.dial = func(_ context.Context, network, addr string) (net.Conn, error) {
				dials++
				return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError(tt.syscall, tt.errno)}
			}
			resp := c.Do(context.Background(), chatReq(), "")
			require.NotNil(t, resp.Err)
			assert.Equal(t, ErrLocal, resp.Err.Kind, "error %v", resp.Err)
			assert.ErrorIs(t, resp.Err, tt.errno)
			msg := resp.Err.Error()
			assert.True(t, strings.HasPrefix(msg, "local: "+tt.text+" ("), "Error() = %q", msg)
			assert.Contains(t, msg, tt.errno.Error())
			assert.True(t, strings.HasSuffix(msg, "This is perfgate's own limit, not the server's"), "Error() = %q", msg)
			assert.Equal(t, 1, dials, "dials: a local error is not retried")
			assert.Zero(t, resp.Retries)

			_, err := c.ListModels(context.Background())
			var e *Error
			require.True(t, errors.As(err, &e), "ListModels error %v", err)
			assert.Equal(t, ErrLocal, e.Kind)
		})
	}
	// Out of files while looking up the target's name: a *net.DNSError,
	// which keeps only the text of its cause.
	c0 := newClient(t, "http://127.0.0.1:9", APIChat)
	c0.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: syscall.EMFILE.Error(), Name: "gpu-box", Server: "127.0.0.53:53"}}
	}
	if resp := c0.Do(context.Background(), chatReq(), ""); resp.Err == nil || resp.Err.Kind != ErrLocal {
		t.Errorf("a lookup that ran out of files = %v, want a local error", resp.Err)
	}
	// Other dial errors stay connect errors.
	c := newClient(t, "http://127.0.0.1:9", APIChat)
	c.dial = func(_ context.Context, network, _ string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	resp := c.Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrConnect, resp.Err.Kind, "error %v", resp.Err)
}

// TestDoLocalEMFILE runs out of open files for real: in a child process (the
// limit is per process) it lowers RLIMIT_NOFILE and fills the table before
// sending. The unfixed client reported "connect: ... socket: too many open
// files", a server error.
func TestDoLocalEMFILE(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_NOFILE is set here the Linux way")
	}
	const childEnv = "PERFGATE_CLIENT_TEST_EMFILE_CHILD"
	if os.Getenv(childEnv) == "1" {
		emfileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDoLocalEMFILE$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child test:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestDoLocalEMFILE", "child output:\n%s", out)
}

// emfileChild is TestDoLocalEMFILE in its child process.
func emfileChild(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(chatChunk("a") + doneChunk))
	}))
	defer srv.Close()
	// No request before the limit: closing its connection would free a
	// descriptor later, asynchronously (a connection's close waits for its
	// reader), and the request below could take it and get through.
	c := newClient(t, srv.URL, APIChat)

	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = 256
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	var hogs []*os.File
	defer func() {
		for _, f := range hogs {
			f.Close()
		}
	}()
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			require.ErrorIs(t, err, syscall.EMFILE)
			break
		}
		hogs = append(hogs, f)
		require.Less(t, len(hogs), 256, "the limit did not apply")
	}

	resp := c.Do(context.Background(), chatReq(), "")
	require.NotNil(t, resp.Err)
	assert.Equal(t, ErrLocal, resp.Err.Kind, "error %v", resp.Err)
	assert.ErrorIs(t, resp.Err, syscall.EMFILE)
	assert.Contains(t, resp.Err.Error(), "local: perfgate ran out of open files (")
	assert.Contains(t, resp.Err.Error(), "raise `ulimit -n` or lower the concurrency")
	t.Log(resp.Err.Error())
}
