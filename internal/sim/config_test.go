package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigValid(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"error rate", func(c *Config) { c.ErrorRate = 1.5 }, "--error-rate: must be in [0,1], got 1.5"},
		{"negative error rate", func(c *Config) { c.ErrorRate = -0.1 }, "--error-rate"},
		{"max batch", func(c *Config) { c.MaxBatch = 0 }, "--max-batch: must be >= 1, got 0"},
		{"kv", func(c *Config) { c.KVCacheTokens = -1 }, "--kv-cache-tokens"},
		{"step base", func(c *Config) { c.StepBase = -time.Millisecond }, "--step-base: must be >= 0, got -1ms"},
		{"per seq", func(c *Config) { c.PerSeq = -1 }, "--per-seq"},
		{"per prefill token", func(c *Config) { c.PerPrefillToken = -1 }, "--per-prefill-token"},
		{"prefill budget", func(c *Config) { c.PrefillBudget = 0 }, "--prefill-budget"},
		{"slowdown", func(c *Config) { c.Slowdown = 0 }, "--slowdown"},
		{"jitter", func(c *Config) { c.Jitter = 2 }, "--jitter"},
		{"stall", func(c *Config) { c.Stall = -1 }, "--stall:"},
		{"stall every", func(c *Config) { c.StallEvery = -1 }, "--stall-every"},
		{"cold start", func(c *Config) { c.ColdStart = -1 }, "--cold-start"},
		{"warm up", func(c *Config) { c.WarmUp = -1 }, "--warm-up:"},
		{"warm up factor", func(c *Config) { c.WarmUpFactor = 0.5 }, "--warm-up-factor"},
		{"drift negative", func(c *Config) { c.Drift = -0.1 }, "--drift: must be a rate per minute in [0,1000] (0.3 = +30% a minute), got -0.1"},
		{"drift NaN", func(c *Config) { c.Drift = math.NaN() }, "--drift: must be a rate per minute in [0,1000]"},
		{"drift infinite", func(c *Config) { c.Drift = math.Inf(1) }, "got +Inf"},
		{"drift too fast", func(c *Config) { c.Drift = 1001 }, "got 1001"},
		{"drift epoch before 1970", func(c *Config) { c.DriftEpoch = time.Unix(-1, 0) }, "--drift-epoch: must be from 0 to 7258118399 in Unix seconds"},
		{"drift epoch in milliseconds", func(c *Config) { c.DriftEpoch = time.Unix(1767225600000, 0) }, "milliseconds? divide by 1000"},
		{"model", func(c *Config) { c.Model = "" }, "--model"},
		{"zero value", func(c *Config) { *c = Config{} }, "--max-batch"},
		{"kv policy", func(c *Config) { c.KVPolicy = "lru" }, `--kv-policy: must be reserve or preempt, got "lru"`},
		{"max model len", func(c *Config) { c.MaxModelLen = -1 }, "--max-model-len: must be >= 0 (0: no limit), got -1"},
		{"oom tokens", func(c *Config) { c.OOMTokens = -1 }, "--oom-tokens: must be >= 0 (0: never), got -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			require.ErrorContains(t, c.Validate(), tc.want)
		})
	}
	c := DefaultConfig()
	c.ErrorRate, c.MaxBatch = 3, 0
	err := c.Validate()
	require.ErrorContains(t, err, "--error-rate")
	require.ErrorContains(t, err, "--max-batch", "every problem is reported")
}

func TestRegisterFlags(t *testing.T) {
	c := DefaultConfig()
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	RegisterFlags(fs, &c)
	for _, name := range []string{"model", "max-batch", "kv-cache-tokens", "step-base", "per-seq", "per-prefill-token",
		"prefill-budget", "seed", "slowdown", "jitter", "stall-every", "stall", "error-rate", "cold-start", "warm-up", "warm-up-factor", "drift", "drift-epoch"} {
		f := fs.Lookup(name)
		require.NotNil(t, f, "--%s", name)
		require.NotEmpty(t, f.Usage, "--%s", name)
	}
	require.Equal(t, "12ms", fs.Lookup("step-base").DefValue)
	require.Equal(t, "256", fs.Lookup("max-batch").DefValue)
	require.NoError(t, fs.Parse(strings.Fields("--model m --max-batch 8 --kv-cache-tokens 1000 --step-base 5ms --per-seq 1us --per-prefill-token 2us --prefill-budget 64 --seed 9 --slowdown 1.5 --jitter 0.1 --stall-every 1s --stall 100ms --error-rate 0.25 --cold-start 2s --warm-up 3s --warm-up-factor 4")))
	want := DefaultConfig()
	want.Model, want.MaxBatch, want.KVCacheTokens = "m", 8, 1000
	want.StepBase, want.PerSeq, want.PerPrefillToken, want.PrefillBudget = 5*time.Millisecond, time.Microsecond, 2*time.Microsecond, 64
	want.Seed, want.Slowdown, want.Jitter = 9, 1.5, 0.1
	want.StallEvery, want.Stall, want.ErrorRate = time.Second, 100*time.Millisecond, 0.25
	want.ColdStart, want.WarmUp, want.WarmUpFactor = 2*time.Second, 3*time.Second, 4
	require.Equal(t, want, c)
}

// The KV-cache knobs: reserve, no limits by default ("" reads as reserve);
// each flag sets its field.
func TestKVFlags(t *testing.T) {
	c := DefaultConfig()
	require.Equal(t, KVReserve, c.KVPolicy)
	c.KVPolicy = ""
	require.NoError(t, c.Validate(), "an unset policy is reserve")
	require.False(t, c.preempts())

	c = DefaultConfig()
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	RegisterFlags(fs, &c)
	for name, def := range map[string]string{"kv-policy": "reserve", "max-model-len": "0", "oom-tokens": "0"} {
		f := fs.Lookup(name)
		require.NotNil(t, f, "--%s", name)
		require.NotEmpty(t, f.Usage, "--%s", name)
		require.Equal(t, def, f.DefValue, "--%s", name)
	}
	require.NoError(t, fs.Parse(strings.Fields("--kv-policy preempt --max-model-len 4096 --oom-tokens 8192")))
	want := DefaultConfig()
	want.KVPolicy, want.MaxModelLen, want.OOMTokens = KVPreempt, 4096, 8192
	require.Equal(t, want, c)
	require.NoError(t, c.Validate())
}
