package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

// Broken configs and workloads each give exit 2 and a message that names the
// location of the problem; none panics and none reaches the network (the
// target is a closed port: getting past validation would be exit 3).
func TestBadInputIsUsageError(t *testing.T) {
	workloads, err := filepath.Abs("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	scenario := func(load, workload string) string {
		return "target: {base_url: \"http://127.0.0.1:1\"}\nscenarios:\n  - name: s\n    workload: " + filepath.Join(workloads, workload) + "\n    load: " + load + "\n"
	}
	tests := []struct {
		name   string
		config string // "" means: no config file at all
		want   []string
	}{
		{"missing config", "", []string{"perfgate.yaml", "no such file"}},
		{"unknown key", "targett: {}\n" + scenario("{type: closed, concurrency: 1}", "ok.jsonl"), []string{"perfgate.yaml:1", "targett"}},
		{"wrong type", scenario("{type: closed, concurrency: lots}", "ok.jsonl"), []string{"perfgate.yaml:5", "scenarios[0].load.concurrency"}},
		{"negative rate", scenario("{type: poisson, rate: -2}", "ok.jsonl"), []string{"perfgate.yaml:5", "scenarios[0].load.rate", "-2"}},
		{"missing workload file", scenario("{type: closed, concurrency: 1}", "nope.jsonl"), []string{"perfgate.yaml:4", "scenarios[0].workload", "nope.jsonl"}},
		{"invalid JSON on line 2", scenario("{type: closed, concurrency: 1}", "invalid-json-line2.jsonl"), []string{"invalid-json-line2.jsonl:2"}},
		{"empty workload", scenario("{type: closed, concurrency: 1}", "empty.jsonl"), []string{"empty.jsonl", "no requests"}},
		{"unknown workload field", scenario("{type: closed, concurrency: 1}", "unknown-field.jsonl"), []string{"unknown-field.jsonl:1", "temprature"}},
		{"wrong workload type", scenario("{type: closed, concurrency: 1}", "wrong-type.jsonl"), []string{"wrong-type.jsonl:1", "max_tokens"}},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"run", "validate"} {
			t.Run(cmd+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				conf := filepath.Join(dir, "perfgate.yaml")
				if tt.config != "" {
					if err := os.WriteFile(conf, []byte(tt.config), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				var stdout, stderr bytes.Buffer
				args := []string{cmd, "-c", conf}
				if cmd == "run" {
					args = append(args, "-o", filepath.Join(dir, "r.json"), "-q")
				}
				err := Main(context.Background(), args, &stdout, &stderr)
				if code := exit.Code(err); code != exit.Usage {
					t.Fatalf("perfgate %s: exit %d (%v), want %d", cmd, code, err, exit.Usage)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("perfgate %s: error %q does not mention %q", cmd, err, w)
					}
				}
			})
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"run", "--no-such-flag"},
		{"run", "extra-arg"},
		{"run", "--repetitions", "-1"},
		{"workload", "synth", "--input-tokens", "lognormal:sd=3"},
		{"workload", "synth", "--requests", "0"},
		{"sim", "--error-rate", "1.5"},
	} {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), args, &stdout, &stderr)
		if code := exit.Code(err); code != exit.Usage {
			t.Errorf("perfgate %s: exit %d (%v), want %d", strings.Join(args, " "), code, err, exit.Usage)
		}
	}
}

func TestValidateOK(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := Main(context.Background(), []string{"validate", "-c", "../../examples/perfgate.yaml"}, &stdout, &stderr); err != nil {
		t.Fatalf("validate examples/perfgate.yaml: %v", err)
	}
	if !strings.HasPrefix(stdout.String(), "ok:") {
		t.Errorf("validate output = %q, want ok: ...", stdout.String())
	}
}

// The same synth flags and seed write the same bytes.
func TestWorkloadSynthDeterministic(t *testing.T) {
	args := []string{"workload", "synth", "-n", "50", "--input-tokens", "lognormal:mean=200,stddev=150,max=2000",
		"--output-tokens", "uniform:min=8,max=64", "--prefix-count", "3", "--prefix-length", "20", "--prefix-rate", "0.5", "--seed", "11"}
	var a, b, stderr bytes.Buffer
	if err := Main(context.Background(), args, &a, &stderr); err != nil {
		t.Fatal(err)
	}
	if err := Main(context.Background(), args, &b, &stderr); err != nil {
		t.Fatal(err)
	}
	if a.Len() == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Errorf("synth with the same seed wrote different (or no) output")
	}
	if n := strings.Count(a.String(), "\n"); n != 50 {
		t.Errorf("synth -n 50 wrote %d lines", n)
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := Main(context.Background(), []string{"version"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "perfgate ") {
		t.Errorf("version = %q", stdout.String())
	}
}

// --models mixes adapters by weight; a bad weight names the flag.
func TestWorkloadSynthModels(t *testing.T) {
	var out, stderr bytes.Buffer
	require.NoError(t, Main(context.Background(), []string{"workload", "synth", "-n", "40", "--models", "sql-lora:3,base:1", "--seed", "5"}, &out, &stderr))
	assert.Equal(t, 40, strings.Count(out.String(), "\n"))
	assert.Contains(t, out.String(), `"model":"sql-lora"`)
	assert.Contains(t, out.String(), `"model":"base"`)
	err := Main(context.Background(), []string{"workload", "synth", "-n", "4", "--models", "a:-1"}, &out, &stderr)
	require.Error(t, err)
	assert.Equal(t, exit.Usage, exit.Code(err))
	assert.Contains(t, err.Error(), "--models (models[0].weight): must be a number > 0, got -1")
}
