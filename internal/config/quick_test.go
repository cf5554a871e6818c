package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad combinations of flags are refused, each naming its flags.
func TestQuickCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Quick
		want []string // substrings of the error; nil for none
	}{
		{"empty", Quick{}, nil},
		{"all good", Quick{Target: "http://x", API: "completions", Concurrency: 4, Requests: 20,
			Headers: []string{"Authorization: Bearer ${KEY}"}, SLO: "ttft=500ms,tpot=50ms", Repetitions: 2}, nil},
		{"concurrency and rate", Quick{Concurrency: 4, Rate: 2}, []string{"--concurrency and --rate"}},
		{"requests and duration", Quick{Requests: 4, Duration: time.Second}, []string{"--requests and --duration"}},
		{"negatives", Quick{Concurrency: -1, Requests: -2, Repetitions: -3, Duration: -time.Second},
			[]string{"--concurrency: must be >= 1, got -1", "--requests: must be >= 1, got -2", "--repetitions: must be >= 1, got -3", "--duration: must be positive"}},
		{"negative rate", Quick{Rate: -0.5}, []string{"--rate: must be > 0"}},
		{"api", Quick{API: "embeddings"}, []string{`--api: want chat or completions, got "embeddings"`}},
		{"arrival", Quick{Rate: 2, Arrival: "trace"}, []string{`--arrival: want poisson or gamma, got "trace"`}},
		{"arrival without rate", Quick{Concurrency: 2, Arrival: "gamma"}, []string{"--arrival: only with --rate"}},
		{"burstiness without gamma", Quick{Rate: 2, Burstiness: 0.5}, []string{"--burstiness: only with --arrival gamma"}},
		{"header without colon", Quick{Headers: []string{"Bearer secret"}}, []string{"--header: want \"Name: value\""}},
		{"slo key", Quick{SLO: "p99=1s"}, []string{`--slo: want key=duration pairs`, `"p99=1s"`}},
		{"slo value", Quick{SLO: "ttft=fast"}, []string{`--slo: ttft wants a duration`}},
		{"slo twice", Quick{SLO: "ttft=1s,ttft=2s"}, []string{"--slo: ttft is given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Check()
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// A header's value, which may be a secret, is never in an error.
func TestQuickHeaderErrorHidesValue(t *testing.T) {
	_, err := ParseHeaders([]string{"sk-secret-value"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sk-secret")
}

func TestParseSLO(t *testing.T) {
	got, err := ParseSLO(" ttft=500ms, TPOT=50ms,e2e=0 ")
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Duration{"ttft": 500 * time.Millisecond, "tpot": 50 * time.Millisecond, "e2e": 0}, got)
}

// quickConfig is a two-scenario file config (a closed loop over a synthetic
// workload, a gamma open loop over a file) in a temporary directory.
func quickConfig(t *testing.T) *Config {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.jsonl"), []byte(`{"prompt":"hello","max_tokens":4}`+"\n"), 0o644))
	cfg, err := Parse([]byte(`
target: {base_url: "http://127.0.0.1:9", headers: {authorization: old, X-Keep: yes}}
repetitions: 6
scenarios:
  - name: a
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: closed, concurrency: 16}
    requests: 32
    slo: {ttft: 1s, e2e: 5s}
  - name: b
    workload: w.jsonl
    load: {type: gamma, rate: 6, burstiness: 0.5, max_in_flight: 20, overload: measure}
    duration: 10s
`), filepath.Join(dir, "perfgate.yaml"))
	require.NoError(t, err)
	return cfg
}

// Apply overrides the file's fields in every scenario, and leaves alone
// what no flag names.
func TestQuickApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     Quick
		check func(t *testing.T, c *Config)
	}{
		{"nothing given", Quick{}, func(t *testing.T, c *Config) {
			assert.Equal(t, Load{Type: LoadClosed, Concurrency: 16}, c.Scenarios[0].Load)
			assert.Equal(t, 32, c.Scenarios[0].Requests)
			assert.Equal(t, 10*time.Second, c.Scenarios[1].Duration)
		}},
		{"target", Quick{Target: "https://api.example.test", Model: "m1", API: "completions",
			Headers: []string{"Authorization: Bearer ${OPENAI_API_KEY}", "X-New: 1"}}, func(t *testing.T, c *Config) {
			assert.Equal(t, "https://api.example.test", c.Target.BaseURL)
			assert.Equal(t, "m1", c.Target.Model)
			assert.Equal(t, "completions", c.Target.API)
			// The synthetic workload follows the API it spoke.
			assert.Equal(t, "completions", c.Scenarios[0].Synth.API)
			// Replaced whatever its case, raw ${VAR}; the others kept.
			assert.Equal(t, map[string]string{"Authorization": "Bearer ${OPENAI_API_KEY}", "X-Keep": "yes", "X-New": "1"}, c.Target.Headers)
		}},
		{"concurrency", Quick{Concurrency: 2}, func(t *testing.T, c *Config) {
			for _, s := range c.Scenarios {
				assert.Equal(t, Load{Type: LoadClosed, Concurrency: 2}, s.Load, s.Name)
			}
		}},
		{"rate", Quick{Rate: 2.5}, func(t *testing.T, c *Config) {
			assert.Equal(t, Load{Type: LoadPoisson, Rate: 2.5}, c.Scenarios[0].Load)
			// An open loop keeps what applies to an open loop.
			assert.Equal(t, Load{Type: LoadPoisson, Rate: 2.5, MaxInFlight: 20, Overload: OverloadMeasure}, c.Scenarios[1].Load)
		}},
		{"gamma", Quick{Rate: 3, Arrival: "gamma", Burstiness: 0.25}, func(t *testing.T, c *Config) {
			assert.Equal(t, Load{Type: LoadGamma, Rate: 3, Burstiness: 0.25}, c.Scenarios[0].Load)
		}},
		{"gamma default burstiness", Quick{Rate: 3, Arrival: "gamma"}, func(t *testing.T, c *Config) {
			assert.Equal(t, DefaultBurstiness, c.Scenarios[0].Load.Burstiness)
		}},
		{"requests replace duration", Quick{Requests: 5}, func(t *testing.T, c *Config) {
			for _, s := range c.Scenarios {
				assert.Equal(t, 5, s.Requests, s.Name)
				assert.Zero(t, s.Duration, s.Name)
			}
		}},
		{"duration replaces requests", Quick{Duration: 3 * time.Second}, func(t *testing.T, c *Config) {
			for _, s := range c.Scenarios {
				assert.Zero(t, s.Requests, s.Name)
				assert.Equal(t, 3*time.Second, s.Duration, s.Name)
			}
		}},
		{"slo", Quick{SLO: "ttft=200ms,tpot=20ms"}, func(t *testing.T, c *Config) {
			assert.Equal(t, SLO{TTFT: 200 * time.Millisecond, TPOT: 20 * time.Millisecond, E2E: 5 * time.Second}, c.Scenarios[0].SLO)
			assert.Equal(t, SLO{TTFT: 200 * time.Millisecond, TPOT: 20 * time.Millisecond}, c.Scenarios[1].SLO)
		}},
		{"repetitions", Quick{Repetitions: 8}, func(t *testing.T, c *Config) {
			assert.Equal(t, Repetitions{Min: 8, Max: 8}, c.Repetitions)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := quickConfig(t)
			require.NoError(t, tc.q.Apply(c))
			tc.check(t, c)
		})
	}
}

// --workload replaces every workload, its path (relative to the current
// directory) kept relative to the config's directory.
func TestQuickApplyWorkload(t *testing.T) {
	c := quickConfig(t)
	t.Chdir(c.Dir)
	require.NoError(t, os.Mkdir("sub", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("sub", "x.jsonl"), []byte(`{"prompt":"hi","max_tokens":4}`+"\n"), 0o644))
	t.Chdir("sub")
	require.NoError(t, Quick{Workload: "x.jsonl"}.Apply(c))
	for _, s := range c.Scenarios {
		assert.Equal(t, "sub/x.jsonl", s.Workload, s.Name)
		assert.Nil(t, s.Synth, s.Name)
	}
	err := Quick{Workload: "missing.jsonl"}.Apply(quickConfig(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.jsonl not found")
}

// What the flags make invalid is refused, as it would be in the file.
func TestQuickApplyInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Quick
		want string
	}{
		{"target with /v1", Quick{Target: "http://127.0.0.1:8000/v1"}, "target.base_url: must be the server root without /v1"},
		{"too many users", Quick{Concurrency: MaxConcurrency + 1}, "scenarios[0].load.concurrency"},
		{"bad flags first", Quick{Concurrency: 1, Rate: 1}, "--concurrency and --rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.q.Apply(quickConfig(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A capacity search finds its own load: --concurrency cannot set it.
func TestQuickApplyCapacity(t *testing.T) {
	cfg, err := Parse([]byte(`
scenarios:
  - name: cap
    synth: {requests: 10, input: {type: fixed, value: 8}, output: {type: fixed, value: 4}}
    load: {type: poisson}
    capacity: {slo: {ttft.p99: 1s}, min: 1, max: 8}
`), filepath.Join(t.TempDir(), "perfgate.yaml"))
	require.NoError(t, err)
	err = Quick{Rate: 2}.Apply(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--rate: scenario cap is a capacity or headroom search")
}

// Build makes a one-scenario config from the flags alone, defaulted and
// valid, named after its load.
func TestQuickBuild(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		q     Quick
		check func(t *testing.T, c *Config)
	}{
		{"closed", Quick{Target: "http://127.0.0.1:9", Model: "m", Concurrency: 8, Requests: 40}, func(t *testing.T, c *Config) {
			s := c.Scenarios[0]
			assert.Equal(t, "closed-c8", s.Name)
			assert.Equal(t, Load{Type: LoadClosed, Concurrency: 8}, s.Load)
			assert.Equal(t, 40, s.Requests)
			require.NotNil(t, s.Synth)
			assert.Equal(t, 40, s.Synth.Requests)
			assert.Equal(t, "chat", s.Synth.API)
			assert.Equal(t, "m", c.Target.Model)
			assert.Equal(t, StackExternal, c.Stack.Kind)
			assert.Equal(t, Repetitions{Min: 1, Max: 1}, c.Repetitions)
			assert.Equal(t, "warn", c.Warmup.OnUnsteady)
			assert.Equal(t, DefaultQuickWarmupMax, c.Warmup.Max)
			assert.Equal(t, dir, c.Dir)
		}},
		{"defaults", Quick{Rate: 1.5}, func(t *testing.T, c *Config) {
			s := c.Scenarios[0]
			assert.Equal(t, "poisson-r1.5", s.Name)
			assert.Equal(t, DefaultBaseURL, c.Target.BaseURL)
			assert.Equal(t, DefaultModel, c.Target.Model)
			assert.Equal(t, DefaultQuickRequests, s.Synth.Requests)
			assert.Zero(t, s.Requests)
		}},
		{"gamma completions", Quick{Rate: 2, Arrival: "gamma", API: "completions", Duration: time.Minute, Repetitions: 3, SLO: "e2e=10s"}, func(t *testing.T, c *Config) {
			s := c.Scenarios[0]
			assert.Equal(t, "gamma-r2", s.Name)
			assert.Equal(t, "completions", s.Synth.API)
			assert.Equal(t, time.Minute, s.Duration)
			assert.Equal(t, 10*time.Second, s.SLO.E2E)
			assert.Equal(t, Repetitions{Min: 3, Max: 3}, c.Repetitions)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.q.Build(dir)
			require.NoError(t, err)
			tc.check(t, c)
			// What Build made validates as a file does.
			require.NoError(t, c.Validate())
		})
	}
}

func TestQuickBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    Quick
		want string
	}{
		{"no load", Quick{Target: "http://127.0.0.1:9"}, "a config from the flags alone needs a load: give --concurrency N"},
		{"bad target", Quick{Target: "ftp://x", Concurrency: 1}, "the config the flags make: target.base_url: must be an http or https URL"},
		{"missing workload", Quick{Concurrency: 1, Workload: "nope.jsonl"}, "nope.jsonl not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.q.Build(t.TempDir())
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tc.want), "Build() = %v, want %q in it", err, tc.want)
		})
	}
}
