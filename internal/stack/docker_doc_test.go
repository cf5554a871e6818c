package stack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
)

// dockerDocYAML finds the fenced yaml blocks of a markdown file.
var dockerDocYAML = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// dockerDocWorkload finds the workload files a config names.
var dockerDocWorkload = regexp.MustCompile(`(?m)^\s*workload:\s*(\S+)`)

// TestDockerDocExamples keeps docs/docker.md honest: every perfgate.yaml in
// it (a yaml block with scenarios) loads without a problem, and its
// stack.docker section makes a create request.
func TestDockerDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "docker.md"))
	require.NoError(t, err)
	t.Setenv(ownContainerIDEnv, "perfgate-action") // for network: container
	t.Setenv("HOME", "/home/runner")
	lookup := func(string) (string, bool) { return "x", true }

	n := 0
	for _, m := range dockerDocYAML.FindAllStringSubmatch(string(doc), -1) {
		body := m[1]
		if !strings.Contains(body, "\nscenarios:") {
			continue // a workflow or a fragment
		}
		n++
		dir := t.TempDir()
		for _, w := range dockerDocWorkload.FindAllStringSubmatch(body, -1) {
			p := filepath.Join(dir, w[1])
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":8}`+"\n"), 0o644))
		}
		path := filepath.Join(dir, "perfgate.yaml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
		cfg, err := config.LoadFile(path)
		require.NoError(t, err, "example %d:\n%s", n, body)
		require.Equal(t, config.StackDocker, cfg.Stack.Kind, "example %d", n)
		require.NotNil(t, cfg.Stack.Docker)
		_, err = buildDockerCreate(cfg.Stack.Docker, "perfgate-doc", "doc", lookup)
		assert.NoError(t, err, "example %d", n)
	}
	assert.Equal(t, 2, n, "the doc's two perfgate.yaml examples")
}
