package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	units "github.com/docker/go-units"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// Labels perfgate puts on every container it creates, beside its owner
// (dockerLabelOwner), so that a leftover one (perfgate killed with SIGKILL)
// is found and removed by the next run, or by hand:
//
//	docker rm -f $(docker ps -aq --filter label=io.perfgate.managed=true)
const (
	dockerLabelManaged = "io.perfgate.managed"
	dockerLabelRun     = "io.perfgate.run"
)

// containerNamePrefix starts every container's name; the run ID ends it.
const containerNamePrefix = "perfgate-"

// dockerRunID is what a run ID may hold to end a container's name.
var dockerRunID = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// dockerStackAlias is the DNS name a stack container answers to on a named
// network (stack.docker.network: <name>): the container's own name changes
// with every run, so target.base_url could not name it.
const dockerStackAlias = "perfgate-stack"

// ownContainerIDEnv, when set, is the ID (or name) of the container perfgate
// itself runs in, for network: container; it overrides detection.
const ownContainerIDEnv = "PERFGATE_CONTAINER_ID"

// Where perfgate looks for its own container's ID. Variables rather than
// constants so that tests can point them at testdata.
var (
	mountinfoPath = "/proc/self/mountinfo"
	cgroupPath    = "/proc/self/cgroup"
)

const (
	// dockerPingTimeout bounds the first contact with the engine, so that a
	// tcp:// host that drops packets fails the start instead of hanging it.
	dockerPingTimeout = 30 * time.Second
	// dockerCleanupSlack is added to the stop grace to bound a cleanup (container
	// stop, then removal), which must run even when perfgate was interrupted.
	dockerCleanupSlack = 30 * time.Second
	// dockerLogDrain bounds how long the exit watch waits for the log
	// stream to end after the container has, so that the error's tail has
	// the container's last lines.
	dockerLogDrain = 5 * time.Second
	// dockerWaitRetryMax caps the back-off between attempts to re-establish a
	// broken container wait (the engine restarted, the connection dropped).
	dockerWaitRetryMax = 10 * time.Second
)

// dockerInstance is a container started through the Docker Engine API. Two
// goroutines run while it lives: one follows the container's log into the
// sink, one waits for the container to stop and then closes done.
type dockerInstance struct {
	cli      *client.Client
	id       string // the container's ID, as the engine gave it
	name     string // perfgate-<run id>
	what     string // names it in an ExitError
	grace    time.Duration
	identity result.Stack
	sink     *logSink

	// cancel ends the log follow and the exit watch; Stop calls it once the
	// container is gone.
	cancel    context.CancelFunc
	logsDone  chan struct{} // closed when the log goroutine returns
	exitState               // ended by the exit watch

	// stopOnce runs the stop once; callers that arrive while it runs wait
	// in Do for it to finish, then read stopErr.
	stopOnce sync.Once
	stopErr  error
}

// startDocker starts a container through the Docker Engine API: it builds the
// create request from d (so that a config mistake fails before a long pull),
// reaches the engine, removes the containers of earlier perfgate runs whose
// perfgate is gone, refuses when something already answers at o.Target,
// makes sure the image is there as d.Pull says, creates
// and starts the container, and then follows its log and waits for its exit.
// Whatever fails after the container was created, the container is removed
// before the error is returned.
func startDocker(ctx context.Context, d *config.DockerStack, o Options) (Instance, error) {
	if !dockerRunID.MatchString(o.RunID) {
		return nil, fmt.Errorf("docker: run ID %q cannot name a container (want letters, digits, _ . -)", o.RunID)
	}
	name := containerNamePrefix + o.RunID
	spec, err := buildDockerCreate(d, name, o.RunID, os.LookupEnv)
	if err != nil {
		return nil, err
	}

	cli, err := newDockerClient(d.Host)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = cli.Close()
		}
	}()
	if err := dockerPing(ctx, cli); err != nil {
		return nil, err
	}
	owner := dockerOwner(ctx, cli)
	removeOrphans(ctx, cli, owner, o)
	if owner != "" {
		spec.Config.Labels[dockerLabelOwner] = owner
	}
	if err := checkTargetFree(ctx, o.Target); err != nil {
		return nil, err
	}
	if err := ensureImage(ctx, cli, d.Image, d.Pull); err != nil {
		return nil, err
	}

	sink, err := newLogSink(o.LogPath)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	defer func() {
		if !ok {
			_ = sink.Close()
		}
	}()

	created, err := cli.ContainerCreate(ctx, spec)
	if err != nil {
		err = fmt.Errorf("docker: create container from %s: %w%s", d.Image, err, dockerCreateHint(d, err))
		if ctx.Err() != nil {
			// Interrupted mid-request: the engine may have created the
			// container without perfgate learning its ID; remove it by name.
			return nil, removeContainerAfterFailure(ctx, cli, name, name, o.Grace, err)
		}
		return nil, err
	}
	id := created.ID
	if _, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		err = fmt.Errorf("docker: start container %s from %s: %w%s", name, d.Image, err, dockerStartHint(d, err))
		return nil, removeContainerAfterFailure(ctx, cli, id, name, o.Grace, err)
	}

	imageID := ""
	if info, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); err == nil {
		imageID = info.Container.Image
	} else if img, ierr := cli.ImageInspect(ctx, d.Image); ierr == nil {
		imageID = img.ID
	}

	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inst := &dockerInstance{
		cli:   cli,
		id:    id,
		name:  name,
		what:  fmt.Sprintf("container %s (%s)", name, d.Image),
		grace: o.Grace,
		identity: result.Stack{
			Kind:    config.StackDocker,
			Image:   d.Image,
			ImageID: imageID,
			Args:    slices.Clone(d.Args),
		},
		sink:      sink,
		cancel:    cancel,
		logsDone:  make(chan struct{}),
		exitState: newExitState(),
	}
	go inst.followLogs(bg)
	go inst.watch(bg)
	ok = true
	return inst, nil
}

// Tail returns up to the last n lines of the container's output.
func (i *dockerInstance) Tail(n int) []string { return i.sink.Tail(n) }

// Identity is the image as configured, the image ID the engine resolved it
// to, and the arguments.
func (i *dockerInstance) Identity() result.Stack { return i.identity }

// Stop stops the container (the image's stop signal, then SIGKILL after the
// grace), lets its log stream end, removes it with its anonymous volumes, and
// waits for the log and exit goroutines. It runs once; a second caller waits
// for the first and gets its error. The cleanup does not use ctx's
// cancellation (an interrupted perfgate must still remove its container) but
// is bounded by grace + 30s.
func (i *dockerInstance) Stop(ctx context.Context) error {
	i.stopOnce.Do(func() { i.stopErr = i.stop(ctx) })
	return i.stopErr
}

func (i *dockerInstance) stop(ctx context.Context) error {
	cctx, cancel := dockerCleanupContext(ctx, i.grace)
	defer cancel()

	var errs []error
	timeout := dockerStopTimeout(i.grace)
	if _, err := i.cli.ContainerStop(cctx, i.id, client.ContainerStopOptions{Timeout: &timeout}); err != nil && !cerrdefs.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("stop: %w", err))
	} else {
		// The container has stopped: let the exit watch see it and the log
		// stream deliver its last lines (or, if the follow had not begun,
		// be read whole) before the removal takes the log with it. The
		// watch closes done only after the log stream has ended.
		drain := time.NewTimer(dockerLogDrain)
		select {
		case <-i.done:
		case <-drain.C:
		case <-cctx.Done():
		}
		drain.Stop()
	}
	removed := true
	if _, err := i.cli.ContainerRemove(cctx, i.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
		removed = false
		errs = append(errs, fmt.Errorf("remove: %w", err))
	}

	i.cancel()
	<-i.logsDone
	if err := i.sink.Close(); err != nil {
		errs = append(errs, err)
	}
	<-i.done
	_ = i.cli.Close()

	if len(errs) == 0 {
		return nil
	}
	err := fmt.Errorf("docker: container %s: %w", i.name, errors.Join(errs...))
	if !removed {
		err = fmt.Errorf("%w\n(it may be left behind: docker rm -f %s)", err, i.name)
	}
	return err
}

// followLogs copies the container's stdout and stderr, demultiplexed, into
// the sink until the container stops or Stop cancels ctx.
func (i *dockerInstance) followLogs(ctx context.Context) {
	defer close(i.logsDone)
	rc, err := i.cli.ContainerLogs(ctx, i.id, client.ContainerLogsOptions{
		ShowStdout: true,
		ShowStderr: true,
		Follow:     true,
	})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(i.sink, "perfgate: cannot follow the container's log: %v\n", err)
		}
		return
	}
	defer rc.Close()
	if _, err := stdcopy.StdCopy(i.sink, i.sink, rc); err != nil && ctx.Err() == nil {
		fmt.Fprintf(i.sink, "\nperfgate: the container's log broke off: %v\n", err)
	}
}

// watch waits for the container to stop, then records how it ended, which
// closes Done. ctx is cancelled by Stop once the container is removed.
func (i *dockerInstance) watch(ctx context.Context) {
	code, oom := i.waitExit(ctx)
	// The log stream ends shortly after the container does; wait for it so
	// that the tail carries the container's last words.
	drain := time.NewTimer(dockerLogDrain)
	select {
	case <-i.logsDone:
	case <-ctx.Done():
	case <-drain.C:
	}
	drain.Stop()
	i.end(&ExitError{What: i.what, Code: code, OOMKilled: oom, Tail: i.sink.Tail(TailLines)})
}

// waitExit blocks until the container is not running and returns its exit
// code and whether it was OOM-killed, as the engine recorded them. A wait
// that breaks (the engine restarted, the connection dropped) is retried with
// back-off while the container still runs: a lost watch must not read as a
// crash, and health polls still see a server that really died. It returns
// (-1, false) when ctx is cancelled or the container vanished.
func (i *dockerInstance) waitExit(ctx context.Context) (int, bool) {
	backoff := 250 * time.Millisecond
	for {
		w := i.cli.ContainerWait(ctx, i.id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		select {
		case r := <-w.Result:
			code, oom := int(r.StatusCode), false
			if info, err := i.cli.ContainerInspect(ctx, i.id, client.ContainerInspectOptions{}); err == nil && info.Container.State != nil {
				code, oom = info.Container.State.ExitCode, info.Container.State.OOMKilled
			}
			return code, oom
		case <-w.Error:
		}
		if ctx.Err() != nil {
			return -1, false
		}
		info, err := i.cli.ContainerInspect(ctx, i.id, client.ContainerInspectOptions{})
		switch {
		case cerrdefs.IsNotFound(err):
			return -1, false
		case err == nil && info.Container.State != nil && !info.Container.State.Running:
			return info.Container.State.ExitCode, info.Container.State.OOMKilled
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return -1, false
		case <-t.C:
		}
		backoff = min(2*backoff, dockerWaitRetryMax)
	}
}

// newDockerClient makes an Engine API client for host, or, when host is
// empty, for $DOCKER_HOST, else unix:///var/run/docker.sock. The other
// DOCKER_* variables (TLS, API version) apply as they do to the docker CLI.
// The API version is negotiated with the engine on first contact.
func newDockerClient(host string) (*client.Client, error) {
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker: engine client for %q: %w", dockerHostOrDefault(host), err)
	}
	return cli, nil
}

// dockerHostOrDefault is the address a client for host talks to, for
// messages.
func dockerHostOrDefault(host string) string {
	switch {
	case host != "":
		return host
	case os.Getenv(client.EnvOverrideHost) != "":
		return os.Getenv(client.EnvOverrideHost)
	default:
		return client.DefaultDockerHost
	}
}

// dockerPing makes first contact with the engine and negotiates the API version;
// an unreachable engine is reported with the address tried and what to check.
func dockerPing(ctx context.Context, cli *client.Client) error {
	pctx, cancel := context.WithTimeout(ctx, dockerPingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return fmt.Errorf("docker: cannot reach the Docker engine at %s: %w\n"+
			"(is the Docker socket mounted into perfgate's container, -v /var/run/docker.sock:/var/run/docker.sock, "+
			"or is DOCKER_HOST / stack.docker.host the engine's address?)", cli.DaemonHost(), err)
	}
	return nil
}

// ensureImage makes sure the engine has image, as policy says: missing (or
// empty) pulls it when the engine lacks it, always pulls it, never only checks.
func ensureImage(ctx context.Context, cli *client.Client, image, policy string) error {
	switch policy {
	case "always":
		return dockerPull(ctx, cli, image)
	case "", "missing", "never":
	default:
		return fmt.Errorf("docker: unknown pull policy %q (want missing, always or never)", policy)
	}
	_, err := cli.ImageInspect(ctx, image)
	switch {
	case err == nil:
		return nil
	case !cerrdefs.IsNotFound(err):
		return fmt.Errorf("docker: inspect image %s: %w", image, err)
	case policy == "never":
		return fmt.Errorf("docker: image %s is not on the Docker host, and stack.docker.pull is never: "+
			"pull it first (docker pull %s) or set pull: missing", image, image)
	default:
		return dockerPull(ctx, cli, image)
	}
}

// dockerPullMessage is one line of the pull progress stream; only its error
// matters. The engine sends the error both ways ("error" is the older one).
type dockerPullMessage struct {
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// dockerPull pulls image and drains the progress stream, which is where a failed
// pull (unknown tag, denied, disk full) reports itself: the HTTP status of a
// pull is 200 once the stream has begun.
func dockerPull(ctx context.Context, cli *client.Client, image string) error {
	resp, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return fmt.Errorf("docker: pull %s: %w", image, err)
	}
	defer resp.Close()
	dec := json.NewDecoder(resp)
	for {
		var m dockerPullMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("docker: pull %s: reading progress: %w", image, err)
		}
		msg := m.Error
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			msg = m.ErrorDetail.Message
		}
		if msg != "" {
			return fmt.Errorf("docker: pull %s: %s", image, msg)
		}
	}
}

// buildDockerCreate turns the config section into the create request: image, args,
// environment, labels, mounts, ports, GPUs, /dev/shm and network. lookupEnv
// resolves ${NAME} in env values (os.LookupEnv outside tests).
func buildDockerCreate(d *config.DockerStack, name, runID string, lookupEnv func(string) (string, bool)) (client.ContainerCreateOptions, error) {
	var none client.ContainerCreateOptions
	if strings.TrimSpace(d.Image) == "" {
		return none, errors.New("docker: stack.docker.image is empty")
	}
	env, err := containerEnv(d.Env, lookupEnv)
	if err != nil {
		return none, err
	}
	mounts, err := parseDockerVolumes(d.Volumes, os.UserHomeDir)
	if err != nil {
		return none, err
	}
	exposed, bindings, err := parseDockerPorts(d.Ports)
	if err != nil {
		return none, err
	}
	var shm int64
	if d.ShmSize != "" {
		shm, err = units.RAMInBytes(d.ShmSize)
		if err != nil || shm <= 0 {
			return none, fmt.Errorf("docker: stack.docker.shm_size: want a size like 16g or 512m, got %q", d.ShmSize)
		}
	}
	mode, netcfg, err := dockerNetworkMode(d.Network)
	if err != nil {
		return none, err
	}

	cfg := &container.Config{
		Image:        d.Image,
		Env:          env,
		ExposedPorts: exposed,
		Labels:       map[string]string{dockerLabelManaged: "true", dockerLabelRun: runID},
	}
	if len(d.Args) > 0 {
		cfg.Cmd = slices.Clone(d.Args)
	}
	host := &container.HostConfig{
		NetworkMode:  mode,
		PortBindings: bindings,
		Mounts:       mounts,
		ShmSize:      shm,
		AutoRemove:   false, // Stop removes it, after the log is read
		Resources:    container.Resources{DeviceRequests: gpuDeviceRequests(d.GPUs)},
	}
	return client.ContainerCreateOptions{
		Name:             name,
		Config:           cfg,
		HostConfig:       host,
		NetworkingConfig: netcfg,
	}, nil
}

// containerEnv is the container's environment: only what stack.docker.env
// names, rendered by configuredEnv (sorted; ${NAME} filled from perfgate's
// own variable NAME, which is how a secret such as HF_TOKEN reaches the
// container without being written in perfgate.yaml; never the GitHub token).
func containerEnv(env map[string]string, lookup func(string) (string, bool)) ([]string, error) {
	out, err := configuredEnv("stack.docker.env", env, lookup)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	return out, nil
}

// dockerVolumeName is what Docker accepts as a named volume.
var dockerVolumeName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]+$`)

// parseDockerVolumes turns "host:container[:ro|rw]" into mounts. The host side is a
// path on the Docker host (absolute; a leading ~ is perfgate's home, which is
// the host's only when perfgate runs on the host) or the name of a Docker
// volume. Mounts rather than the older Binds: a bind whose host path does not
// exist is an error ("bind source path does not exist") instead of an empty
// directory the engine creates, which would hide a container path given where
// a host path was needed.
func parseDockerVolumes(vols []string, home func() (string, error)) ([]mount.Mount, error) {
	var out []mount.Mount
	for i, v := range vols {
		bad := func(why string) error {
			return fmt.Errorf("docker: stack.docker.volumes[%d] %q: %s", i, v, why)
		}
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, bad("want host:container or host:container:ro")
		}
		src, dst := parts[0], parts[1]
		readOnly := false
		if len(parts) == 3 {
			switch parts[2] {
			case "ro":
				readOnly = true
			case "rw":
			default:
				return nil, bad("the mode must be ro or rw")
			}
		}
		if !strings.HasPrefix(dst, "/") {
			return nil, bad("the container path must be absolute")
		}
		typ := mount.TypeBind
		switch {
		case src == "~" || strings.HasPrefix(src, "~/"):
			h, err := home()
			if err != nil {
				return nil, bad(fmt.Sprintf("cannot expand ~: %v", err))
			}
			src = h + strings.TrimPrefix(src, "~")
		case strings.HasPrefix(src, "/"):
		case dockerVolumeName.MatchString(src):
			typ = mount.TypeVolume
		default:
			return nil, bad("the host side must be an absolute path on the Docker host, or a volume name")
		}
		out = append(out, mount.Mount{Type: typ, Source: src, Target: dst, ReadOnly: readOnly})
	}
	return out, nil
}

// parseDockerPorts turns "[ip:][host:]container[/proto]" into the exposed ports and
// their bindings, as docker run -p does: "8000:8000" publishes container port
// 8000 on the host's 8000 on every address, "127.0.0.1:8000:8000" on
// loopback only, "8000" on a port the engine picks, "127.0.0.1::8000" on a
// port it picks on loopback. An IPv6 address is written in brackets.
func parseDockerPorts(specs []string) (network.PortSet, network.PortMap, error) {
	if len(specs) == 0 {
		return nil, nil, nil
	}
	exposed := network.PortSet{}
	bindings := network.PortMap{}
	for i, spec := range specs {
		port, b, err := parseDockerPort(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("docker: stack.docker.ports[%d] %q: %w", i, spec, err)
		}
		exposed[port] = struct{}{}
		bindings[port] = append(bindings[port], b)
	}
	return exposed, bindings, nil
}

func parseDockerPort(spec string) (network.Port, network.PortBinding, error) {
	var none network.Port
	var b network.PortBinding
	rest, proto, hasProto := strings.Cut(spec, "/")
	ip := ""
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]:")
		if end < 0 {
			return none, b, errors.New(`an IPv6 address must be written [addr]:port`)
		}
		ip, rest = rest[1:end], rest[end+2:]
	}
	parts := strings.Split(rest, ":")
	var hostPort, ctrPort string
	switch {
	case len(parts) == 1:
		ctrPort = parts[0]
	case len(parts) == 2 && ip == "" && strings.ContainsAny(parts[0], ".:"):
		ip, ctrPort = parts[0], parts[1] // ip:container, an engine-picked host port
	case len(parts) == 2:
		hostPort, ctrPort = parts[0], parts[1]
	case len(parts) == 3 && ip == "":
		ip, hostPort, ctrPort = parts[0], parts[1], parts[2]
	default:
		return none, b, errors.New("want [ip:]host_port:container_port[/proto] or container_port")
	}
	if ip != "" {
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			return none, b, fmt.Errorf("host address: %w", err)
		}
		b.HostIP = addr
	}
	if hostPort != "" {
		if n, err := strconv.Atoi(hostPort); err != nil || n < 1 || n > 65535 {
			return none, b, fmt.Errorf("host port %q is not a port number", hostPort)
		}
		b.HostPort = hostPort
	}
	if n, err := strconv.Atoi(ctrPort); err != nil || n < 1 || n > 65535 {
		return none, b, fmt.Errorf("container port %q is not a port number", ctrPort)
	}
	if hasProto {
		switch strings.ToLower(proto) {
		case "tcp", "udp", "sctp":
		default:
			return none, b, fmt.Errorf("protocol %q: want tcp, udp or sctp", proto)
		}
		ctrPort += "/" + proto
	}
	port, err := network.ParsePort(ctrPort)
	if err != nil {
		return none, b, err
	}
	return port, b, nil
}

// gpuDeviceRequests is what docker run --gpus sends: all GPUs, or the listed
// ones (indexes or UUIDs), from the nvidia driver (the NVIDIA container
// toolkit on the Docker host).
func gpuDeviceRequests(gpus string) []container.DeviceRequest {
	gpus = strings.TrimSpace(gpus)
	if gpus == "" {
		return nil
	}
	req := container.DeviceRequest{Driver: "nvidia", Capabilities: [][]string{{"gpu"}}}
	if gpus == "all" {
		req.Count = -1
	} else {
		for id := range strings.SplitSeq(gpus, ",") {
			if id = strings.TrimSpace(id); id != "" {
				req.DeviceIDs = append(req.DeviceIDs, id)
			}
		}
	}
	return []container.DeviceRequest{req}
}

// dockerNetworkMode maps stack.docker.network to the engine's network mode: empty
// is the default bridge, host the host's namespace, container perfgate's own
// container's namespace (the stack is then on localhost for perfgate),
// container:<id> that container's, and any other value a network by name,
// where the stack also answers to the DNS name perfgate-stack.
func dockerNetworkMode(n string) (container.NetworkMode, *network.NetworkingConfig, error) {
	switch {
	case n == "":
		return "", nil, nil
	case n == "container":
		id, err := ownContainerID()
		if err != nil {
			return "", nil, err
		}
		return container.NetworkMode("container:" + id), nil, nil
	case strings.HasPrefix(n, "container:"):
		if strings.TrimPrefix(n, "container:") == "" {
			return "", nil, errors.New("docker: stack.docker.network container: needs a container id or name after it")
		}
		return container.NetworkMode(n), nil, nil
	case n == "host" || n == "none" || n == "bridge" || n == "default":
		return container.NetworkMode(n), nil, nil
	default:
		return container.NetworkMode(n), &network.NetworkingConfig{
			EndpointsConfig: map[string]*network.EndpointSettings{n: {Aliases: []string{dockerStackAlias}}},
		}, nil
	}
}

var (
	// mountinfoID finds a container directory in a mount's source, as
	// Docker (/var/lib/docker/containers/<id>/hostname) and Podman
	// (.../overlay-containers/<id>/userdata/hostname) bind /etc/hostname.
	mountinfoID = regexp.MustCompile(`(?:^|/|-)containers/([0-9a-f]{64})/`)
	// cgroupContainerID is a container ID in a cgroup v1 path (/docker/<id>,
	// docker-<id>.scope).
	cgroupContainerID = regexp.MustCompile(`[0-9a-f]{64}`)
)

// ownContainerID finds the ID of the container perfgate runs in: from
// $PERFGATE_CONTAINER_ID, else from /proc/self/mountinfo (the engine binds
// /etc/hostname from the container's own directory; works with cgroup v2,
// where /proc/self/cgroup says only "0::/"), else from /proc/self/cgroup
// (cgroup v1).
func ownContainerID() (string, error) {
	if id := strings.TrimSpace(os.Getenv(ownContainerIDEnv)); id != "" {
		return id, nil
	}
	if b, err := os.ReadFile(mountinfoPath); err == nil {
		if id := idFromMountinfo(string(b)); id != "" {
			return id, nil
		}
	}
	if b, err := os.ReadFile(cgroupPath); err == nil {
		if id := cgroupContainerID.FindString(string(b)); id != "" {
			return id, nil
		}
	}
	return "", fmt.Errorf("docker: stack.docker.network is container, which shares perfgate's own container's network, "+
		"but perfgate does not seem to run in a container (no container ID in $%s, %s or %s); "+
		"set %s, or use network: host or published ports", ownContainerIDEnv, mountinfoPath, cgroupPath, ownContainerIDEnv)
}

// idFromMountinfo returns the container ID in the source of the mount on
// /etc/hostname, or of the first mount from a container directory.
func idFromMountinfo(s string) string {
	first := ""
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := mountinfoID.FindStringSubmatch(f[3])
		if m == nil {
			continue
		}
		if f[4] == "/etc/hostname" {
			return m[1]
		}
		if first == "" {
			first = m[1]
		}
	}
	return first
}

// dockerCreateHint adds what to check to a create error the user can act on.
func dockerCreateHint(d *config.DockerStack, err error) string {
	if cerrdefs.IsNotFound(err) && strings.HasPrefix(d.Network, "container") {
		return fmt.Sprintf("\n(network %s names a container the engine does not know: is perfgate's container on the same Docker host?)", d.Network)
	}
	if cerrdefs.IsConflict(err) {
		return "\n(a container of that name exists: remove leftovers with docker rm -f $(docker ps -aq --filter label=io.perfgate.managed=true))"
	}
	return ""
}

// dockerStartHint adds what to check to a start error the user can act on.
func dockerStartHint(d *config.DockerStack, err error) string {
	msg := err.Error()
	switch {
	case d.GPUs != "" && strings.Contains(msg, "could not select device driver"):
		return "\n(stack.docker.gpus needs the NVIDIA container toolkit on the Docker host)"
	case len(d.Volumes) > 0 && strings.Contains(msg, "bind source path does not exist"):
		return "\n(volume host paths are paths on the Docker host; from inside a container action, perfgate's own paths are not the host's)"
	case len(d.Ports) > 0 && (strings.Contains(msg, "port is already allocated") || strings.Contains(msg, "address already in use")):
		return "\n(a published host port is taken: is another server still running?)"
	}
	return ""
}

// removeContainerAfterFailure removes a container that was created but cannot be
// used, and returns cause, with the removal's failure if it failed too.
func removeContainerAfterFailure(ctx context.Context, cli *client.Client, id, name string, grace time.Duration, cause error) error {
	cctx, cancel := dockerCleanupContext(ctx, grace)
	defer cancel()
	if _, err := cli.ContainerRemove(cctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%w\n(removing the container failed too: %v; remove it with docker rm -f %s)", cause, err, name)
	}
	return cause
}

// dockerCleanupContext is for stopping and removing a container: it keeps ctx's
// values but not its cancellation, since cleanup must happen even when
// perfgate was interrupted, and is bounded by the grace plus 30s.
func dockerCleanupContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), grace+dockerCleanupSlack)
}

// dockerStopTimeout is the stop timeout the engine takes, whole seconds, rounded
// up so that a grace is never cut short.
func dockerStopTimeout(grace time.Duration) int {
	if grace <= 0 {
		return 0
	}
	return int(math.Ceil(grace.Seconds()))
}
