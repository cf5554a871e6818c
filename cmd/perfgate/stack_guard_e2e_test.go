package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/proctest"
)

// processConfig writes a perfgate.yaml whose stack is argv at addr, with
// extra YAML appended, and returns its path and the stack log's.
func processConfig(t *testing.T, addr string, argv []string, extra string) (conf, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "stack.log")
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = strconv.Quote(a)
	}
	yaml := fmt.Sprintf(`target: {base_url: "http://%s"}
stack:
  kind: process
  engine: sim
  log: %q
  stop_grace: 10s
  process:
    command: [%s]
    env: {%s: "1"}
%s`, addr, log, strings.Join(quoted, ", "), beMain, extra)
	conf = filepath.Join(dir, "perfgate.yaml")
	require.NoError(t, os.WriteFile(conf, []byte(yaml), 0o644))
	return conf, log
}

const oneScenario = `warmup: {method: none}
repetitions: 1
scenarios:
  - name: s
    synth: {requests: 100000, input: {type: fixed, value: 16}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 2}
    duration: 2m
`

// A server that already answers at the target (one left behind by a killed
// run) is refused before the stack starts: exit 3, a message that says what
// and how to find it, and the stack never ran. Before, perfgate measured the
// leftover and exited 0.
func TestRunRefusesALeftoverServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	self, err := os.Executable()
	require.NoError(t, err)
	addr := ln.Addr().String()
	marker := filepath.Join(t.TempDir(), "stack-ran")
	conf, log := processConfig(t, addr, []string{"sh", "-c", `touch "$0"; exec "$1" sim --addr "$2"`, marker, self, addr}, oneScenario)

	var stdout, stderr bytes.Buffer
	err = Main(context.Background(), []string{"run", "-c", conf, "-o", filepath.Join(filepath.Dir(conf), "result.json")}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, exit.RunFailed, exit.Code(err), "exit code; err: %v", err)
	_, port, _ := net.SplitHostPort(addr)
	assert.Contains(t, err.Error(), "something already answers at "+addr)
	assert.Contains(t, err.Error(), "ss -ltnp 'sport = :"+port+"'")
	assert.NoFileExists(t, marker, "the stack must not be started")
	assert.NoFileExists(t, log)
}

// perfgate killed with SIGKILL mid-run leaves nothing of its stack behind
// within 10 s: not the wrapper shell, not the simulator it runs, not a
// daemon the stack detached with setsid; and the port is free for the next
// run. Before the guard, only the wrapper died.
func TestKillNineLeavesNoStackBehind(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid(1) is not installed (util-linux)")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	addr := freeAddr(t)
	conf, _ := processConfig(t, addr,
		[]string{"sh", "-c", `setsid sleep 300 & "$0" "$@"; echo done`, self, "sim", "--addr", addr}, oneScenario)
	cmd := exec.Command(self, "run", "-c", conf, "-o", filepath.Join(filepath.Dir(conf), "result.json"))
	cmd.Env = append(os.Environ(), beMain+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	measuring := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.Contains(sc.Text(), "measuring") {
				signalled = true
				close(measuring)
			}
		}
	}()
	select {
	case <-measuring:
	case <-time.After(60 * time.Second):
		t.Fatal("perfgate never started measuring")
	}
	// perfgate → guard → sh → {simulator, setsid sleep}
	tree := proctest.Descendants(cmd.Process.Pid)
	comms := map[string]int{}
	for _, p := range tree {
		comms[p.Comm]++
	}
	require.Equal(t, 1, comms["sleep"], "the stack's daemon: %+v", tree)
	require.GreaterOrEqual(t, len(tree), 4, "guard, shell, simulator, daemon: %+v", tree)

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	start := time.Now()
	for {
		var alive []proctest.Proc
		for _, p := range tree {
			if proctest.Alive(p.PID) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("still alive 10s after SIGKILL of perfgate: %+v", alive)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
	}
	t.Logf("%d processes gone %s after SIGKILL of perfgate", len(tree), time.Since(start).Round(time.Millisecond))
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = c.Close()
	}
	assert.Error(t, err, "the port is free for the next run")
}
