package stack

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fakeExecID = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0"

// fakeExecEngine is the part of the Docker Engine API that Exec uses: exec
// create, start (a hijacked stream of multiplexed frames) and inspect. The
// fake in docker_test.go serves one container's life and takes no extra
// routes, so this one stands apart.
type fakeExecEngine struct {
	srv *httptest.Server

	frames      []dockerLogFrame // what the command writes
	exitCode    int
	running     int           // how many inspects report it still running
	createError int           // non-zero: create fails with this status
	hang        chan struct{} // non-nil: the stream is closed when the start arrives, then hangs

	mu       sync.Mutex
	create   container.ExecCreateRequest
	inspects int
}

func newFakeExecEngine(t *testing.T, e *fakeExecEngine) *dockerInstance {
	t.Helper()
	e.srv = httptest.NewServer(e)
	t.Cleanup(e.srv.Close)
	cli, err := newDockerClient("tcp://" + e.srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	return &dockerInstance{cli: cli, id: fakeContainerID, name: "perfgate-run1"}
}

func (e *fakeExecEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := dockerAPIVersionPrefix.ReplaceAllString(r.URL.Path, "")
	switch r.Method + " " + p {
	case "GET /_ping", "HEAD /_ping":
		w.Header().Set("API-Version", "1.47")
		_, _ = io.WriteString(w, "OK")
	case "POST /containers/" + fakeContainerID + "/exec":
		if e.createError != 0 {
			dockerJSONError(w, e.createError, "container "+fakeContainerID+" is not running")
			return
		}
		e.mu.Lock()
		err := json.NewDecoder(r.Body).Decode(&e.create)
		e.mu.Unlock()
		if err != nil {
			dockerJSONError(w, http.StatusBadRequest, err.Error())
			return
		}
		dockerWriteJSON(w, http.StatusCreated, map[string]string{"Id": fakeExecID})
	case "POST /exec/" + fakeExecID + "/start":
		e.start(w, r)
	case "GET /exec/" + fakeExecID + "/json":
		e.mu.Lock()
		e.inspects++
		running := e.inspects <= e.running
		e.mu.Unlock()
		dockerWriteJSON(w, http.StatusOK, map[string]any{
			"ID": fakeExecID, "ContainerID": fakeContainerID, "Running": running, "ExitCode": e.exitCode,
		})
	default:
		dockerJSONError(w, http.StatusNotFound, "page not found: "+r.Method+" "+p)
	}
}

// start upgrades the connection as the engine does and writes the frames,
// then ends the stream (half-closes it: a full close with the client's bytes
// unread would reset it) and waits for the client to hang up.
func (e *fakeExecEngine) start(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = io.WriteString(buf, "HTTP/1.1 101 UPGRADED\r\n"+
		"Content-Type: application/vnd.docker.multiplexed-stream\r\n"+
		"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
	for _, f := range e.frames {
		writeDockerFrame(buf, f.stream, f.text)
	}
	_ = buf.Flush()
	if e.hang != nil {
		close(e.hang) // the command "runs on": the stream stays open
	} else if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, conn)
}

func TestExec(t *testing.T) {
	tests := []struct {
		name    string
		engine  *fakeExecEngine
		want    string
		wantErr string
	}{{
		name: "stdout and stderr apart",
		engine: &fakeExecEngine{frames: []dockerLogFrame{
			{1, "0, NVIDIA H100 80GB HBM3, GPU-1, 40000\n"},
			{2, "a warning\n"},
			{1, "1, NVIDIA H100 80GB HBM3, GPU-2, 1000\n"},
		}},
		want: "0, NVIDIA H100 80GB HBM3, GPU-1, 40000\n1, NVIDIA H100 80GB HBM3, GPU-2, 1000\n",
	}, {
		name:   "running for a moment after the stream ends",
		engine: &fakeExecEngine{frames: []dockerLogFrame{{1, "ok\n"}}, running: 2},
		want:   "ok\n",
	}, {
		name: "non-zero exit names the code and stderr's first line",
		engine: &fakeExecEngine{exitCode: 9, frames: []dockerLogFrame{
			{1, "partial\n"},
			{2, "\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nMake sure...\n"},
		}},
		wantErr: "exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
	}, {
		name:    "non-zero exit with only stdout",
		engine:  &fakeExecEngine{exitCode: 127, frames: []dockerLogFrame{{1, "OCI runtime exec failed: exec: \"nvidia-smi\": executable file not found in $PATH\n"}}},
		wantErr: `exited with code 127: OCI runtime exec failed: exec: "nvidia-smi": executable file not found in $PATH`,
	}, {
		name:    "non-zero exit, silent",
		engine:  &fakeExecEngine{exitCode: 1},
		wantErr: "exited with code 1",
	}, {
		name: "output past the limit is refused, not held",
		engine: &fakeExecEngine{frames: []dockerLogFrame{
			{1, strings.Repeat("x", execOutputLimit/2)}, {1, strings.Repeat("x", execOutputLimit/2)}, {1, "one byte too many"},
		}},
		wantErr: "the command's standard output is larger than 4 MiB",
	}, {
		name:    "container not running",
		engine:  &fakeExecEngine{createError: http.StatusConflict},
		wantErr: "docker exec: create: Error response from daemon: container " + fakeContainerID + " is not running",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := newFakeExecEngine(t, tt.engine)
			argv := []string{"nvidia-smi", "--query-gpu=index", "--format=csv,noheader,nounits"}
			out, err := inst.Exec(context.Background(), argv)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			tt.engine.mu.Lock()
			defer tt.engine.mu.Unlock()
			assert.Equal(t, argv, tt.engine.create.Cmd)
			assert.True(t, tt.engine.create.AttachStdout, "AttachStdout")
			assert.True(t, tt.engine.create.AttachStderr, "AttachStderr")
			assert.False(t, tt.engine.create.AttachStdin, "AttachStdin")
			assert.False(t, tt.engine.create.Tty, "Tty")
			assert.Equal(t, tt.engine.running+1, tt.engine.inspects, "inspects")
		})
	}
}

func TestExecCancelled(t *testing.T) {
	e := &fakeExecEngine{frames: []dockerLogFrame{{1, "0, 40000\n"}}, hang: make(chan struct{})}
	inst := newFakeExecEngine(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := inst.Exec(ctx, []string{"nvidia-smi"})
		done <- err
	}()
	<-e.hang // the stream is open and the command "runs on"
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(dockerFailBound):
		t.Fatal("Exec did not return after its context was cancelled")
	}
}

func TestExecNoCommand(t *testing.T) {
	inst := newFakeExecEngine(t, &fakeExecEngine{})
	_, err := inst.Exec(context.Background(), nil)
	require.EqualError(t, err, "docker exec: no command to run")
}

func TestExecWhere(t *testing.T) {
	inst := &dockerInstance{name: "perfgate-1a2b"}
	if got, want := inst.ExecWhere(), "container perfgate-1a2b"; got != want {
		t.Errorf("ExecWhere() = %q, want %q", got, want)
	}
}
