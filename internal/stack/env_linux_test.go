package stack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documentedInherited is the allow-list as docs/stacks.md states it, written
// out again here so that a change to env.go that the docs do not follow
// fails a test.
var (
	documentedInherited = []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
		"LD_LIBRARY_PATH", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
		"HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "XDG_CACHE_HOME",
	}
	documentedInheritedPrefixes = []string{"LC_", "CUDA_", "NVIDIA_"}
)

// parseEnvLines reads the lines of the stack's log that start with prefix
// and a space, each NAME=VALUE, into a map.
func parseEnvLines(t *testing.T, log []string, prefix string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, l := range log {
		kv, ok := strings.CutPrefix(l, prefix+" ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		require.True(t, ok, "line %q is not NAME=VALUE", l)
		env[k] = v
	}
	require.NotEmpty(t, env, "no %q lines in the stack's log: %q", prefix, log)
	return env
}

// A process stack's environment is explicit: with the GitHub token, the
// action's inputs and the runner's tokens in perfgate's environment, the
// stack gets none of them, nor any other variable off the allow-list; it gets
// the allow-listed ones and exactly what stack.process.env names, a ${NAME}
// filled from perfgate's environment. The stack guard, perfgate's binary
// started again between perfgate and the stack, holds none of them either:
// the stack runs as the same user and can read its parent's
// /proc/<pid>/environ, which is how the script below reads it. On the code
// before this test, the stack inherited perfgate's whole environment.
func TestProcessStackEnvIsExplicit(t *testing.T) {
	never := map[string]string{
		"GITHUB_TOKEN":                   "ghs_secret",
		"INPUT_GITHUB-TOKEN":             "ghs_input",
		"GH_TOKEN":                       "gho_cli",
		"ACTIONS_RUNTIME_TOKEN":          "runtime",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
		"ACTIONS_ID_TOKEN_REQUEST_URL":   "https://oidc.example/token",
		"GITHUB_OUTPUT":                  "/tmp/runner/output",
	}
	offList := map[string]string{
		"HF_TOKEN":                    "hf_secret", // passed below only because the config names it
		"NVIDIA_API_KEY":              "nvapi",     // a prefix of the list, but a secret-looking name
		"PERFGATE_TEST_NOT_INHERITED": "x",
		"HTTPS_PROXY":                 "http://user:pw@proxy:3128",
	}
	onList := map[string]string{
		"HOME":                   "/home/runner",
		"LANG":                   "C.UTF-8",
		"LC_ALL":                 "C.UTF-8",
		"TZ":                     "UTC",
		"CUDA_VISIBLE_DEVICES":   "0,1",
		"NVIDIA_VISIBLE_DEVICES": "all",
		"HF_HOME":                "/srv/hf",
	}
	for _, vars := range []map[string]string{never, offList, onList} {
		for k, v := range vars {
			t.Setenv(k, v)
		}
	}
	configured := map[string]string{"HF_TOKEN": "Bearer ${HF_TOKEN}", "VLLM_LOGGING_LEVEL": "DEBUG", "TZ": "Europe/Paris"}

	logPath := filepath.Join(t.TempDir(), "stack.log")
	p := startSh(t, `tr '\0' '\n' < /proc/$$/environ | sed 's/^/stack /'
tr '\0' '\n' < /proc/$PPID/environ | sed 's/^/guard /'
echo "parent $PPID"`, configured, Options{LogPath: logPath, Grace: time.Second})
	waitExit(t, p)
	_, err := stopProcess(t, p)
	require.NoError(t, err)
	data, err := os.ReadFile(logPath)
	require.NoError(t, err)
	log := strings.Split(string(data), "\n")

	stackEnv := parseEnvLines(t, log, "stack")
	for k := range never {
		if _, ok := stackEnv[k]; ok {
			t.Errorf("the stack's environment has %s, which perfgate never passes", k)
		}
	}
	for _, k := range []string{"NVIDIA_API_KEY", "PERFGATE_TEST_NOT_INHERITED", "HTTPS_PROXY"} {
		if _, ok := stackEnv[k]; ok {
			t.Errorf("the stack's environment has %s, which is not on the allow-list", k)
		}
	}
	for k, v := range onList {
		if _, named := configured[k]; !named {
			assert.Equal(t, v, stackEnv[k], "the stack's %s", k)
		}
	}
	assert.Equal(t, os.Getenv("PATH"), stackEnv["PATH"], "the stack's PATH")
	assert.Equal(t, "Bearer hf_secret", stackEnv["HF_TOKEN"], "HF_TOKEN, named with ${HF_TOKEN}")
	assert.Equal(t, "DEBUG", stackEnv["VLLM_LOGGING_LEVEL"])
	assert.Equal(t, "Europe/Paris", stackEnv["TZ"], "the config's TZ wins over perfgate's")
	for k := range stackEnv {
		if _, named := configured[k]; !named && !documentedAllowed(k) {
			t.Errorf("the stack's environment has %s, neither allow-listed nor named by the config", k)
		}
	}

	require.Contains(t, log, fmt.Sprintf("parent %d", p.sys.guard.Process.Pid), "the script's parent is the stack guard")
	guardVars := parseEnvLines(t, log, "guard")
	for k := range never {
		if _, ok := guardVars[k]; ok {
			t.Errorf("the stack guard's environment has %s, which perfgate never passes", k)
		}
	}
	for k, v := range guardVars {
		if strings.HasPrefix(k, guardEnv) {
			continue // the guard's own, removed before the stack starts
		}
		assert.Equal(t, stackEnv[k], v, "the guard's %s is not what the stack has", k)
	}
}

// documentedAllowed says whether docs/stacks.md lets a process stack inherit
// name.
func documentedAllowed(name string) bool {
	for _, n := range documentedInherited {
		if name == n {
			return true
		}
	}
	for _, p := range documentedInheritedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
