package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	units "github.com/docker/go-units"
)

var (
	stackKinds  = []string{StackExternal, StackProcess, StackDocker, StackKubernetes}
	engines     = []string{EngineAuto, EngineVLLM, EngineTGI, EngineSGLang, EngineLlamaCpp, EngineSim}
	pulls       = []string{"missing", "always", "never"}
	warmups     = []string{WarmupWindows, WarmupMSER5, WarmupNone}
	onUnsteady  = []string{"fail", "warn"}
	portPattern = regexp.MustCompile(`^(?:(?:\[[0-9a-fA-F:.]+\]|[0-9.]+):)?(?:[0-9]{1,5}:)?[0-9]{1,5}(?:/(?:tcp|udp|sctp))?$`)
)

// MSER5MinWindows is the fewest windows MSER-5 can judge: four batches of five,
// so that a truncation point in the first half still leaves two batches.
const MSER5MinWindows = 20

func (v *validator) oneOf(path, got string, allowed []string) bool {
	if slices.Contains(allowed, got) {
		return true
	}
	v.add(path, "must be one of %s, got %q", strings.Join(allowed, ", "), got)
	return false
}

func (v *validator) stack() {
	s := v.c.Stack
	kindOK := v.oneOf("stack.kind", s.Kind, stackKinds)
	v.oneOf("stack.engine", s.Engine, engines)
	if s.HealthPath != "none" && !strings.HasPrefix(s.HealthPath, "/") {
		v.add("stack.health_path", "must be a path starting with / (or none), got %q", s.HealthPath)
	}
	v.positiveAtMost("stack.ready_timeout", s.ReadyTimeout, MaxRunDuration)
	v.positiveAtMost("stack.external_ready_timeout", s.ExternalReadyTimeout, MaxRunDuration)
	v.durationIn("stack.health_interval", s.HealthInterval, MinHealthInterval, MaxHealthInterval)
	v.durationIn("stack.stop_grace", s.StopGrace, 0, MaxPause)
	v.intIn("stack.health_failures", s.HealthFailures, 1, MaxHealthFailures, "")
	if strings.TrimSpace(s.Log) == "" {
		v.add("stack.log", "must name a file")
	}
	if !kindOK {
		return
	}
	if s.Process != nil && s.Kind != StackProcess {
		v.add("stack.process", "only for kind process, and stack.kind is %s", s.Kind)
	}
	if s.Docker != nil && s.Kind != StackDocker {
		v.add("stack.docker", "only for kind docker, and stack.kind is %s", s.Kind)
	}
	if s.Kubernetes != nil && s.Kind != StackKubernetes {
		v.add("stack.kubernetes", "only for kind kubernetes, and stack.kind is %s", s.Kind)
	}
	switch s.Kind {
	case StackProcess:
		if s.Process == nil || len(s.Process.Command) == 0 || strings.TrimSpace(s.Process.Command[0]) == "" {
			v.add("stack.process.command", "required for kind process: the program and its arguments, e.g. [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]")
			return
		}
		v.env("stack.process.env", s.Process.Env)
		if n := len(v.c.Target.BaseURLs); n > 0 && !s.Process.UsesPort() {
			v.add("stack.process.command", "starts one replica per target.base_urls entry (%d), and each must listen at its own: put ${%s} where the command takes its port (--port ${%s}), or in stack.process.env", n, EnvReplicaPort, EnvReplicaPort)
		}
		if s.Process.Dir != "" {
			v.dir("stack.process.dir", s.Process.Dir)
		}
	case StackDocker:
		if s.Docker == nil {
			v.add("stack.docker", "required for kind docker: at least the image")
			return
		}
		v.docker(s.Docker)
	case StackKubernetes:
		if s.Kubernetes == nil {
			v.add("stack.kubernetes", "required for kind kubernetes: at least manifests and service")
			return
		}
		v.kubernetes(s.Kubernetes)
	}
}

// positiveAtMost checks a duration that must be > 0 and at most hi.
func (v *validator) positiveAtMost(path string, d, hi time.Duration) {
	if d <= 0 || d > hi {
		v.add(path, "must be > 0 and at most %s, got %s", shortDur(hi), d)
	}
}

// neverPassedWhy says why a name is refused in a stack's env.
const neverPassedWhy = "the GitHub token, the action's inputs (INPUT_*), the runner's variables (ACTIONS_*) and its command files stay with perfgate, since the stack is third-party code"

// env checks a stack's env mapping: valid names, and none that perfgate
// never gives a stack (the GitHub token, INPUT_*, ACTIONS_*: see
// NeverPassedToStack), neither as a name nor as a ${NAME} in a value.
func (v *validator) env(path string, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			v.add(path, "variable name %q is not valid (no '=' or NUL, not empty)", k)
			continue
		}
		if NeverPassedToStack(k) {
			v.add(path+"."+k, "perfgate never gives a stack %s: %s; remove it", k, neverPassedWhy)
			continue // whatever its value refers to, it goes
		}
		refs := EnvRefs(env[k])
		for i, ref := range refs {
			if NeverPassedToStack(ref) && !slices.Contains(refs[:i], ref) {
				v.add(path+"."+k, "refers to ${%s}, which perfgate never gives a stack: %s; remove the reference", ref, neverPassedWhy)
			}
		}
	}
}

func (v *validator) docker(d *DockerStack) {
	const p = "stack.docker"
	if strings.TrimSpace(d.Image) == "" {
		v.add(p+".image", "required: the image to run, e.g. vllm/vllm-openai:v0.6.3")
	}
	v.env(p+".env", d.Env)
	for i, vol := range d.Volumes {
		parts := strings.Split(vol, ":")
		ok := (len(parts) == 2 || len(parts) == 3) && parts[0] != "" && strings.HasPrefix(parts[1], "/")
		if ok && len(parts) == 3 {
			ok = parts[2] == "ro" || parts[2] == "rw"
		}
		if !ok {
			v.add(fmt.Sprintf("%s.volumes[%d]", p, i), "want host:container or host:container:ro with an absolute container path, got %q", vol)
		}
	}
	for i, port := range d.Ports {
		if !portPattern.MatchString(port) {
			v.add(fmt.Sprintf("%s.ports[%d]", p, i), "want [ip:]host_port:container_port[/tcp] or container_port, got %q", port)
		}
	}
	if d.GPUs != "" && d.GPUs != "all" {
		for _, id := range strings.Split(d.GPUs, ",") {
			if strings.TrimSpace(id) == "" {
				v.add(p+".gpus", "want all or a comma-separated device list like 0,1, got %q", d.GPUs)
				break
			}
		}
	}
	if d.ShmSize != "" {
		if n, err := units.RAMInBytes(d.ShmSize); err != nil || n <= 0 {
			v.add(p+".shm_size", "want a size like 16g or 512m, got %q", d.ShmSize)
		}
	}
	shared := d.Network == "host" || d.Network == "container" || strings.HasPrefix(d.Network, "container:")
	if d.Network == "container:" {
		v.add(p+".network", "container: needs a container id or name after it (or use container alone for perfgate's own)")
	}
	if shared && len(d.Ports) > 0 {
		v.add(p+".ports", "not with network %s: the container shares a network namespace and publishes nothing", d.Network)
	}
	v.oneOf(p+".pull", d.Pull, pulls)
}

func (v *validator) warmup() {
	w := v.c.Warmup
	if !v.oneOf("warmup.method", w.Method, warmups) {
		return
	}
	v.oneOf("warmup.on_unsteady", w.OnUnsteady, onUnsteady)
	v.durationIn("warmup.window", w.Window, MinWarmupWindow, MaxWarmupWindow)
	v.positiveAtMost("warmup.max", w.Max, MaxRunDuration)
	v.durationIn("warmup.min", w.Min, 0, MaxRunDuration)
	if w.Windows < 2 || w.Windows > MaxWarmupWindows {
		v.add("warmup.windows", "must be from 2 to %d (steadiness compares windows), got %d", MaxWarmupWindows, w.Windows)
	}
	if !(w.Tolerance > 0 && w.Tolerance <= 1) {
		v.add("warmup.tolerance", "must be in (0,1] (a fraction: 0.1 is 10%%), got %s", fmtFloat(w.Tolerance))
	}
	if w.Method == WarmupNone || w.Window <= 0 || w.Max <= 0 {
		return
	}
	if w.Min > w.Max {
		v.add("warmup.max", "is %s, shorter than warmup.min %s", w.Max, w.Min)
	}
	if w.Windows < 2 || w.Windows > MaxWarmupWindows || w.Window > MaxWarmupWindow {
		return // reported above; the product below could overflow
	}
	need := time.Duration(w.Windows) * w.Window
	if w.Method == WarmupMSER5 {
		need = MSER5MinWindows * w.Window
	}
	if w.Max < need {
		v.add("warmup.max", "is %s, but %s needs at least %s (%d windows of %s) to ever find steady state",
			w.Max, w.Method, need, need/w.Window, w.Window)
	}
}

// StackDir is the working directory of a process stack: stack.process.dir
// resolved against the config's directory, or the config's directory.
func (c *Config) StackDir() string {
	if c.Stack.Process != nil && c.Stack.Process.Dir != "" {
		return resolve(c.Dir, c.Stack.Process.Dir)
	}
	return c.Dir
}
