package stack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// leftover listens on a loopback port, as a server left behind by an earlier
// run would, until the test ends; it returns the address.
func leftover(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}

// freeTarget is the base URL of a loopback port that was free a moment ago.
func freeTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// A process stack is refused, before anything runs, when something answers
// at the target already: perfgate would measure it instead.
func TestProcessRefusedWhenTargetAnswers(t *testing.T) {
	addr := leftover(t)
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	logPath := filepath.Join(dir, "stack.log")
	for _, target := range []string{"http://" + addr, "http://" + addr + "/v1/", "http://localhost:" + port} {
		t.Run(target, func(t *testing.T) {
			inst, err := Start(context.Background(), processStack("sh", "-c", "touch "+marker),
				Options{LogPath: logPath, Grace: eventTimeout, Target: target})
			require.Error(t, err)
			assert.Nil(t, inst)
			var tie *TargetInUseError
			require.True(t, errors.As(err, &tie), "Start(%s) = %v, want a *TargetInUseError", target, err)
			msg := err.Error()
			assert.Contains(t, msg, "something already answers at ")
			assert.Contains(t, msg, ":"+port+", the address of target.base_url "+target)
			assert.Contains(t, msg, "a server left over from an earlier run, or another program, holds it")
			assert.Contains(t, msg, "`ss -ltnp 'sport = :"+port+"'`")
			assert.NoFileExists(t, marker, "the stack must not run")
			assert.NoFileExists(t, logPath, "nothing is started, not even a log")
		})
	}
}

func TestProcessStartsWhenTargetIsFree(t *testing.T) {
	p, err := Start(context.Background(), processStack("sh", "-c", "echo up"),
		Options{LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: eventTimeout, Target: freeTarget(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	waitExit(t, p)
	assert.Equal(t, []string{"up"}, p.Tail(1))
}

func TestCheckTargetFree(t *testing.T) {
	busy := leftover(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		target  string
		wantErr string // "" for free
	}{
		{"no target", context.Background(), "", ""},
		{"free port", context.Background(), freeTarget(t), ""},
		{"a name that does not resolve yet", context.Background(), "http://perfgate-stack.invalid:8000", ""},
		{"taken", context.Background(), "http://" + busy, "something already answers at " + busy},
		{"no host", context.Background(), "/v1", "has no host to check"},
		{"interrupted", cancelled, freeTarget(t), "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTargetFree(tt.ctx, tt.target)
			if tt.wantErr == "" {
				assert.NoError(t, err, "checkTargetFree(%q)", tt.target)
				return
			}
			require.Error(t, err, "checkTargetFree(%q)", tt.target)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// A docker stack is refused the same way, once the engine is reached and
// before anything is pulled or created.
func TestDockerRefusedWhenTargetAnswers(t *testing.T) {
	addr := leftover(t)
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	o := dockerOptions(t)
	o.Target = "http://" + addr
	d := config.DockerStack{Image: dockerTestImage, Host: e.host}
	inst, err := startDocker(context.Background(), &d, o)
	var tie *TargetInUseError
	require.ErrorAs(t, err, &tie)
	assert.Nil(t, inst)
	assert.Equal(t, addr, tie.Addr)
	assert.Empty(t, e.calls(http.MethodPost, "/containers/create"), "no container")
	assert.Empty(t, e.calls(http.MethodPost, "/images/create"), "no pull")
	_, statErr := os.Stat(o.LogPath)
	assert.ErrorIs(t, statErr, os.ErrNotExist)
}
