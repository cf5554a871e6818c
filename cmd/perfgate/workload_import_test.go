package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/workload"
)

// TestImportedExamples runs every command of examples/imports/README.md
// and checks that the committed workload it names is what it writes now,
// and loads.
func TestImportedExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "examples", "imports", "README.md"))
	require.NoError(t, err)
	cmds := regexp.MustCompile("`perfgate (workload import [^`]+) -o (examples/workloads/imported-[a-z-]+\\.jsonl)`").FindAllStringSubmatch(string(readme), -1)
	require.Len(t, cmds, 7, "one command per committed imported workload")
	for _, c := range cmds {
		t.Run(filepath.Base(c[2]), func(t *testing.T) {
			args := strings.Fields(c[1])
			for i, a := range args {
				if strings.HasPrefix(a, "examples/") {
					args[i] = filepath.Join(root, a)
				}
			}
			var stdout, stderr bytes.Buffer
			require.NoError(t, Main(context.Background(), args, &stdout, &stderr), stderr.String())
			assert.Contains(t, stderr.String(), "requests (")
			want, err := os.ReadFile(filepath.Join(root, c[2]))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, stdout.Bytes()), "%s is stale: run perfgate %s -o %s", c[2], c[1], c[2])
			_, err = workload.Parse(bytes.NewReader(want), c[2])
			assert.NoError(t, err)
		})
	}
}

func TestImportCLIErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"workload", "import", "x"}, "--from: required; want one of openai, sharegpt, mooncake, aiperf"},
		{[]string{"workload", "import", "--from", "openai", "--redact-key-file", "k", "x"}, "--redact-key-file: only with --redact"},
		// A flag that would do nothing with this format is refused.
		{[]string{"workload", "import", "--from", "openai", "--sessions", "x"}, "--sessions: only with --from sharegpt, not openai"},
		{[]string{"workload", "import", "--from", "aiperf", "--max-tokens-from", "fixed:5", "x"}, "--max-tokens-from: only with --from sharegpt, not aiperf"},
		{[]string{"workload", "import", "--from", "mooncake", "--max-output", "9", "x"}, "--max-output: only with --from sharegpt, not mooncake"},
		{[]string{"workload", "import", "--from", "sharegpt", "--think-time", "100", "x"}, "--think-time: only with --sessions (--from sharegpt)"},
		{[]string{"workload", "import", "--from", "aiperf", "--think-time", "100", "x"}, "--think-time: only with --sessions (--from sharegpt)"},
		{[]string{"workload", "import", "--from", "sharegpt", "--block-size", "16", "x"}, "--block-size: only with --from mooncake, not sharegpt"},
		{[]string{"workload", "import", "--from", "openai", "--seed", "2", "x"}, "--seed: only with --from mooncake, not openai"},
	} {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), tt.args, &stdout, &stderr)
		require.Error(t, err, "%v", tt.args)
		assert.Equal(t, tt.want, err.Error(), "Main(%v)", tt.args)
		assert.Equal(t, 2, exit.Code(err), "Main(%v) exit code", tt.args)
	}
}
