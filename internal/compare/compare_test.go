package compare

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// fakeResult builds a result of one scenario whose repetitions have the
// given TTFT p99 values, with the other metrics steady.
func fakeResult(name string, ttftP99 ...float64) *result.Result {
	s := result.ScenarioResult{Name: name, WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 8}}
	for i, v := range ttftP99 {
		s.Repetitions = append(s.Repetitions, result.Repetition{
			Index: i + 1, TTFT: result.Stats{P95: v * 0.9, P99: v}, TPOT: result.Stats{P99: 10}, E2E: result.Stats{P99: 200},
			OutputThroughput: 1000, Goodput: 50, TokensFrom: "usage",
		})
	}
	return &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}},
		Scenarios: []result.ScenarioResult{s}}
}

func noisy(r *rand.Rand, n int, center, cv float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + cv*r.NormFloat64())
	}
	return out
}

func TestCompareOutcomes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := fakeResult("chat", noisy(r, 10, 100, 0.02)...)
	tests := []struct {
		name string
		cand []float64
		want stat.Outcome
		code int
	}{
		{"same", noisy(r, 10, 100, 0.02), stat.Pass, exit.OK},
		{"30% slower", noisy(r, 10, 130, 0.02), stat.Regression, exit.Regression},
		{"3% slower within 15%", noisy(r, 10, 103, 0.02), stat.Pass, exit.OK},
		{"two samples", noisy(r, 2, 100, 0.02), stat.Inconclusive, exit.Regression},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compare([]*result.Result{base}, fakeResult("chat", tt.cand...), Options{})
			require.NoError(t, err)
			var ttft Gate
			for _, g := range v.Scenarios[0].Gates {
				if g.Metric == "ttft.p99" {
					ttft = g
				}
			}
			assert.Equal(t, tt.want, ttft.Outcome, ttft.Reason)
			assert.Equal(t, tt.want, v.Outcome)
			assert.Equal(t, tt.code, v.ExitCode())
			assert.Equal(t, 10, v.Scenarios[0].BaselineN)
			assert.Equal(t, len(tt.cand), v.Scenarios[0].CandidateN)
			assert.Equal(t, "+20%", ttft.Tolerance, "the default tolerance")
			// Regressions come first.
			for i := 1; i < len(v.Scenarios[0].Gates); i++ {
				assert.LessOrEqual(t, rank(v.Scenarios[0].Gates[i-1].Outcome), rank(v.Scenarios[0].Gates[i].Outcome))
			}
		})
	}
}

func TestOnInconclusivePass(t *testing.T) {
	v, err := Compare([]*result.Result{fakeResult("chat", 1, 2, 3, 4, 5)}, fakeResult("chat", 1, 2), Options{OnInconclusive: config.InconclusivePass})
	require.NoError(t, err)
	assert.Equal(t, stat.Inconclusive, v.Outcome, "shown as inconclusive, never as a pass")
	assert.Equal(t, exit.OK, v.ExitCode())
}

func TestIdentityMismatchRefused(t *testing.T) {
	base := fakeResult("chat", 1, 2, 3, 4, 5)
	cand := fakeResult("chat", 1, 2, 3, 4, 5)
	base.Identity.GPUs = []result.GPU{{Model: "NVIDIA H100 80GB HBM3"}}
	cand.Identity.GPUs = []result.GPU{{Model: "NVIDIA H100 80GB HBM3"}, {Model: "NVIDIA H100 80GB HBM3"}}
	cand.Scenarios[0].WorkloadHash = "sha256:other"
	cand.Scenarios[0].Load.Concurrency = 16
	cand.Identity.Server.Version = "0.7.0"
	cand.Identity.Stack.Args = []string{"--quantization", "fp8"}

	_, err := Compare([]*result.Result{base}, cand, Options{})
	var mm *MismatchError
	require.True(t, errors.As(err, &mm), "%v", err)
	assert.Len(t, mm.Differences, 3)
	msg := err.Error()
	assert.Contains(t, msg, "GPU: 1× NVIDIA H100 80GB HBM3 → 2× NVIDIA H100 80GB HBM3")
	assert.Contains(t, msg, "scenario chat: workload hash: sha256:w → sha256:other")
	assert.Contains(t, msg, `scenario chat: load shape: {"type":"closed","concurrency":8} → {"type":"closed","concurrency":16}`)
	assert.Contains(t, msg, "--allow-mismatch")
	assert.NotContains(t, msg, "engine version", "what a PR changes is not a mismatch")

	v, err := Compare([]*result.Result{base}, cand, Options{AllowMismatch: true})
	require.NoError(t, err)
	assert.Len(t, v.Mismatches, 3)
	assert.Contains(t, v.Changes, Difference{Field: "engine version", Baseline: "0.6.3", Candidate: "0.7.0"})
	assert.Contains(t, v.Changes, Difference{Field: "stack args", Baseline: "", Candidate: "--quantization fp8"})
	assert.NotEmpty(t, v.Warnings)
}

func TestNoBaselineForScenario(t *testing.T) {
	base := fakeResult("chat", 1, 2, 3, 4, 5)
	cand := fakeResult("chat", 1, 2, 3, 4, 5)
	other := fakeResult("long", 1, 2, 3, 4, 5).Scenarios[0]
	cand.Scenarios = append(cand.Scenarios, other)
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios, 2)
	assert.Equal(t, "long", v.Scenarios[1].Name)
	assert.True(t, v.Scenarios[1].NoBaseline)
	assert.Contains(t, v.Warnings, "scenario long has no baseline: not compared")

	_, err = Compare([]*result.Result{base}, fakeResult("long", 1, 2), Options{})
	assert.ErrorContains(t, err, "no scenario of the result ([long]) has a baseline")
}

func TestColdStartNotGatedWithOneStart(t *testing.T) {
	base := fakeResult("chat", 1, 2, 3, 4, 5)
	cand := fakeResult("chat", 1, 2, 3, 4, 5)
	base.Scenarios[0].ColdStartMS, cand.Scenarios[0].ColdStartMS = 3000, 9000
	v, err := Compare([]*result.Result{base}, cand, Options{Tail: config.TailOff})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].NotGated, 1)
	ng := v.Scenarios[0].NotGated[0]
	assert.Equal(t, "cold_start", ng.Metric)
	assert.Equal(t, []Num{3000}, ng.Baseline)
	assert.Equal(t, []Num{9000}, ng.Candidate)
	assert.Contains(t, ng.Reason, "once per stack start")
}

func TestVerdictJSONHasNoInfinities(t *testing.T) {
	v, err := Compare([]*result.Result{fakeResult("chat", 1, 2)}, fakeResult("chat", 1, 2), Options{})
	require.NoError(t, err)
	data, err := json.Marshal(v)
	require.NoError(t, err, "an unbounded interval must encode")
	assert.Contains(t, string(data), `"lo":null`)
}

func TestLooks(t *testing.T) {
	assert.Equal(t, []int{5, 9, 13, 15}, Looks(5, 15))
	assert.Equal(t, []int{5, 7, 9, 10}, Looks(5, 10))
	assert.Equal(t, []int{5, 6}, Looks(5, 6))
	assert.Equal(t, []int{5}, Looks(5, 5))
	for _, mm := range [][2]int{{1, 100}, {4, 7}, {2, 3}} {
		l := Looks(mm[0], mm[1])
		assert.LessOrEqual(t, len(l), MaxLooks)
		assert.Equal(t, mm[0], l[0])
		assert.Equal(t, mm[1], l[len(l)-1])
	}
}

// A sequential gate spends at most alpha over its looks, and a gate decided
// at one look keeps its decision.
func TestSequentialSpendsAlphaAndFreezes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := fakeResult("chat", noisy(r, 15, 100, 0.02)...)
	all := noisy(r, 15, 100, 0.02)
	seq := &Sequential{Options: Options{Alpha: 0.05}, Min: 5, Max: 15, Share: 0.05}
	spent := 0.0
	for _, n := range Looks(5, 15) {
		partial := fakeResult("chat", all[:n]...).Scenarios[0]
		_, level, err := seq.Look(base, &partial)
		require.NoError(t, err)
		spent += level
	}
	assert.InDelta(t, 0.05, spent, 1e-12, "the levels of all looks add up to alpha")

	v, err := seq.Final([]*result.Result{base}, fakeResult("chat", all...), false)
	require.NoError(t, err)
	assert.True(t, v.Sequential)
	for _, g := range v.Scenarios[0].Gates {
		if g.Outcome != stat.Inconclusive {
			assert.Contains(t, g.Reason, "decided at 5 repetitions", g.Metric)
			assert.Equal(t, 5, g.Candidate.N)
		}
	}
}

// withGPUMemory gives every repetition of r GPU telemetry with peaks around
// mib (±0.5%, so that the samples differ).
func withGPUMemory(r *result.Result, mib float64) *result.Result {
	for i := range r.Scenarios[0].Repetitions {
		rep := &r.Scenarios[0].Repetitions[i]
		rep.GPU = &result.GPUTelemetry{Source: "nvidia-smi", MemoryPeakMiB: mib * (1 + 0.005*float64(i%3-1))}
	}
	r.Scenarios[0].Gates = []result.Gate{{Metric: "gpu_memory_peak", Tolerance: "+5%"}}
	return r
}

// A telemetry metric gates through the same path as a latency: 20% more GPU
// memory is a regression at +5%, the same memory passes, and a side without
// GPU telemetry stops the comparison with the metric, the side and the reason.
func TestGateGPUMemoryPeak(t *testing.T) {
	base := withGPUMemory(fakeResult("chat", 100, 100, 100, 100, 100, 100), 40000)
	same := withGPUMemory(fakeResult("chat", 100, 100, 100, 100, 100, 100), 40000)
	more := withGPUMemory(fakeResult("chat", 100, 100, 100, 100, 100, 100), 48000)

	v, err := Compare([]*result.Result{base}, same, Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].Gates, 1)
	g := v.Scenarios[0].Gates[0]
	assert.Equal(t, "gpu_memory_peak", g.Metric)
	assert.Equal(t, "MiB", g.Unit)
	assert.Equal(t, stat.Pass, g.Outcome, g.Reason)

	v, err = Compare([]*result.Result{base}, more, Options{})
	require.NoError(t, err)
	g = v.Scenarios[0].Gates[0]
	assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
	assert.Equal(t, exit.Regression, v.ExitCode())

	none := fakeResult("chat", 100, 100, 100, 100, 100, 100)
	none.Scenarios[0].Gates = []result.Gate{{Metric: "gpu_memory_peak", Tolerance: "+5%"}}
	_, err = Compare([]*result.Result{base}, none, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "candidate scenario chat: gpu_memory_peak was not measured in repetition 1: no GPU telemetry")
	var nm *result.NotMeasuredError
	assert.ErrorAs(t, err, &nm)
}

// Identity: revision, quantisation, driver, CUDA, the GPU price and
// sampling parameters are reported; sampling is a mismatch, the rest changes.
func TestIdentityTelemetryFields(t *testing.T) {
	base := fakeResult("chat", 1, 2, 3, 4, 5)
	cand := fakeResult("chat", 1, 2, 3, 4, 5)
	base.Identity.GPUs = []result.GPU{{Model: "NVIDIA H100 80GB HBM3", Driver: "550.54.15", CUDA: "12.4"}}
	cand.Identity.GPUs = []result.GPU{{Model: "NVIDIA H100 80GB HBM3", Driver: "560.35.03", CUDA: "12.6"}}
	base.Identity.Target.Quantization, cand.Identity.Target.Quantization = "", "fp8"
	base.Identity.Target.Revision, cand.Identity.Target.Revision = "abc", "def"
	base.Cost, cand.Cost = &result.Price{USDPerGPUHour: 2.5, GPUs: 1}, &result.Price{USDPerGPUHour: 3, GPUs: 1}
	base.Scenarios[0].Sampling = map[string]string{"temperature": "0"}
	cand.Scenarios[0].Sampling = map[string]string{"temperature": "0.7", "top_p": "0.9"}

	_, err := Compare([]*result.Result{base}, cand, Options{})
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, []Difference{{Scenario: "chat", Field: "sampling", Baseline: "temperature=0", Candidate: "temperature=0.7; top_p=0.9"}}, mm.Differences)

	cand.Scenarios[0].Sampling = base.Scenarios[0].Sampling
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	assert.Subset(t, v.Changes, []Difference{
		{Field: "model revision", Baseline: "abc", Candidate: "def"},
		{Field: "quantization", Baseline: "", Candidate: "fp8"},
		{Field: "GPU driver", Baseline: "550.54.15", Candidate: "560.35.03"},
		{Field: "CUDA", Baseline: "12.4", Candidate: "12.6"},
		{Field: "GPU price", Baseline: "$2.5/GPU-hour × 1 GPU", Candidate: "$3/GPU-hour × 1 GPU"},
	})
}

// A salted side measures prefills and an unsalted one a warm prompt cache:
// not comparable. A result from before salting (no value) is compared.
func TestSaltMismatch(t *testing.T) {
	base := fakeResult("chat", 1, 2, 3, 4, 5)
	cand := fakeResult("chat", 1, 2, 3, 4, 5)
	base.Scenarios[0].Salt, cand.Scenarios[0].Salt = result.SaltOff, result.SaltPerPass
	_, err := Compare([]*result.Result{base}, cand, Options{})
	var mm *MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, []Difference{{Scenario: "chat", Field: "prompt salting", Baseline: "off", Candidate: "per-pass"}}, mm.Differences)

	base.Scenarios[0].Salt = ""
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios, 1)
	assert.Contains(t, strings.Join(v.Scenarios[0].Warnings, "\n"), "the baseline was measured by a perfgate from before prompt salting")
}

// A final verdict gives each per-repetition gate the change its own noise
// lets it tell apart; a sequential gate's looks leave it out.
func TestDetectableInVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	base, cand := fakeResult("chat", noisy(r, 10, 100, 0.05)...), fakeResult("chat", noisy(r, 10, 100, 0.05)...)
	v, err := Compare([]*result.Result{base}, cand, Options{Alpha: 0.05, Detectable: true})
	require.NoError(t, err)
	g := gateOf(t, v.Scenarios[0], "ttft.p99")
	require.NotNil(t, g.Detectable)
	in := stat.Gate{Baseline: numsToFloats(g.Baseline.Values), Candidate: numsToFloats(g.Candidate.Values), Relative: true}
	noise, ok := sampleNoise(in, false)
	require.True(t, ok)
	assert.InDelta(t, 0.05, noise.Within, 0.03, "about the noise drawn")
	assert.Greater(t, float64(*g.Detectable), 0.02)
	assert.Less(t, float64(*g.Detectable), 0.15)
	tput := gateOf(t, v.Scenarios[0], "output_throughput")
	require.NotNil(t, tput.Detectable)
	assert.Zero(t, float64(*tput.Detectable), "a constant throughput: any change is told apart")

	seq := &Sequential{Options: Options{Alpha: 0.05}, Min: 5, Max: 10, Share: 0.05}
	_, _, err = seq.Look(base, &cand.Scenarios[0])
	require.NoError(t, err)
	final, err := seq.Final([]*result.Result{base}, cand, false)
	require.NoError(t, err)
	assert.NotNil(t, gateOf(t, final.Scenarios[0], "ttft.p99").Detectable, "the final verdict has it")
	plain, err := Compare([]*result.Result{base}, cand, Options{Alpha: 0.05})
	require.NoError(t, err)
	assert.Nil(t, gateOf(t, plain.Scenarios[0], "ttft.p99").Detectable, "a look has none")
}

func numsToFloats(ns []Num) []float64 {
	out := make([]float64, len(ns))
	for i, n := range ns {
		out[i] = float64(n)
	}
	return out
}

// Two sides of an open loop that replays one schedule in every repetition
// are warned of when their seeds differ: each replayed its own schedule.
// Fresh arrivals spread the samples by the draws, a closed loop draws none,
// and an unknown seed says nothing.
func TestSeedWarning(t *testing.T) {
	one, two := new(int64(1)), new(int64(2))
	open := result.Load{Type: "poisson", Rate: 10}
	for _, tc := range []struct {
		name       string
		load       result.Load
		base, cand *int64
		warn       bool
	}{
		{"seeds differ, one schedule", open, one, two, true},
		{"gamma too", result.Load{Type: "gamma", Rate: 10, Burstiness: 0.5}, one, two, true},
		{"the same seed", open, one, one, false},
		{"fresh arrivals", result.Load{Type: "poisson", Rate: 10, Arrivals: "fresh"}, one, two, false},
		{"a closed loop", result.Load{Type: "closed", Concurrency: 8}, one, two, false},
		{"a baseline from before seeds", open, nil, two, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c := fakeResult("chat", 100, 101, 99, 100, 102, 98), fakeResult("chat", 100, 101, 99, 100, 102, 98)
			b.Scenarios[0].Load, c.Scenarios[0].Load = tc.load, tc.load
			b.Scenarios[0].Seed, c.Scenarios[0].Seed = tc.base, tc.cand
			v, err := Compare([]*result.Result{b}, c, Options{})
			require.NoError(t, err)
			ws := strings.Join(v.Scenarios[0].Warnings, "\n")
			if tc.warn {
				assert.Contains(t, ws, "the baseline ran with seed 1 and the candidate with seed 2: every repetition of a side replayed that side's one arrival schedule (load.arrivals: same)")
			} else {
				assert.NotContains(t, ws, "ran with seed")
			}
		})
	}
}

func withStructured(r *result.Result, wrong ...int) *result.Result {
	for i := range r.Scenarios[0].Repetitions {
		rep := &r.Scenarios[0].Repetitions[i]
		if len(wrong) > 0 {
			rep.Structured, rep.StructuredErrors = 50, wrong[i%len(wrong)]
			rep.StructuredErrorRate = float64(rep.StructuredErrors) / 50
		}
	}
	r.Scenarios[0].Gates = []result.Gate{{Metric: "structured_error_rate", Tolerance: "+1 points"}}
	return r
}

// structured_error_rate gates as a share: 3 of 50 wrong answers a
// repetition against none is a regression at +1 point; the same passes; a
// baseline from before perfgate counted them is shown, not gated, and
// does not stop the comparison.
func TestGateStructuredErrorRate(t *testing.T) {
	rates := func(wrong ...int) *result.Result {
		return withStructured(fakeResult("agents", 100, 100, 100, 100, 100, 100), wrong...)
	}
	v, err := Compare([]*result.Result{rates(0)}, rates(0), Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].Gates, 1)
	assert.Equal(t, stat.Pass, v.Scenarios[0].Gates[0].Outcome, v.Scenarios[0].Gates[0].Reason)

	v, err = Compare([]*result.Result{rates(0)}, rates(3, 2, 4), Options{})
	require.NoError(t, err)
	g := v.Scenarios[0].Gates[0]
	assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
	require.NotNil(t, g.ChangePoints)
	assert.InDelta(t, 6, float64(g.ChangePoints.Estimate), 0.01, "points, not percent")

	v, err = Compare([]*result.Result{rates()}, rates(3), Options{})
	require.NoError(t, err)
	assert.Empty(t, v.Scenarios[0].Gates)
	require.Len(t, v.Scenarios[0].NotGated, 1)
	assert.Contains(t, v.Scenarios[0].NotGated[0].Reason, "not measured on the baseline")
}

// withRecovery makes r a step load whose repetitions recovered in the
// given seconds, gated by recovery at tolerance.
func withRecovery(r *result.Result, tolerance string, seconds ...float64) *result.Result {
	s := &r.Scenarios[0]
	s.Load = result.Load{Type: config.LoadStep, Steps: []float64{8, 30}, At: []time.Duration{20 * time.Second}, Burstiness: 1, RecoveryWindow: 5 * time.Second}
	for i := range s.Repetitions {
		s.Repetitions[i].Recovery = &result.Recovery{StepS: 20, WindowS: 5, Recovered: true, Seconds: seconds[i%len(seconds)]}
	}
	s.Gates = []result.Gate{{Metric: "recovery", Tolerance: tolerance}}
	return r
}

// A step load's recovery gates as a latency does, in milliseconds with a
// duration for its tolerance: a stack that takes 10 s longer to come back
// is a regression at +5s, the same recovery passes.
func TestGateRecovery(t *testing.T) {
	base := withRecovery(fakeResult("spike", 100, 100, 100, 100, 100, 100), "+5s", 21, 22, 20.5, 21.5, 22.5, 21)
	same := withRecovery(fakeResult("spike", 100, 100, 100, 100, 100, 100), "+5s", 21.5, 21, 22, 20.5, 21, 22)
	slower := withRecovery(fakeResult("spike", 100, 100, 100, 100, 100, 100), "+5s", 31, 32, 30.5, 31.5, 32.5, 31)
	v, err := Compare([]*result.Result{base}, same, Options{})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].Gates, 1)
	g := v.Scenarios[0].Gates[0]
	assert.Equal(t, "recovery", g.Metric)
	assert.Equal(t, "ms", g.Unit)
	assert.Equal(t, stat.Pass, g.Outcome, g.Reason)

	v, err = Compare([]*result.Result{base}, slower, Options{})
	require.NoError(t, err)
	g = v.Scenarios[0].Gates[0]
	assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
	assert.Equal(t, exit.Regression, v.ExitCode())
}
