package config

import (
	"regexp"
	"strings"
)

// A stack's environment is explicit (docs/stacks.md): a process stack gets
// a short allow-list of perfgate's variables (internal/stack decides which)
// plus what stack.process.env names, a container only what stack.docker.env
// names. In either, a value's ${NAME} is filled from perfgate's own
// environment, which is how a secret such as HF_TOKEN reaches the stack
// without being written in the file.
//
// Some variables never reach a stack, named or not: the stack is third-party
// code (an engine, a model's custom code), and these would give it the pull
// request's write token or the runner itself.

// neverPassedNames are the variables, besides the prefixes below, that
// perfgate never gives a stack: the GitHub tokens perfgate or the gh CLI may
// hold, and the runner's command files (a stack that can write $GITHUB_ENV
// or $GITHUB_OUTPUT sets the environment and outputs of later steps).
var neverPassedNames = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "GH_ENTERPRISE_TOKEN",
	"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
}

// neverPassedPrefixes are the action's inputs (INPUT_GITHUB-TOKEN is the
// token) and the runner's own variables (ACTIONS_RUNTIME_TOKEN,
// ACTIONS_ID_TOKEN_REQUEST_TOKEN and _URL, which mint OIDC tokens for the
// workflow's cloud roles).
var neverPassedPrefixes = []string{"INPUT_", "ACTIONS_"}

// NeverPassedToStack reports whether perfgate refuses to give a stack the
// environment variable name, whatever the config says. Names are compared
// without regard to case: the refusal costs nothing, and a tool that
// upper-cases names would otherwise turn an allowed one into a token.
func NeverPassedToStack(name string) bool {
	up := strings.ToUpper(name)
	for _, n := range neverPassedNames {
		if up == n {
			return true
		}
	}
	for _, p := range neverPassedPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// secretName matches variable names that look like they hold a secret.
var secretName = regexp.MustCompile(`(?i)token|key|secret|password|passwd|credential|auth`)

// LooksSecret reports whether a variable's name looks like it holds a
// secret (TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL, AUTH, in any case). Such
// values are left out of the config hash, and no prefix of the stack's
// allow-list passes them (NVIDIA_API_KEY is not inherited with NVIDIA_*).
func LooksSecret(name string) bool { return secretName.MatchString(name) }

// envRef is a reference to one of perfgate's environment variables in a
// stack env value: ${NAME}. $NAME without braces is left as it is.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// EnvRefs returns the names a stack env value refers to as ${NAME}, in
// order, repeats included.
func EnvRefs(value string) []string {
	var names []string
	for _, m := range envRef.FindAllStringSubmatch(value, -1) {
		names = append(names, m[1])
	}
	return names
}

// ExpandEnvRefs replaces each ${NAME} in value by lookup(NAME) and returns
// the result with the names lookup did not find (replaced by nothing): an
// unset variable is the caller's error to report, not an empty value.
func ExpandEnvRefs(value string, lookup func(string) (string, bool)) (string, []string) {
	var missing []string
	out := envRef.ReplaceAllStringFunc(value, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	return out, missing
}
