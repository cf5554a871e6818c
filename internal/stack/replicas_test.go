package stack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// startReplicaSh starts `sh -c script` once per root as a process stack of
// replicas, each writing its log beside log, and stops it when the test
// ends.
func startReplicaSh(t *testing.T, script string, roots []string) (*replicaSet, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "stack.log")
	cfg := config.Stack{Kind: config.StackProcess, Process: &config.ProcessStack{
		Command: []string{"sh", "-c", script, "replica", "${PERFGATE_PORT}"},
		Env:     map[string]string{"NAME": "replica ${PERFGATE_REPLICA}"},
	}}
	inst, err := Start(context.Background(), cfg, Options{LogPath: log, Replicas: roots, Target: roots[0]})
	require.NoError(t, err)
	rs, ok := inst.(*replicaSet)
	require.True(t, ok, "a process stack of replicas is a *replicaSet, got %T", inst)
	t.Cleanup(func() { stopProcess(t, rs) })
	return rs, log
}

// logHolds waits until the log at path holds want.
func logHolds(t *testing.T, path, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want)
	}, eventTimeout, 10*time.Millisecond, "%s never held %q", path, want)
}

// Each replica gets its port (of its root) and its number, in its command
// and its environment, and writes its own log; killing one on purpose is
// not the stack's end, and it starts again with the same values.
func TestReplicasStartKillAndRestart(t *testing.T) {
	roots := []string{"http://127.0.0.1:18001", "http://127.0.0.1:18002"}
	rs, log := startReplicaSh(t, `echo "port $1 env $PERFGATE_PORT $NAME"; exec sleep 60`, roots)
	assert.Equal(t, 2, rs.Count())
	logHolds(t, ReplicaLog(log, 0, 2), "port 18001 env 18001 replica 1")
	logHolds(t, ReplicaLog(log, 1, 2), "port 18002 env 18002 replica 2")
	assert.Equal(t, filepath.Join(filepath.Dir(log), "stack-replica2.log"), ReplicaLog(log, 1, 2))
	assert.Equal(t, log, ReplicaLog(log, 0, 1), "one replica keeps the stack's log")
	id := rs.Identity()
	assert.Equal(t, 2, id.Replicas)
	assert.Contains(t, id.Command, "${PERFGATE_PORT}", "the identity is the command as configured, one for every replica")

	ctx := t.Context()
	require.NoError(t, rs.Kill(ctx, 1))
	select {
	case <-rs.Done():
		t.Fatalf("a replica killed on purpose ended the stack: %v", rs.Err())
	default:
	}
	require.ErrorIs(t, rs.Restart(ctx, 0), ErrRunning, "a replica that runs is not restarted")
	require.NoError(t, rs.Restart(ctx, 1))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(ReplicaLog(log, 1, 2))
		return strings.Count(string(b), "port 18002 env 18002 replica 2") == 2
	}, eventTimeout, 10*time.Millisecond, "the restarted replica writes below its killed life's lines")
	require.Error(t, rs.Kill(ctx, 2), "there is no third replica")
	assert.Contains(t, rs.Replica(1).Tail(5), "port 18002 env 18002 replica 2", "a replica's own log")
	assert.Contains(t, rs.Replica(0).Tail(5), "port 18001 env 18001 replica 1")
}

// A replica that exits on its own is the stack's crash, named with its
// number and root, with its own log's last lines.
func TestReplicaThatExitsIsTheStacksCrash(t *testing.T) {
	roots := []string{"http://127.0.0.1:18011", "http://127.0.0.1:18012"}
	rs, _ := startReplicaSh(t, `echo "replica $PERFGATE_REPLICA up"; if [ "$PERFGATE_REPLICA" = 2 ]; then echo "out of memory"; exit 7; fi; exec sleep 60`, roots)
	waitExit(t, rs)
	var ee *ExitError
	require.ErrorAs(t, rs.Err(), &ee)
	assert.Equal(t, 7, ee.Code)
	assert.Contains(t, ee.What, "replica 2 of 2 (http://127.0.0.1:18012)")
	assert.Contains(t, ee.Tail, "out of memory")
	assert.Contains(t, rs.Tail(5), "replica 2 up", "the tail is the crashed replica's")
}
