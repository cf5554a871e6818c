package stack

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/config"
)

// A stack is third-party code: an engine, a model's custom code. On a CI
// runner perfgate's environment holds the pull request's write token
// (GITHUB_TOKEN, INPUT_GITHUB-TOKEN) and the runner's own (ACTIONS_*), so a
// process stack does not inherit perfgate's environment: it gets the
// variables below, when perfgate has them, and what stack.process.env names.
// A container gets only what stack.docker.env names. docs/stacks.md lists
// them; keep the two in step.

// inheritedNames are the variables a process stack gets from perfgate's
// environment without being named: what a program needs to run at all
// (PATH, HOME, the user, the locale, the time zone, the temporary
// directory), the shared libraries and GPUs it may use, and where the
// Hugging Face cache lies, so that a runner's cache of model weights is used
// rather than downloaded again. HF_TOKEN is not among them: a secret is named
// in the config (HF_TOKEN: "${HF_TOKEN}"), not inherited.
var inheritedNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR",
	"LD_LIBRARY_PATH",
	"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
	"HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "XDG_CACHE_HOME",
}

// inheritedPrefixes are families of variables a process stack gets too:
// the locale's categories (LC_ALL, LC_CTYPE...), and the settings of CUDA and
// of NVIDIA's container runtime (CUDA_VISIBLE_DEVICES, CUDA_HOME,
// NVIDIA_VISIBLE_DEVICES), which pick the GPUs a runner gives the job.
// A name in these families that looks secret (NVIDIA_API_KEY) is not.
var inheritedPrefixes = []string{"LC_", "CUDA_", "NVIDIA_"}

// inherited reports whether a process stack gets perfgate's variable name
// without the config naming it.
func inherited(name string) bool {
	if config.NeverPassedToStack(name) {
		return false
	}
	if slices.Contains(inheritedNames, name) {
		return true
	}
	for _, p := range inheritedPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return !config.LooksSecret(name)
		}
	}
	return false
}

// processEnv is a process stack's environment: the variables of environ
// (perfgate's, as os.Environ gives it) that it inherits, then those of
// configured (stack.process.env), which win, with ${NAME} in their values
// filled by lookup (os.LookupEnv outside tests).
func processEnv(environ []string, configured map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	named, err := configuredEnv("stack.process.env", configured, lookup)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && inherited(k) {
			env = append(env, kv)
		}
	}
	return dedupEnv(append(env, named...)), nil
}

// configuredEnv renders a stack's env mapping (path is its field path,
// stack.process.env or stack.docker.env) as KEY=VALUE, sorted by key so that
// a start does not change from run to run, with each ${NAME} in a value
// replaced by lookup(NAME). A reference to a variable that is not set is an
// error, not an empty value; so is a name, or a reference to one, that
// perfgate never gives a stack (config.NeverPassedToStack): the config's
// validation refuses those first, and this is the last line should a stack
// be started from a config that was not validated.
func configuredEnv(path string, env map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	keys := slices.Sorted(maps.Keys(env))
	out := make([]string, 0, len(keys))
	var missing []string
	for _, k := range keys {
		if config.NeverPassedToStack(k) {
			return nil, fmt.Errorf("%s.%s: perfgate never gives a stack %s", path, k, k)
		}
		for _, ref := range config.EnvRefs(env[k]) {
			if config.NeverPassedToStack(ref) {
				return nil, fmt.Errorf("%s.%s: refers to ${%s}, which perfgate never gives a stack", path, k, ref)
			}
		}
		v, unset := config.ExpandEnvRefs(env[k], lookup)
		for _, name := range unset {
			missing = append(missing, fmt.Sprintf("%s (in %s)", name, k))
		}
		out = append(out, k+"="+v)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s refers to variables that are not set in perfgate's environment: %s",
			path, strings.Join(missing, ", "))
	}
	return out, nil
}
