package result

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func digestIdentity() Identity {
	return Identity{
		PerfgateVersion: "v0.1.0",
		ConfigHash:      "sha256:aaaa",
		Target:          Target{BaseURL: "http://127.0.0.1:8000", API: "chat", Model: "llama-3-8b"},
		Server: Server{Engine: "vllm", Version: "0.6.3", Models: []string{"llama-3-8b", "lora-a"},
			Endpoint: "/version", Raw: json.RawMessage(`{"version":"0.6.3"}`)},
		Stack: Stack{Kind: "docker", Image: "vllm/vllm-openai:v0.6.3", ImageID: "sha256:bbbb", Args: []string{"--max-num-seqs", "64"}},
		Host:  Host{OS: "linux", Arch: "amd64", CPUModel: "EPYC", CPUs: 16, GoVersion: "go1.26"},
	}
}

func TestDigest(t *testing.T) {
	base := digestIdentity().Digest()
	require.True(t, strings.HasPrefix(base, "sha256:"))
	require.Len(t, base, len("sha256:")+64)

	tests := []struct {
		name   string
		change func(*Identity)
		same   bool
	}{
		{"equal identity", func(*Identity) {}, true},
		{"base URL", func(id *Identity) { id.Target.BaseURL = "http://10.0.0.1:9000" }, true},
		{"config hash", func(id *Identity) { id.ConfigHash = "sha256:cccc" }, true},
		{"perfgate version", func(id *Identity) { id.PerfgateVersion = "v0.2.0" }, true},
		{"raw server body", func(id *Identity) { id.Server.Raw = json.RawMessage(`{"now":1}`) }, true},
		{"model list order", func(id *Identity) { id.Server.Models = []string{"lora-a", "llama-3-8b"} }, true},
		{"engine version", func(id *Identity) { id.Server.Version = "0.6.4" }, false},
		{"engine", func(id *Identity) { id.Server.Engine = "sglang" }, false},
		{"model", func(id *Identity) { id.Target.Model = "llama-3-70b" }, false},
		{"image ID", func(id *Identity) { id.Stack.ImageID = "sha256:dddd" }, false},
		{"args", func(id *Identity) { id.Stack.Args = []string{"--max-num-seqs", "128"} }, false},
		{"CPUs", func(id *Identity) { id.Host.CPUs = 8 }, false},
		{"simulated", func(id *Identity) { id.Simulated = true }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := digestIdentity()
			tt.change(&id)
			if tt.same {
				assert.Equal(t, base, id.Digest())
			} else {
				assert.NotEqual(t, base, id.Digest())
			}
		})
	}
}

func TestDigestSurvivesWriteAndRead(t *testing.T) {
	id := digestIdentity()
	id.Stack.Args = []string{}
	id.Server.Models = nil
	path := filepath.Join(t.TempDir(), "result.json")
	require.NoError(t, Write(path, &Result{Schema: Schema, Identity: id, Scenarios: []ScenarioResult{{Name: "s"}}}))
	r, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, id.Digest(), r.Identity.Digest())
}
