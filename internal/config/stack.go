package config

import "time"

// Stack kinds.
const (
	StackExternal = "external" // a server perfgate does not manage: target.base_url
	StackProcess  = "process"  // a command perfgate starts in its own process group
	StackDocker   = "docker"   // a container perfgate starts through the Docker Engine API
)

// Engines perfgate knows how to ask for their identity.
const (
	EngineAuto     = "auto" // try each engine's identity endpoint in turn
	EngineVLLM     = "vllm"
	EngineTGI      = "tgi"
	EngineSGLang   = "sglang"
	EngineLlamaCpp = "llamacpp"
	EngineSim      = "sim"
)

// Stack is the serving stack under test and how perfgate owns its life: how
// it is started, how readiness and health are judged, and how it is stopped.
type Stack struct {
	// Kind is external (default), process, docker or kubernetes.
	Kind string `yaml:"kind" json:"kind"`
	// Engine names the serving engine, for its health path and its identity
	// endpoint; auto asks each known endpoint in turn.
	Engine string `yaml:"engine" json:"engine"`
	// HealthPath is polled until it answers 200 (readiness) and then during
	// warm-up and measurement (crash detection). Empty takes the engine's.
	HealthPath string `yaml:"health_path" json:"health_path"`
	// ReadyTimeout bounds start → ready: health 200 and one tiny completion.
	ReadyTimeout time.Duration `yaml:"ready_timeout" json:"ready_timeout"`
	// ExternalReadyTimeout bounds the readiness checks of an external
	// server (kind external), retried with backoff until it answers: a
	// server started just before perfgate, or one whose first answer
	// happened to fail, does not end the run at once.
	ExternalReadyTimeout time.Duration `yaml:"external_ready_timeout" json:"external_ready_timeout,omitempty"`
	// HealthInterval is the time between health polls.
	HealthInterval time.Duration `yaml:"health_interval" json:"health_interval"`
	// HealthFailures consecutive failed polls after ready mean the stack is
	// down: the run stops and fails.
	HealthFailures int `yaml:"health_failures" json:"health_failures"`
	// StopGrace is how long a stopped stack has between SIGTERM (or the
	// container stop) and SIGKILL.
	StopGrace time.Duration `yaml:"stop_grace" json:"stop_grace"`
	// Log is the file the stack's stdout and stderr go to, relative to the
	// working directory. Empty means perfgate-stack.log.
	Log        string           `yaml:"log" json:"log"`
	Process    *ProcessStack    `yaml:"process" json:"process,omitempty"`
	Docker     *DockerStack     `yaml:"docker" json:"docker,omitempty"`
	Kubernetes *KubernetesStack `yaml:"kubernetes" json:"kubernetes,omitempty"`
}

// ProcessStack is a command run on this machine.
type ProcessStack struct {
	// Command is the argv: the program (looked up in PATH) and its arguments.
	Command []string `yaml:"command" json:"command"`
	// Env is added to perfgate's own environment (and wins over it).
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Dir is the working directory, relative to the config file; empty is
	// the config file's directory.
	Dir string `yaml:"dir" json:"dir,omitempty"`
}

// DockerStack is a container started through the Docker Engine API.
type DockerStack struct {
	// Image to run, e.g. vllm/vllm-openai:v0.6.3.
	Image string `yaml:"image" json:"image"`
	// Args replace the image's CMD (the entrypoint stays).
	Args []string `yaml:"args" json:"args,omitempty"`
	// Env is the container's environment.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Volumes are bind mounts "host:container" or "host:container:ro". The
	// host path is on the Docker host (not inside perfgate's container).
	Volumes []string `yaml:"volumes" json:"volumes,omitempty"`
	// Ports publish container ports: "8000:8000" or "127.0.0.1:8000:8000".
	Ports []string `yaml:"ports" json:"ports,omitempty"`
	// GPUs is "all", or a comma-separated device list ("0,1", or GPU UUIDs);
	// empty gives the container no GPU. Needs the NVIDIA container toolkit.
	GPUs string `yaml:"gpus" json:"gpus,omitempty"`
	// ShmSize is /dev/shm's size, "16g" or "512m"; empty is Docker's 64m.
	ShmSize string `yaml:"shm_size" json:"shm_size,omitempty"`
	// Network is empty (Docker's default bridge), "host", "container"
	// (share perfgate's own network namespace when perfgate runs in a
	// container: the server is then on localhost), "container:<id>", or the
	// name of a network (a job's services network).
	Network string `yaml:"network" json:"network,omitempty"`
	// Pull is missing (default: pull when the image is not present), always
	// or never.
	Pull string `yaml:"pull" json:"pull"`
	// Host is the Engine API address; empty is $DOCKER_HOST, else
	// unix:///var/run/docker.sock.
	Host string `yaml:"host" json:"host,omitempty"`
}

// Warm-up methods.
const (
	WarmupWindows = "windows" // the last N windows agree within a tolerance
	WarmupMSER5   = "mser5"   // MSER-5 truncation point in the first half of the series
	WarmupNone    = "none"    // no warm-up: measure at once
)

// Warmup says how a scenario's stack is brought to steady state before it is
// measured. Warm-up sends the scenario's own load shape and is never measured.
type Warmup struct {
	// Method is windows (default), mser5 or none.
	Method string `yaml:"method" json:"method"`
	// Window is the length of one window of the series (throughput and
	// median TTFT of the requests that end in it).
	Window time.Duration `yaml:"window" json:"window"`
	// Windows is how many consecutive windows must agree (method windows).
	Windows int `yaml:"windows" json:"windows"`
	// Tolerance is how far each of those windows may be from their mean, as a
	// fraction (0.1 = 10%).
	Tolerance float64 `yaml:"tolerance" json:"tolerance"`
	// Min is the shortest warm-up, steady or not.
	Min time.Duration `yaml:"min" json:"min"`
	// Max is the longest; past it without steady state the run fails, or
	// warns when OnUnsteady is warn.
	Max time.Duration `yaml:"max" json:"max"`
	// OnUnsteady is fail (default) or warn.
	OnUnsteady string `yaml:"on_unsteady" json:"on_unsteady"`
}
