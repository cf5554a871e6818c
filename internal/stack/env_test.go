package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInherited(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"PATH", true},
		{"HOME", true},
		{"LC_ALL", true},
		{"LC_", false}, // a prefix alone is no variable of the family
		{"CUDA_VISIBLE_DEVICES", true},
		{"NVIDIA_VISIBLE_DEVICES", true},
		{"NVIDIA_API_KEY", false}, // in a family, but secret-looking
		{"CUDA_AUTH_TOKEN", false},
		{"HF_HOME", true},
		{"HF_TOKEN", false}, // named in the config when wanted
		{"HUGGING_FACE_HUB_TOKEN", false},
		{"GITHUB_TOKEN", false},
		{"INPUT_GITHUB-TOKEN", false},
		{"ACTIONS_RUNTIME_TOKEN", false},
		{"GITHUB_ENV", false},
		{"HTTPS_PROXY", false},
		{"PYTHONPATH", false},
		{"path", false}, // names are case-sensitive
		{"", false},
	}
	for _, tt := range tests {
		if got := inherited(tt.name); got != tt.want {
			t.Errorf("inherited(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestProcessEnv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"HF_TOKEN": "hf_s", "GITHUB_TOKEN": "ghs_s"}[k]
		return v, ok
	}
	environ := []string{"PATH=/usr/bin", "GITHUB_TOKEN=ghs_s", "INPUT_GITHUB-TOKEN=ghs_s", "HF_TOKEN=hf_s",
		"TZ=UTC", "ODD", "LC_ALL=C", "ACTIONS_RUNTIME_TOKEN=r"}
	got, err := processEnv(environ, map[string]string{"TZ": "Europe/Paris", "HF_TOKEN": "${HF_TOKEN}", "B": "$HF_TOKEN"}, lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"PATH=/usr/bin", "LC_ALL=C", "B=$HF_TOKEN", "HF_TOKEN=hf_s", "TZ=Europe/Paris"}, got,
		"processEnv: the allow-listed variables, then the config's, which win")

	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITHUB_TOKEN": "x"}, "stack.process.env.GITHUB_TOKEN: perfgate never gives a stack GITHUB_TOKEN"},
		{map[string]string{"gh_token": "x"}, "stack.process.env.gh_token: perfgate never gives a stack gh_token"},
		{map[string]string{"T": "${GITHUB_TOKEN}"}, "stack.process.env.T: refers to ${GITHUB_TOKEN}, which perfgate never gives a stack"},
		{map[string]string{"T": "${NOPE}"}, "stack.process.env refers to variables that are not set in perfgate's environment: NOPE (in T)"},
	} {
		_, err := processEnv(environ, tt.env, lookup)
		if err == nil || err.Error() != tt.want {
			t.Errorf("processEnv(%v) error = %v, want %q", tt.env, err, tt.want)
		}
	}
}

// TestStackEnvDocumented keeps docs/stacks.md honest: it names every
// variable and family a process stack inherits, and every one perfgate
// never passes.
func TestStackEnvDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "stacks.md"))
	require.NoError(t, err)
	for _, n := range inheritedNames {
		assert.Contains(t, string(doc), "`"+n+"`", "docs/stacks.md does not name inherited variable %s", n)
	}
	for _, p := range inheritedPrefixes {
		assert.Contains(t, string(doc), "`"+p+"*`", "docs/stacks.md does not name inherited family %s*", p)
	}
	for _, n := range []string{"GITHUB_TOKEN", "GH_TOKEN", "INPUT_*", "ACTIONS_*", "GITHUB_ENV", "GITHUB_OUTPUT"} {
		assert.Contains(t, string(doc), "`"+n+"`", "docs/stacks.md does not name %s among what is never passed", n)
	}
	assert.True(t, strings.Contains(string(doc), "${HF_TOKEN}"), "docs/stacks.md shows how to pass HF_TOKEN")
}
