package result

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// headroomResult is capacityResult's search as a headroom search over
// context at 4 users: probes at 80 tokens held and 160 broke on a refusal,
// with a measured calibration and a utilization basis.
func headroomResult() *Result {
	r := capacityResult()
	c := r.Scenarios[0].Capacity
	c.Search.Metric, c.Search.SLO = HeadroomContext, map[string]float64{}
	c.Search.Headroom = &HeadroomSearch{Users: 4, OutputTokens: 16}
	c.Probes[1].Why, c.Probes[1].Restarted = "rep 1: 4 of 4 requests failed: http 400: too long", true
	for i := range c.Probes {
		c.Probes[i].Margin = map[string]float64{}
	}
	c.Boundary = c.Probes[1].Why
	c.Calibration = &Calibration{TokensPerWord: 1.3, OverheadTokens: 12, Measured: true}
	r.Utilization = &UtilizationBasis{Params: 8e9, WeightBytes: 16e9, KVBytesPerToken: 131072, GPU: "H100 SXM", GPUs: 1,
		PeakBandwidthGBs: 3350, PeakTFLOPS: 989, Sources: []string{"parameters: the config"}}
	return r
}

func TestValidateHeadroom(t *testing.T) {
	require.NoError(t, headroomResult().Validate(), "the valid fixture")
	c := func(r *Result) *Capacity { return r.Scenarios[0].Capacity }
	f := func(x float64) *float64 { return &x }
	cases := []struct {
		name   string
		change func(r *Result)
		want   string
	}{
		{"no users", func(r *Result) { c(r).Search.Headroom.Users = 0 }, "headroom.users: a search over context holds users fixed (1 to 10000)"},
		{"too many users", func(r *Result) { c(r).Search.Headroom.Users = 1 << 40 }, "headroom.users"},
		{"users search without a context", func(r *Result) { c(r).Search.Metric = "concurrency" }, "headroom.context: a search over users holds a context fixed"},
		{"output past the context", func(r *Result) {
			c(r).Search.Metric, c(r).Search.Headroom.Users, c(r).Search.Headroom.Context = "concurrency", 0, 16
		}, "headroom.output_tokens: want from 1 to below the context, got 16"},
		{"endless preemptions", func(r *Result) { c(r).Search.Headroom.MaxPreemptions = 1e300 }, "headroom.max_preemptions: want at most 1e9"},
		{"a KV limit past 1", func(r *Result) { c(r).Search.Headroom.MaxKVCache = 2 }, "headroom.max_kv_cache: want a fraction from 0 to 1"},
		{"a word of a million tokens", func(r *Result) { c(r).Calibration.TokensPerWord = 1e6 }, "calibration.tokens_per_word: want from 0 (exclusive) to 1000"},
		{"an assumed calibration that is not one a word", func(r *Result) {
			c(r).Calibration.Measured = false
		}, "calibration.tokens_per_word: an assumed calibration is one token a word and no overhead"},
		{"a boundary of a megabyte", func(r *Result) { c(r).Boundary = strings.Repeat("x", 1<<20) }, "capacity.boundary: want at most 2048 bytes"},
		{"a held probe that broke", func(r *Result) { c(r).Probes[0].Why = "rep 1: cut" }, "probes[0].held: held, and broke because rep 1: cut"},
		{"a held probe the server died under", func(r *Result) { c(r).Probes[0].Restarted = true }, "probes[0].restarted: held, and the server died under it"},
		{"a capacity search with a boundary", func(r *Result) {
			c(r).Search.Headroom = nil
			c(r).Search.Metric = "request_rate"
			c(r).Search.SLO = map[string]float64{"tpot.p99": 3}
		}, "a capacity search has no boundary or calibration"},
		{"a headroom search past a million tokens", func(r *Result) { c(r).Search.Max = 1 << 30 }, "search.max: a headroom search probes from 1 to 1048576"},
		{"an MBU of 150%", func(r *Result) { r.Scenarios[0].Repetitions[0].Utilization = &Utilization{MBU: f(1.5)} }, "repetitions[0].utilization.mbu: want a fraction from 0 to 1, got 1.5"},
		{"negative GPUs", func(r *Result) { r.Utilization.GPUs = -5 }, "utilization.gpus: want from 1 to 10000, got -5"},
		{"a negative peak", func(r *Result) { r.Utilization.PeakTFLOPS = -1 }, "utilization.peak_tflops: want from 0 to 1e+06, got -1"},
		{"a source of a megabyte", func(r *Result) { r.Utilization.Sources = []string{strings.Repeat("x", 1<<20)} }, "utilization.sources[0]: want at most 512 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := headroomResult()
			tc.change(r)
			err := r.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
