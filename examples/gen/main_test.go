package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommittedOutput checks that the committed example workloads are what
// this generator writes; regenerate them with the commands in the package doc.
func TestCommittedOutput(t *testing.T) {
	for _, kind := range []string{"chat", "trace", "sessions", "agents"} {
		t.Run(kind, func(t *testing.T) {
			var out bytes.Buffer
			args := []string{"-kind", kind}
			require.NoError(t, run(&out, args))
			want, err := os.ReadFile(filepath.Join("..", "workloads", kind+".jsonl"))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, out.Bytes()),
				"examples/workloads/%s.jsonl is stale: run go run ./examples/gen -kind %s > examples/workloads/%s.jsonl", kind, kind, kind)

			var again bytes.Buffer
			require.NoError(t, run(&again, args))
			assert.Equal(t, out.Bytes(), again.Bytes(), "the generator is deterministic")
		})
	}
}

func TestUnknownKind(t *testing.T) {
	assert.EqualError(t, run(&bytes.Buffer{}, []string{"-kind", "nope"}), `unknown -kind "nope"; want chat, trace, sessions or agents`)
}
