package stack

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// The fake engine's fixed identities.
const (
	fakeContainerID = "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00"
	fakeImageID     = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	fakeOwnID       = "3f4e8a1c9b2d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f"
	dockerTestImage = "vllm/vllm-openai:v0.6.3"
)

// dockerFailBound bounds a wait on a channel: a failure bound, not a
// synchronisation sleep.
const dockerFailBound = 10 * time.Second

// engineRequest is one request the fake engine received.
type engineRequest struct {
	Method  string
	Version string // the /vN.NN prefix, if any
	Path    string // without the /vN.NN prefix
	Query   url.Values
	Body    []byte
}

func (r engineRequest) String() string { return r.Method + " " + r.Path }

// dockerLogFrame is one frame of the multiplexed log stream: stream 1 is stdout,
// 2 stderr.
type dockerLogFrame struct {
	stream byte
	text   string
}

// fakeDockerEngine is a Docker Engine API with one image and at most one
// container, served over a unix socket. It records every request.
type fakeDockerEngine struct {
	host string // unix:///tmp/.../docker.sock

	mu               sync.Mutex
	requests         []engineRequest
	imagePresent     bool
	pullLines        []string // the pull progress stream, one JSON object a line
	pullMakesPresent bool
	createStatus     int           // non-zero: create fails with this status
	createReceived   chan struct{} // non-nil: closed when create arrives, which then hangs
	startStatus      int           // non-zero: start fails with this status
	logs             []dockerLogFrame
	name             string
	status           string // created, running, exited
	exitCode         int
	oomKilled        bool
	removed          bool
	dead             chan struct{} // closed when the container stops
	shutdown         chan struct{} // closed when the test ends

	// others are containers this test does not start (leftovers of earlier
	// runs, and the containers their perfgate ran in), by ID; listStatus,
	// when set, fails the list.
	others        map[string]*fakeOther
	removedOthers []string
	listStatus    int
}

// fakeOther is a container of the fake engine other than the test's own.
type fakeOther struct {
	name   string
	labels map[string]string
	state  string // running, exited, ...
}

// addOther adds a container the test did not start.
func (e *fakeDockerEngine) addOther(id, name, state string, labels map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.others == nil {
		e.others = map[string]*fakeOther{}
	}
	e.others[id] = &fakeOther{name: name, labels: labels, state: state}
}

// otherID returns the ID of the other container a path is about, or "".
func (e *fakeDockerEngine) otherID(p string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(p, "/containers/"), "/")
	e.mu.Lock()
	defer e.mu.Unlock()
	if !strings.HasPrefix(p, "/containers/") || e.others[id] == nil {
		return ""
	}
	return id
}

// list answers GET /containers/json: the other containers that match the
// label filters ("key=value").
func (e *fakeDockerEngine) list(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.listStatus != 0 {
		dockerJSONError(w, e.listStatus, "the engine is having a bad day")
		return
	}
	var filters map[string]map[string]bool
	if f := r.URL.Query().Get("filters"); f != "" {
		_ = json.Unmarshal([]byte(f), &filters)
	}
	out := []map[string]any{}
	for _, id := range slices.Sorted(maps.Keys(e.others)) {
		c := e.others[id]
		match := true
		for kv := range filters["label"] {
			k, v, _ := strings.Cut(kv, "=")
			if c.labels[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, map[string]any{"Id": id, "Names": []string{"/" + c.name}, "Labels": c.labels, "State": c.state})
		}
	}
	dockerWriteJSON(w, http.StatusOK, out)
}

// serveOther answers inspect and removal of another container.
func (e *fakeDockerEngine) serveOther(w http.ResponseWriter, r *http.Request, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.others[id]
	switch r.Method {
	case http.MethodGet:
		dockerWriteJSON(w, http.StatusOK, map[string]any{
			"Id": id, "Name": "/" + c.name, "Image": fakeImageID,
			"State": map[string]any{"Status": c.state, "Running": c.state == "running"},
		})
	case http.MethodDelete:
		delete(e.others, id)
		e.removedOthers = append(e.removedOthers, c.name)
		w.WriteHeader(http.StatusNoContent)
	default:
		dockerJSONError(w, http.StatusNotFound, "page not found")
	}
}

var dockerAPIVersionPrefix = regexp.MustCompile(`^/v[0-9]+\.[0-9]+`)

// newFakeDockerEngine serves a fake engine until the test ends.
func newFakeDockerEngine(t *testing.T) *fakeDockerEngine {
	t.Helper()
	// Not t.TempDir: a socket path must fit in 108 bytes, and t.TempDir
	// carries the (sub)test's name.
	dir, err := os.MkdirTemp("", "pgdock")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "docker.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	e := &fakeDockerEngine{
		host:             "unix://" + sock,
		pullMakesPresent: true,
		pullLines: []string{
			`{"status":"Pulling from vllm/vllm-openai","id":"v0.6.3"}`,
			`{"status":"Downloading","progressDetail":{"current":1024,"total":4096},"id":"a1b2c3"}`,
			`{"status":"Status: Downloaded newer image for vllm/vllm-openai:v0.6.3"}`,
		},
		dead:     make(chan struct{}),
		shutdown: make(chan struct{}),
	}
	srv := &http.Server{Handler: e}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		close(e.shutdown)
		_ = srv.Close()
		<-served
	})
	return e
}

func (e *fakeDockerEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	version := dockerAPIVersionPrefix.FindString(r.URL.Path)
	p := strings.TrimPrefix(r.URL.Path, version)
	e.mu.Lock()
	e.requests = append(e.requests, engineRequest{Method: r.Method, Version: version, Path: p, Query: r.URL.Query(), Body: body})
	e.mu.Unlock()

	ctr := "/containers/" + fakeContainerID
	switch {
	case p == "/_ping":
		w.Header().Set("API-Version", "1.47")
		w.Header().Set("OSType", "linux")
		_, _ = io.WriteString(w, "OK")
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/images/") && strings.HasSuffix(p, "/json"):
		name := strings.TrimSuffix(strings.TrimPrefix(p, "/images/"), "/json")
		e.mu.Lock()
		present := e.imagePresent
		e.mu.Unlock()
		if !present {
			dockerJSONError(w, http.StatusNotFound, "No such image: "+name)
			return
		}
		dockerWriteJSON(w, http.StatusOK, map[string]any{"Id": fakeImageID, "RepoTags": []string{name}})
	case r.Method == http.MethodPost && p == "/images/create":
		e.mu.Lock()
		lines := e.pullLines
		if e.pullMakesPresent {
			e.imagePresent = true
		}
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			_, _ = io.WriteString(w, l+"\n")
			dockerFlush(w)
		}
	case r.Method == http.MethodPost && p == "/containers/create":
		if e.createReceived != nil {
			close(e.createReceived)
			select { // the client gives up first
			case <-r.Context().Done():
			case <-e.shutdown:
			}
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.createStatus != 0 {
			dockerJSONError(w, e.createStatus, "Conflict. The container name is already in use")
			return
		}
		e.name = r.URL.Query().Get("name")
		e.status = "created"
		dockerWriteJSON(w, http.StatusCreated, map[string]any{"Id": fakeContainerID, "Warnings": []string{}})
	case strings.HasPrefix(p, ctr):
		e.container(w, r, strings.TrimPrefix(p, ctr))
	case r.Method == http.MethodGet && p == "/containers/json":
		e.list(w, r)
	case e.otherID(p) != "":
		e.serveOther(w, r, e.otherID(p))
	default:
		dockerJSONError(w, http.StatusNotFound, "page not found: "+r.Method+" "+p)
	}
}

// container serves the routes of the one container.
func (e *fakeDockerEngine) container(w http.ResponseWriter, r *http.Request, rest string) {
	e.mu.Lock()
	removed := e.removed
	e.mu.Unlock()
	if removed {
		dockerJSONError(w, http.StatusNotFound, "No such container: "+fakeContainerID)
		return
	}
	switch r.Method + " " + rest {
	case "POST /start":
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.startStatus != 0 {
			dockerJSONError(w, e.startStatus, `failed to create task for container: could not start`)
			return
		}
		e.status = "running"
		w.WriteHeader(http.StatusNoContent)
	case "GET /json":
		e.mu.Lock()
		defer e.mu.Unlock()
		dockerWriteJSON(w, http.StatusOK, map[string]any{
			"Id":    fakeContainerID,
			"Name":  "/" + e.name,
			"Image": fakeImageID,
			"State": map[string]any{
				"Status":    e.status,
				"Running":   e.status == "running",
				"ExitCode":  e.exitCode,
				"OOMKilled": e.oomKilled,
			},
		})
	case "GET /logs":
		w.Header().Set("Content-Type", "application/vnd.docker.multiplexed-stream")
		w.WriteHeader(http.StatusOK)
		e.mu.Lock()
		frames := e.logs
		e.mu.Unlock()
		for _, f := range frames {
			writeDockerFrame(w, f.stream, f.text)
		}
		dockerFlush(w)
		if r.URL.Query().Get("follow") == "1" {
			e.block(r)
		}
	case "POST /wait":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		dockerFlush(w)
		if !e.block(r) {
			return
		}
		e.mu.Lock()
		code := e.exitCode
		e.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"StatusCode": code})
	case "POST /stop":
		if !e.die(143, false) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case "DELETE ":
		e.die(137, false)
		e.mu.Lock()
		e.removed = true
		e.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	default:
		dockerJSONError(w, http.StatusNotFound, "page not found: "+r.Method+" "+rest)
	}
}

// block waits until the container stops; false if the request or the test
// ended first.
func (e *fakeDockerEngine) block(r *http.Request) bool {
	select {
	case <-e.dead:
		return true
	case <-r.Context().Done():
	case <-e.shutdown:
	}
	return false
}

// die stops the container with code; false if it was not running.
func (e *fakeDockerEngine) die(code int, oom bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-e.dead:
		return false
	default:
	}
	e.status, e.exitCode, e.oomKilled = "exited", code, oom
	close(e.dead)
	return true
}

// calls returns the requests to method and path, in order.
func (e *fakeDockerEngine) calls(method, path string) []engineRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []engineRequest
	for _, r := range e.requests {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// sequence lists the requests that change state, in order, as "METHOD path".
func (e *fakeDockerEngine) sequence() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.requests {
		if r.Method == http.MethodPost || r.Method == http.MethodDelete {
			out = append(out, r.String())
		}
	}
	return out
}

func (e *fakeDockerEngine) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.requests)
}

// createRequest decodes the one create request's body.
func (e *fakeDockerEngine) createRequest(t *testing.T) (container.CreateRequest, engineRequest) {
	t.Helper()
	calls := e.calls(http.MethodPost, "/containers/create")
	require.Len(t, calls, 1)
	var req container.CreateRequest
	require.NoError(t, json.Unmarshal(calls[0].Body, &req), string(calls[0].Body))
	require.NotNil(t, req.Config)
	require.NotNil(t, req.HostConfig)
	return req, calls[0]
}

func writeDockerFrame(w io.Writer, stream byte, text string) {
	hdr := make([]byte, 8)
	hdr[0] = stream
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(text)))
	_, _ = w.Write(hdr)
	_, _ = io.WriteString(w, text)
}

func dockerFlush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func dockerWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func dockerJSONError(w http.ResponseWriter, status int, msg string) {
	dockerWriteJSON(w, status, map[string]string{"message": msg})
}

// dockerOptions are start options with a log in the test's directory.
func dockerOptions(t *testing.T) Options {
	return Options{RunID: "run1", LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: 1500 * time.Millisecond}
}

// startDockerFake starts d against e (d.Host is set to e's socket) and stops the
// instance when the test ends.
func startDockerFake(t *testing.T, e *fakeDockerEngine, d config.DockerStack, o Options) Instance {
	t.Helper()
	d.Host = e.host
	inst, err := startDocker(context.Background(), &d, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return inst
}

func dockerWaitDone(t *testing.T, inst Instance) {
	t.Helper()
	select {
	case <-inst.Done():
	case <-time.After(dockerFailBound):
		t.Fatal("Done was not closed")
	}
}

// pinOwnContainer makes ownContainerID read env, mountinfo and cgroup from
// the given values and testdata files.
func pinOwnContainer(t *testing.T, env, mountinfo, cgroup string) {
	t.Helper()
	t.Setenv(ownContainerIDEnv, env)
	oldM, oldC := mountinfoPath, cgroupPath
	mountinfoPath = filepath.Join("testdata", "docker", mountinfo)
	cgroupPath = filepath.Join("testdata", "docker", cgroup)
	t.Cleanup(func() { mountinfoPath, cgroupPath = oldM, oldC })
}

func TestDockerPullPolicy(t *testing.T) {
	tests := []struct {
		name      string
		pull      string
		present   bool
		pullLines []string // nil: the fake's default, a successful pull
		wantPulls int
		wantErr   string
	}{
		{name: "missing, present", pull: "missing", present: true, wantPulls: 0},
		{name: "missing, absent", pull: "missing", present: false, wantPulls: 1},
		{name: "default is missing", pull: "", present: false, wantPulls: 1},
		{name: "always, present", pull: "always", present: true, wantPulls: 1},
		{name: "always, absent", pull: "always", present: false, wantPulls: 1},
		{name: "never, present", pull: "never", present: true, wantPulls: 0},
		{name: "never, absent", pull: "never", present: false, wantPulls: 0,
			wantErr: "image vllm/vllm-openai:v0.6.3 is not on the Docker host, and stack.docker.pull is never"},
		{name: "error in the stream", pull: "missing", present: false, wantPulls: 1,
			pullLines: []string{
				`{"status":"Pulling from vllm/vllm-openai","id":"v0.6.3"}`,
				`{"errorDetail":{"message":"manifest for vllm/vllm-openai:v0.6.3 not found: manifest unknown"},"error":"manifest for vllm/vllm-openai:v0.6.3 not found: manifest unknown"}`,
			},
			wantErr: "docker: pull vllm/vllm-openai:v0.6.3: manifest for vllm/vllm-openai:v0.6.3 not found: manifest unknown"},
		{name: "old-style error in the stream", pull: "always", present: true, wantPulls: 1,
			pullLines: []string{`{"error":"toomanyrequests: rate limit"}`},
			wantErr:   "docker: pull vllm/vllm-openai:v0.6.3: toomanyrequests: rate limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFakeDockerEngine(t)
			e.imagePresent = tt.present
			if tt.pullLines != nil {
				e.pullLines = tt.pullLines
				e.pullMakesPresent = false
			}
			d := config.DockerStack{Image: dockerTestImage, Pull: tt.pull, Host: e.host}
			inst, err := startDocker(context.Background(), &d, dockerOptions(t))
			pulls := e.calls(http.MethodPost, "/images/create")
			assert.Len(t, pulls, tt.wantPulls)
			for _, p := range pulls {
				assert.Equal(t, "docker.io/vllm/vllm-openai", p.Query.Get("fromImage"))
				assert.Equal(t, "v0.6.3", p.Query.Get("tag"))
			}
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Nil(t, inst)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Empty(t, e.calls(http.MethodPost, "/containers/create"), "no container after a failed image check")
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = inst.Stop(context.Background()) })
			assert.Len(t, e.calls(http.MethodPost, "/containers/create"), 1)
		})
	}
}

func TestDockerCreateRequest(t *testing.T) {
	pinOwnContainer(t, "", "mountinfo-host", "cgroup-v2") // perfgate is a process on the host
	t.Setenv("HOME", "/home/runner")
	t.Setenv("PERFGATE_TEST_HF_TOKEN", "hf_secret")
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	d := config.DockerStack{
		Image: dockerTestImage,
		Args:  []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"},
		Env: map[string]string{
			"VLLM_LOGGING_LEVEL": "DEBUG",
			"HF_TOKEN":           "${PERFGATE_TEST_HF_TOKEN}",
			"A_FIRST":            "literal $dollar",
		},
		Volumes: []string{
			"~/.cache/huggingface:/root/.cache/huggingface",
			"/srv/models:/models:ro",
			"hf-cache:/data:rw",
		},
		Ports:   []string{"8000:8000", "127.0.0.1:9090:9090/tcp", "[::1]:5353:53/udp", "8080"},
		GPUs:    "all",
		ShmSize: "16g",
		Pull:    "missing",
	}
	startDockerFake(t, e, d, dockerOptions(t))
	req, call := e.createRequest(t)

	assert.Equal(t, "perfgate-run1", call.Query.Get("name"))
	assert.Equal(t, dockerTestImage, req.Config.Image)
	assert.Equal(t, d.Args, req.Config.Cmd)
	assert.Nil(t, req.Config.Entrypoint, "the image's entrypoint is kept")
	assert.Equal(t, []string{
		"A_FIRST=literal $dollar",
		"HF_TOKEN=hf_secret",
		"VLLM_LOGGING_LEVEL=DEBUG",
	}, req.Config.Env)
	owner, ok := processOwner(os.Getpid())
	require.True(t, ok)
	assert.Equal(t, map[string]string{"io.perfgate.managed": "true", "io.perfgate.run": "run1", "io.perfgate.owner": owner},
		req.Config.Labels)

	assert.Equal(t, []mount.Mount{
		{Type: mount.TypeBind, Source: "/home/runner/.cache/huggingface", Target: "/root/.cache/huggingface"},
		{Type: mount.TypeBind, Source: "/srv/models", Target: "/models", ReadOnly: true},
		{Type: mount.TypeVolume, Source: "hf-cache", Target: "/data"},
	}, req.HostConfig.Mounts)
	assert.Empty(t, req.HostConfig.Binds, "volumes go as Mounts, not Binds")

	p8000, p9090, p53, p8080 := network.MustParsePort("8000/tcp"), network.MustParsePort("9090/tcp"),
		network.MustParsePort("53/udp"), network.MustParsePort("8080/tcp")
	assert.Equal(t, network.PortSet{p8000: {}, p9090: {}, p53: {}, p8080: {}}, req.Config.ExposedPorts)
	assert.Equal(t, network.PortMap{
		p8000: {{HostPort: "8000"}},
		p9090: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "9090"}},
		p53:   {{HostIP: netip.MustParseAddr("::1"), HostPort: "5353"}},
		p8080: {{}},
	}, req.HostConfig.PortBindings)

	assert.Equal(t, []container.DeviceRequest{{Driver: "nvidia", Count: -1, Capabilities: [][]string{{"gpu"}}}},
		req.HostConfig.DeviceRequests)
	assert.Equal(t, int64(16<<30), req.HostConfig.ShmSize)
	assert.Contains(t, string(call.Body), `"ShmSize":17179869184`)
	assert.False(t, req.HostConfig.AutoRemove)
	assert.Empty(t, req.HostConfig.NetworkMode, "no network: Docker's default bridge")
	assert.Nil(t, req.NetworkingConfig)
}

func TestDockerCreateMinimal(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, dockerOptions(t))
	req, call := e.createRequest(t)
	assert.Nil(t, req.Config.Cmd, "no args: the image's CMD")
	assert.Empty(t, req.Config.Env)
	assert.Empty(t, req.Config.ExposedPorts)
	assert.Empty(t, req.HostConfig.Mounts)
	assert.Empty(t, req.HostConfig.DeviceRequests, "no gpus: no device requests")
	assert.Zero(t, req.HostConfig.ShmSize, "no shm_size: Docker's default")
	assert.NotContains(t, string(call.Body), `"Cmd":[`)
}

func TestDockerGPUs(t *testing.T) {
	tests := []struct {
		gpus string
		want []container.DeviceRequest
	}{
		{"all", []container.DeviceRequest{{Driver: "nvidia", Count: -1, Capabilities: [][]string{{"gpu"}}}}},
		{"0,1", []container.DeviceRequest{{Driver: "nvidia", DeviceIDs: []string{"0", "1"}, Capabilities: [][]string{{"gpu"}}}}},
		{" 2 , 3 ", []container.DeviceRequest{{Driver: "nvidia", DeviceIDs: []string{"2", "3"}, Capabilities: [][]string{{"gpu"}}}}},
		{"GPU-8a6e6f3c-0d4b-4a53-9c1e-2f1d8e9b7a60", []container.DeviceRequest{{Driver: "nvidia",
			DeviceIDs: []string{"GPU-8a6e6f3c-0d4b-4a53-9c1e-2f1d8e9b7a60"}, Capabilities: [][]string{{"gpu"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.gpus, func(t *testing.T) {
			e := newFakeDockerEngine(t)
			e.imagePresent = true
			startDockerFake(t, e, config.DockerStack{Image: dockerTestImage, GPUs: tt.gpus}, dockerOptions(t))
			req, call := e.createRequest(t)
			assert.Equal(t, tt.want, req.HostConfig.DeviceRequests)
			if tt.gpus == "all" {
				assert.Contains(t, string(call.Body), `"DeviceRequests":[{"Driver":"nvidia","Count":-1,"DeviceIDs":null,"Capabilities":[["gpu"]]`)
			}
		})
	}
	assert.Nil(t, gpuDeviceRequests(""))
}

func TestDockerNetwork(t *testing.T) {
	tests := []struct {
		name      string
		network   string
		env       string // PERFGATE_CONTAINER_ID
		mountinfo string // testdata/docker file
		cgroup    string
		wantMode  container.NetworkMode
		wantAlias string // the network name that gets the perfgate-stack alias
	}{
		{name: "default", network: "", wantMode: ""},
		{name: "host", network: "host", wantMode: "host"},
		{name: "container from env", network: "container", env: "perfgate-action",
			mountinfo: "mountinfo-docker", cgroup: "cgroup-v1-docker", wantMode: "container:perfgate-action"},
		{name: "container from mountinfo", network: "container",
			mountinfo: "mountinfo-docker", cgroup: "cgroup-v2", wantMode: "container:" + fakeOwnID},
		{name: "container from cgroup v1", network: "container",
			mountinfo: "mountinfo-host", cgroup: "cgroup-v1-docker", wantMode: "container:" + fakeOwnID},
		{name: "container by id", network: "container:abc123", wantMode: "container:abc123"},
		{name: "named network", network: "github_network_5f3a", wantMode: "github_network_5f3a", wantAlias: "github_network_5f3a"},
		{name: "bridge", network: "bridge", wantMode: "bridge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mountinfo != "" {
				pinOwnContainer(t, tt.env, tt.mountinfo, tt.cgroup)
			}
			e := newFakeDockerEngine(t)
			e.imagePresent = true
			startDockerFake(t, e, config.DockerStack{Image: dockerTestImage, Network: tt.network}, dockerOptions(t))
			req, _ := e.createRequest(t)
			assert.Equal(t, tt.wantMode, req.HostConfig.NetworkMode)
			if tt.wantAlias == "" {
				assert.Nil(t, req.NetworkingConfig)
				return
			}
			require.NotNil(t, req.NetworkingConfig)
			require.Contains(t, req.NetworkingConfig.EndpointsConfig, tt.wantAlias)
			assert.Equal(t, []string{"perfgate-stack"}, req.NetworkingConfig.EndpointsConfig[tt.wantAlias].Aliases)
		})
	}
}

func TestDockerNetworkContainerOutsideContainer(t *testing.T) {
	pinOwnContainer(t, "", "mountinfo-host", "cgroup-v2")
	e := newFakeDockerEngine(t)
	d := config.DockerStack{Image: dockerTestImage, Network: "container", Host: e.host}
	_, err := startDocker(context.Background(), &d, dockerOptions(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "perfgate does not seem to run in a container")
	assert.Contains(t, err.Error(), "PERFGATE_CONTAINER_ID")
	assert.Zero(t, e.count(), "a config problem is found before the engine is asked anything")
}

func TestDockerEnvMissingVariable(t *testing.T) {
	e := newFakeDockerEngine(t)
	d := config.DockerStack{Image: dockerTestImage, Host: e.host,
		Env: map[string]string{"HF_TOKEN": "${PERFGATE_TEST_SURELY_UNSET}"}}
	_, err := startDocker(context.Background(), &d, dockerOptions(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PERFGATE_TEST_SURELY_UNSET (in HF_TOKEN)")
	assert.Zero(t, e.count())
}

// A container gets only what stack.docker.env names: with the GitHub token,
// the action's inputs and the runner's tokens in perfgate's environment, the
// create request carries none of them. A config that names one, or refers to
// one as ${NAME}, is refused before the engine is asked anything. On the code
// before this test the refusals did not exist: ${GITHUB_TOKEN} was filled in
// and the token went to the container.
func TestDockerEnvNeverPassesTheGitHubToken(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	t.Setenv("INPUT_GITHUB-TOKEN", "ghs_input")
	t.Setenv("ACTIONS_RUNTIME_TOKEN", "runtime")
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc")
	t.Setenv("PERFGATE_TEST_HF_TOKEN", "hf_secret")

	e := newFakeDockerEngine(t)
	e.imagePresent = true
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage,
		Env: map[string]string{"HF_TOKEN": "${PERFGATE_TEST_HF_TOKEN}"}}, dockerOptions(t))
	req, _ := e.createRequest(t)
	assert.Equal(t, []string{"HF_TOKEN=hf_secret"}, req.Config.Env, "the container's environment")

	tests := []struct {
		name, key, value, wantErr string
	}{
		{"a reference to the token", "HF_TOKEN", "${GITHUB_TOKEN}",
			"stack.docker.env.HF_TOKEN: refers to ${GITHUB_TOKEN}, which perfgate never gives a stack"},
		{"a reference inside a value", "AUTH", "Bearer ${ACTIONS_ID_TOKEN_REQUEST_TOKEN}",
			"stack.docker.env.AUTH: refers to ${ACTIONS_ID_TOKEN_REQUEST_TOKEN}"},
		{"the token's own name", "GITHUB_TOKEN", "ghs_written_in_the_file",
			"stack.docker.env.GITHUB_TOKEN: perfgate never gives a stack GITHUB_TOKEN"},
		{"an input", "INPUT_GITHUB-TOKEN", "x", "stack.docker.env.INPUT_GITHUB-TOKEN: perfgate never gives a stack"},
		{"a runner variable", "ACTIONS_RUNTIME_TOKEN", "${ACTIONS_RUNTIME_TOKEN}", "stack.docker.env.ACTIONS_RUNTIME_TOKEN: perfgate never gives a stack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFakeDockerEngine(t)
			e.imagePresent = true
			d := config.DockerStack{Image: dockerTestImage, Host: e.host, Env: map[string]string{tt.key: tt.value}}
			inst, err := startDocker(context.Background(), &d, dockerOptions(t))
			if err == nil {
				_ = inst.Stop(context.Background())
				req, _ := e.createRequest(t)
				t.Fatalf("startDocker(env %s: %q) started a container with env %q, want an error", tt.key, tt.value, req.Config.Env)
			}
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotContains(t, err.Error(), "ghs_", "the error must not quote the token")
			assert.Zero(t, e.count(), "a config problem is found before the engine is asked anything")
		})
	}
}

func TestDockerIdentity(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	args := []string{"--model", "m"}
	inst := startDockerFake(t, e, config.DockerStack{Image: dockerTestImage, Args: args}, dockerOptions(t))
	assert.Equal(t, result.Stack{Kind: "docker", Image: dockerTestImage, ImageID: fakeImageID, Args: args}, inst.Identity())
}

// dockerLogs are split across frames and streams, as an engine sends them.
var dockerLogs = []dockerLogFrame{
	{1, "INFO loading model meta-llama/Llama-3.1-8B-Instruct\n"},
	{2, "WARNING the tokenizer "},
	{2, "is slow\n"},
	{1, "INFO Uvicorn running on http://0.0.0.0:8000\nINFO ready"},
	{1, "\n"},
}

var dockerLogLines = []string{
	"INFO loading model meta-llama/Llama-3.1-8B-Instruct",
	"WARNING the tokenizer is slow",
	"INFO Uvicorn running on http://0.0.0.0:8000",
	"INFO ready",
}

func TestDockerContainerDies(t *testing.T) {
	tests := []struct {
		name string
		code int
		oom  bool
	}{
		{"oom killed", 137, true},
		{"exit 1", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newFakeDockerEngine(t)
			e.imagePresent = true
			e.logs = dockerLogs
			inst := startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, dockerOptions(t))
			select {
			case <-inst.Done():
				t.Fatal("Done closed while the container runs")
			default:
			}
			assert.NoError(t, inst.Err(), "no error while running")

			e.die(tt.code, tt.oom)
			dockerWaitDone(t, inst)

			var ee *ExitError
			require.ErrorAs(t, inst.Err(), &ee)
			assert.Equal(t, "container perfgate-run1 (vllm/vllm-openai:v0.6.3)", ee.What)
			assert.Equal(t, tt.code, ee.Code)
			assert.Equal(t, tt.oom, ee.OOMKilled)
			assert.Equal(t, dockerLogLines, ee.Tail)
			assert.Equal(t, dockerLogLines, inst.Tail(TailLines))
			assert.Equal(t, dockerLogLines[2:], inst.Tail(2))
			if tt.oom {
				assert.Contains(t, ee.Error(), "(out of memory)")
			}

			require.NoError(t, inst.Stop(context.Background()))
			assert.Len(t, e.calls(http.MethodPost, "/containers/"+fakeContainerID+"/stop"), 1)
			assert.Len(t, e.calls(http.MethodDelete, "/containers/"+fakeContainerID), 1)
		})
	}
}

func TestDockerStopOnce(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.logs = dockerLogs
	o := dockerOptions(t)
	inst := startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, o)

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = inst.Stop(context.Background()) })
	}
	wg.Wait()
	for _, err := range errs {
		assert.NoError(t, err)
	}
	require.NoError(t, inst.Stop(context.Background()), "a later Stop returns the first's result")

	stops := e.calls(http.MethodPost, "/containers/"+fakeContainerID+"/stop")
	require.Len(t, stops, 1)
	assert.Equal(t, "2", stops[0].Query.Get("t"), "1.5s grace rounds up to 2s")
	dels := e.calls(http.MethodDelete, "/containers/"+fakeContainerID)
	require.Len(t, dels, 1)
	assert.Equal(t, "1", dels[0].Query.Get("force"))
	assert.Equal(t, "1", dels[0].Query.Get("v"))
	seq := e.sequence()
	assert.Equal(t, []string{
		"POST /containers/create",
		"POST /containers/" + fakeContainerID + "/start",
		"POST /containers/" + fakeContainerID + "/stop",
		"DELETE /containers/" + fakeContainerID,
	}, withoutDockerWait(seq))

	// Stop closes Done, and Err is still set, though callers ignore it.
	dockerWaitDone(t, inst)
	var ee *ExitError
	require.ErrorAs(t, inst.Err(), &ee)
	assert.Equal(t, 143, ee.Code)

	// The log was read to the end and its file closed; the tail stays.
	assert.Equal(t, dockerLogLines, inst.Tail(TailLines))
	b, err := os.ReadFile(o.LogPath)
	require.NoError(t, err)
	assert.Equal(t, strings.Join(dockerLogLines, "\n")+"\n", string(b))
}

// withoutDockerWait drops the wait requests, whose place in the order is the
// watch goroutine's business.
func withoutDockerWait(seq []string) []string {
	var out []string
	for _, s := range seq {
		if !strings.HasSuffix(s, "/wait") {
			out = append(out, s)
		}
	}
	return out
}

func TestDockerStopAfterInterrupt(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	inst := startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, Options{
		RunID: "run1", LogPath: filepath.Join(t.TempDir(), "stack.log"), Grace: 0,
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // perfgate was interrupted: cleanup must still happen
	require.NoError(t, inst.Stop(ctx))
	stops := e.calls(http.MethodPost, "/containers/"+fakeContainerID+"/stop")
	require.Len(t, stops, 1)
	assert.Equal(t, "0", stops[0].Query.Get("t"))
	assert.Len(t, e.calls(http.MethodDelete, "/containers/"+fakeContainerID), 1)
	dockerWaitDone(t, inst)
}

func TestDockerStartFails(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.startStatus = http.StatusInternalServerError
	d := config.DockerStack{Image: dockerTestImage, Host: e.host}
	inst, err := startDocker(context.Background(), &d, dockerOptions(t))
	require.Error(t, err)
	assert.Nil(t, inst)
	assert.Contains(t, err.Error(), "docker: start container perfgate-run1 from vllm/vllm-openai:v0.6.3")
	assert.Contains(t, err.Error(), "could not start")
	dels := e.calls(http.MethodDelete, "/containers/"+fakeContainerID)
	require.Len(t, dels, 1, "the created container is removed")
	assert.Equal(t, "1", dels[0].Query.Get("force"))
	assert.Empty(t, e.calls(http.MethodGet, "/containers/"+fakeContainerID+"/logs"))
}

func TestDockerCreateFails(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.createStatus = http.StatusConflict
	d := config.DockerStack{Image: dockerTestImage, Host: e.host}
	_, err := startDocker(context.Background(), &d, dockerOptions(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "docker: create container from vllm/vllm-openai:v0.6.3: ")
	assert.Contains(t, err.Error(), "already in use")
	assert.Contains(t, err.Error(), "label=io.perfgate.managed=true")
	assert.Empty(t, e.calls(http.MethodDelete, "/containers/"+fakeContainerID))
}

func TestDockerCreateInterrupted(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	e.createReceived = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.createReceived
		cancel() // perfgate is interrupted while the engine creates
	}()
	d := config.DockerStack{Image: dockerTestImage, Host: e.host}
	_, err := startDocker(ctx, &d, dockerOptions(t))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	dels := e.calls(http.MethodDelete, "/containers/perfgate-run1")
	require.Len(t, dels, 1, "what the engine may have created is removed by name")
	assert.Equal(t, "1", dels[0].Query.Get("force"))
}

func TestDockerBadRunID(t *testing.T) {
	e := newFakeDockerEngine(t)
	o := dockerOptions(t)
	o.RunID = "a/b"
	d := config.DockerStack{Image: dockerTestImage, Host: e.host}
	_, err := startDocker(context.Background(), &d, o)
	require.ErrorContains(t, err, `run ID "a/b" cannot name a container`)
	assert.Zero(t, e.count())
}

func TestDockerUnreachable(t *testing.T) {
	dir, err := os.MkdirTemp("", "pgdock")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	host := "unix://" + filepath.Join(dir, "absent.sock")
	o := dockerOptions(t)
	d := config.DockerStack{Image: dockerTestImage, Host: host}
	_, err = startDocker(context.Background(), &d, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "docker: cannot reach the Docker engine at "+host)
	assert.Contains(t, err.Error(), "/var/run/docker.sock")
	_, statErr := os.Stat(o.LogPath)
	assert.True(t, errors.Is(statErr, os.ErrNotExist), "no log file for a stack that never started")
}

func TestDockerHostFromEnv(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	t.Setenv("DOCKER_HOST", e.host)
	d := config.DockerStack{Image: dockerTestImage}
	inst, err := startDocker(context.Background(), &d, dockerOptions(t))
	require.NoError(t, err)
	require.NoError(t, inst.Stop(context.Background()))
	assert.Len(t, e.calls(http.MethodPost, "/containers/create"), 1)
}

func TestDockerVersionNegotiated(t *testing.T) {
	e := newFakeDockerEngine(t)
	e.imagePresent = true
	startDockerFake(t, e, config.DockerStack{Image: dockerTestImage}, dockerOptions(t))
	e.mu.Lock()
	defer e.mu.Unlock()
	require.NotEmpty(t, e.requests)
	assert.Equal(t, "/_ping", e.requests[0].Path, "first contact is a ping")
	for _, r := range e.requests[1:] {
		assert.Equal(t, "/v1.47", r.Version, "%s uses the engine's API version", r)
	}
}

func TestDockerParsePorts(t *testing.T) {
	tests := []struct {
		spec    string
		port    string
		binding network.PortBinding
		wantErr string
	}{
		{spec: "8000:8000", port: "8000/tcp", binding: network.PortBinding{HostPort: "8000"}},
		{spec: "18000:8000", port: "8000/tcp", binding: network.PortBinding{HostPort: "18000"}},
		{spec: "127.0.0.1:8000:8000", port: "8000/tcp", binding: network.PortBinding{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "8000"}},
		{spec: "127.0.0.1::8000", port: "8000/tcp", binding: network.PortBinding{HostIP: netip.MustParseAddr("127.0.0.1")}},
		{spec: "127.0.0.1:8000", port: "8000/tcp", binding: network.PortBinding{HostIP: netip.MustParseAddr("127.0.0.1")}},
		{spec: "[::1]:8000:8000", port: "8000/tcp", binding: network.PortBinding{HostIP: netip.MustParseAddr("::1"), HostPort: "8000"}},
		{spec: "8000", port: "8000/tcp", binding: network.PortBinding{}},
		{spec: "5353:53/udp", port: "53/udp", binding: network.PortBinding{HostPort: "5353"}},
		{spec: "8000/TCP", port: "8000/tcp", binding: network.PortBinding{}},
		{spec: "http:8000", wantErr: `host port "http"`},
		{spec: "8000:99999", wantErr: `container port "99999"`},
		{spec: "8000/quic", wantErr: `protocol "quic"`},
		{spec: "1.2.3.999:8000:8000", wantErr: "host address"},
		{spec: "a:b:c:d", wantErr: "want [ip:]host_port:container_port"},
		{spec: "[::1:8000", wantErr: "IPv6"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			set, m, err := parseDockerPorts([]string{tt.spec})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Contains(t, err.Error(), "stack.docker.ports[0]")
				return
			}
			require.NoError(t, err)
			p := network.MustParsePort(tt.port)
			assert.Equal(t, network.PortSet{p: {}}, set)
			assert.Equal(t, network.PortMap{p: {tt.binding}}, m)
		})
	}
}

func TestDockerParseVolumes(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	tests := []struct {
		vol     string
		want    mount.Mount
		wantErr string
	}{
		{vol: "/data:/data", want: mount.Mount{Type: mount.TypeBind, Source: "/data", Target: "/data"}},
		{vol: "/data:/data:ro", want: mount.Mount{Type: mount.TypeBind, Source: "/data", Target: "/data", ReadOnly: true}},
		{vol: "/data:/data:rw", want: mount.Mount{Type: mount.TypeBind, Source: "/data", Target: "/data"}},
		{vol: "~/.cache/huggingface:/root/.cache/huggingface", want: mount.Mount{Type: mount.TypeBind, Source: "/home/u/.cache/huggingface", Target: "/root/.cache/huggingface"}},
		{vol: "~:/h", want: mount.Mount{Type: mount.TypeBind, Source: "/home/u", Target: "/h"}},
		{vol: "hf_cache:/root/.cache/huggingface", want: mount.Mount{Type: mount.TypeVolume, Source: "hf_cache", Target: "/root/.cache/huggingface"}},
		{vol: "./models:/models", wantErr: "absolute path on the Docker host, or a volume name"},
		{vol: "/data:relative", wantErr: "container path must be absolute"},
		{vol: "/data:/data:rx", wantErr: "mode must be ro or rw"},
		{vol: "/data", wantErr: "want host:container"},
	}
	for _, tt := range tests {
		t.Run(tt.vol, func(t *testing.T) {
			got, err := parseDockerVolumes([]string{tt.vol}, home)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []mount.Mount{tt.want}, got)
		})
	}
}

func TestDockerContainerEnv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "s3cret", "EMPTY": ""}[k]
		return v, ok
	}
	got, err := containerEnv(map[string]string{
		"Z":     "last",
		"A":     "Bearer ${TOKEN}",
		"M":     "${EMPTY}",
		"PLAIN": "$TOKEN and ${ not a ref",
		"TWICE": "${TOKEN}-${TOKEN}",
	}, lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"A=Bearer s3cret", "M=", "PLAIN=$TOKEN and ${ not a ref", "TWICE=s3cret-s3cret", "Z=last"}, got)

	_, err = containerEnv(map[string]string{"B": "${NOPE}", "A": "${ALSO_NOPE}"}, lookup)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ALSO_NOPE (in A), NOPE (in B)")

	got, err = containerEnv(nil, lookup)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestDockerOwnContainerID(t *testing.T) {
	tests := []struct {
		name      string
		env       string
		mountinfo string
		cgroup    string
		want      string
		wantErr   bool
	}{
		{name: "env wins", env: "my-container", mountinfo: "mountinfo-docker", cgroup: "cgroup-v1-docker", want: "my-container"},
		{name: "mountinfo, /etc/hostname preferred", mountinfo: "mountinfo-docker", cgroup: "cgroup-v2", want: fakeOwnID},
		{name: "cgroup v1", mountinfo: "mountinfo-host", cgroup: "cgroup-v1-docker", want: fakeOwnID},
		{name: "missing files", mountinfo: "absent", cgroup: "absent", wantErr: true},
		{name: "not in a container", mountinfo: "mountinfo-host", cgroup: "cgroup-v2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pinOwnContainer(t, tt.env, tt.mountinfo, tt.cgroup)
			got, err := ownContainerID()
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "does not seem to run in a container")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDockerIDFromMountinfoPodman(t *testing.T) {
	line := fmt.Sprintf("812 790 0:45 /containers/storage/overlay-containers/%s/userdata/hostname /etc/hostname rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n", fakeOwnID)
	assert.Equal(t, fakeOwnID, idFromMountinfo(line))
	assert.Empty(t, idFromMountinfo("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/root rw\n"))
}

func TestDockerStopTimeout(t *testing.T) {
	for _, tt := range []struct {
		grace time.Duration
		want  int
	}{{0, 0}, {-time.Second, 0}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {30 * time.Second, 30}} {
		assert.Equal(t, tt.want, dockerStopTimeout(tt.grace), tt.grace)
	}
}
