package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headroomConfig is a preempting cache of 1000 tokens, edited.
func headroomConfig(edit func(*Config)) Config {
	c := DefaultConfig()
	c.KVPolicy, c.KVCacheTokens = KVPreempt, 1000
	if edit != nil {
		edit(&c)
	}
	return c
}

func TestHeadroomContext(t *testing.T) {
	reserve := func(c *Config) { c.KVPolicy = KVReserve }
	for _, tc := range []struct {
		name          string
		cfg           Config
		users, output int
		want          int
	}{
		// A sequence of context C holds C - 1 tokens at most: 4 × 250 fit.
		{"4 users", headroomConfig(nil), 4, 50, 251},
		{"5 users", headroomConfig(nil), 5, 50, 201},
		{"3 users", headroomConfig(nil), 3, 50, 334},
		{"1 user: the whole cache", headroomConfig(nil), 1, 50, 1000},
		{"--max-model-len", headroomConfig(func(c *Config) { c.MaxModelLen = 300 }), 1, 50, 300},
		{"--max-model-len above the users' share", headroomConfig(func(c *Config) { c.MaxModelLen = 300 }), 4, 50, 251},
		{"--oom-tokens", headroomConfig(func(c *Config) { c.OOMTokens = 200 }), 4, 50, 200},
		{"users past --max-batch wait", headroomConfig(func(c *Config) { c.MaxBatch = 2 }), 10, 50, 501},
		{"no prompt fits", headroomConfig(nil), 4, 300, 0},
		{"no users", headroomConfig(nil), 0, 50, 0},
		{"reserve never preempts", headroomConfig(reserve), 4, 50, 1000},
		{"reserve with --max-model-len", headroomConfig(func(c *Config) { reserve(c); c.MaxModelLen = 300 }), 4, 50, 300},
		{"defaults", DefaultConfig(), 256, 128, 262144},
		{"defaults, preempt", func() Config { c := DefaultConfig(); c.KVPolicy = KVPreempt; return c }(), 256, 128, 262144/256 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.cfg.HeadroomContext(tc.users, tc.output))
		})
	}
}

func TestHeadroomUsers(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cfg             Config
		context, output int
		want            int
	}{
		{"250 tokens", headroomConfig(nil), 250, 50, 4}, // 1000 / 249
		{"251 tokens", headroomConfig(nil), 251, 50, 4}, // 1000 / 250
		{"252 tokens", headroomConfig(nil), 252, 50, 3}, // 1000 / 251
		{"201 tokens", headroomConfig(nil), 201, 50, 5}, // 1000 / 200
		{"the whole cache", headroomConfig(nil), 1000, 50, 1},
		{"past the cache: refused", headroomConfig(nil), 1001, 50, 0},
		{"no prompt", headroomConfig(nil), 50, 50, 0},
		{"--max-batch fits", headroomConfig(func(c *Config) { c.MaxBatch = 4 }), 251, 50, math.MaxInt},
		{"--max-batch does not fit", headroomConfig(func(c *Config) { c.MaxBatch = 4 }), 252, 50, 3},
		{"past --oom-tokens", headroomConfig(func(c *Config) { c.OOMTokens = 200 }), 201, 50, 0},
		{"at --oom-tokens", headroomConfig(func(c *Config) { c.OOMTokens = 200 }), 200, 50, 5}, // 1000 / 199
		{"past --max-model-len", headroomConfig(func(c *Config) { c.MaxModelLen = 200 }), 201, 50, 0},
		{"reserve", headroomConfig(func(c *Config) { c.KVPolicy = KVReserve }), 250, 50, math.MaxInt},
		{"reserve past the cache", headroomConfig(func(c *Config) { c.KVPolicy = KVReserve }), 1001, 50, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.cfg.HeadroomUsers(tc.context, tc.output))
		})
	}
}

// HeadroomUsers and HeadroomContext are one boundary seen from two sides:
// u users hold c tokens iff HeadroomContext(u) >= c iff HeadroomUsers(c) >= u.
func TestHeadroomDual(t *testing.T) {
	for i, cfg := range []Config{
		headroomConfig(nil),
		headroomConfig(func(c *Config) { c.MaxBatch = 7 }),
		headroomConfig(func(c *Config) { c.MaxModelLen, c.OOMTokens = 300, 280 }),
		headroomConfig(func(c *Config) { c.KVCacheTokens = 997 }),
		headroomConfig(func(c *Config) { c.KVPolicy = KVReserve; c.MaxModelLen = 400 }),
	} {
		for users := 1; users <= 40; users++ {
			for _, output := range []int{1, 7, 50, 128} {
				c := cfg.HeadroomContext(users, output)
				if c == 0 {
					assert.Less(t, cfg.HeadroomUsers(output+1, output), users, "config %d, %d users, %d out: no context", i, users, output)
					continue
				}
				assert.GreaterOrEqual(t, cfg.HeadroomUsers(c, output), users, "config %d, %d users, %d out: context %d", i, users, output, c)
				assert.Less(t, cfg.HeadroomUsers(c+1, output), users, "config %d, %d users, %d out: context %d + 1", i, users, output, c)
			}
		}
	}
}

// TestDeclared: the declaration is the model DefaultConfig's reasoning
// assumes: 128 KiB of KV a token (so KVCacheTokens is 32 GiB), ~16 GB of
// weights that a decode step reads in ~5 ms at peak bandwidth, under
// StepBase.
func TestDeclared(t *testing.T) {
	cfg := DefaultConfig()
	d := cfg.Declared()
	assert.Equal(t, Declared{Params: 8.03e9, BytesPerWeight: 2, Layers: 32, KVHeads: 8, HeadDim: 128, KVBytesPerElement: 2,
		GPU: "simulated H100 SXM", PeakBandwidthGBs: 3350, PeakTFLOPS: 989}, d)
	assert.Equal(t, 128.0*1024, d.KVBytesPerToken())
	assert.Equal(t, 32.0*(1<<30), float64(cfg.KVCacheTokens)*d.KVBytesPerToken())
	assert.Equal(t, 16.06e9, d.WeightBytes())
	read := time.Duration(d.WeightBytes() / (d.PeakBandwidthGBs * 1e9) * float64(time.Second))
	assert.InDelta(t, 4.8, read.Seconds()*1e3, 0.05, "ms to read the weights")
	assert.Less(t, read, cfg.StepBase)

	// Shorter steps stand for a faster GPU, so that the figures computed
	// from the simulator's speed keep their meaning.
	cfg.StepBase = 3 * time.Millisecond
	fast := cfg.Declared()
	assert.Equal(t, 4*3350.0, fast.PeakBandwidthGBs)
	assert.Equal(t, 4*989.0, fast.PeakTFLOPS)
	assert.Equal(t, "simulated H100 SXM, 4x as fast (--step-base 3ms)", fast.GPU)
	cfg.Slowdown = 2
	assert.Equal(t, fast, cfg.Declared(), "a slowdown is a regression, not another GPU")
}

// TestModelsMeta: every model of /v1/models carries the declaration in a
// llama.cpp-shaped "meta", and max_model_len (and n_ctx_train) is the
// longest context served.
func TestModelsMeta(t *testing.T) {
	// testConfig's steps are 2 ms, six times shorter than the default's
	// 12: the GPU it stands for is six times as fast.
	const meta = `{"n_params":8030000000,"size":16060000000,"n_ctx_train":%d,"n_layer":32,"n_head_kv":8,"head_dim":128,` +
		`"kv_bytes_per_element":2,"gpu":"simulated H100 SXM, 6x as fast (--step-base 2ms)","peak_bandwidth_gbs":20100,"peak_tflops":5934,"simulated":true}`
	for _, tc := range []struct {
		name   string
		edit   func(*Config)
		models int
		ctx    int
	}{
		{"defaults", func(*Config) {}, 1, 262144},
		{"--max-model-len", func(c *Config) { c.MaxModelLen = 4096 }, 1, 4096},
		{"--max-model-len past the cache", func(c *Config) { c.MaxModelLen = 1 << 20 }, 1, 262144},
		{"adapters", func(c *Config) { c.Loras = []string{"chat"} }, 2, 262144},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			tc.edit(&cfg)
			s := startSim(t, cfg)
			code, body := get(t, s.URL()+"/v1/models")
			require.Equal(t, http.StatusOK, code)
			var list struct {
				Data []struct {
					ID          string          `json:"id"`
					MaxModelLen int             `json:"max_model_len"`
					Meta        json.RawMessage `json:"meta"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(body, &list))
			require.Len(t, list.Data, tc.models)
			for _, m := range list.Data {
				assert.Equal(t, tc.ctx, m.MaxModelLen, m.ID)
				assert.JSONEq(t, fmt.Sprintf(meta, tc.ctx), string(m.Meta), m.ID)
			}
		})
	}
}
