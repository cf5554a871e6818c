package compare

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// repOf aggregates one repetition of requests with the given TTFTs (ms),
// histograms and all, as a run records it.
func repOf(index int, ttftsMS []float64) result.Repetition {
	agg := result.NewAggregator(result.SLO{}, false, 0)
	for i, ms := range ttftsMS {
		start := int64(i) * int64(time.Millisecond)
		first := start + int64(ms*float64(time.Millisecond))
		agg.Add(&result.Record{ID: "r", SentNS: start, ScheduledNS: start, FirstTokenNS: first, EndNS: first + int64(50*time.Millisecond),
			TTFTUS: int64(ms * 1000), E2EUS: int64((ms + 50) * 1000), ITLUS: []int64{25000, 25000}, OutputTokens: 3, TokensFrom: "usage"})
	}
	return agg.Summary(index)
}

// lumpy is a repetition's TTFTs of a closed loop over a mixed workload: 195
// short ones about 30 ms, and five from the top cluster of long prompts,
// of which the second largest (the p99 of 200) is one or another.
func lumpy(r *rand.Rand) []float64 {
	out := make([]float64, 0, 200)
	for range 195 {
		out = append(out, 30*(1+0.05*r.NormFloat64()))
	}
	for range 5 {
		out = append(out, []float64{180, 280, 350}[r.IntN(3)]*(1+0.02*r.NormFloat64()))
	}
	return out
}

func lumpyResult(r *rand.Rand, reps int, scale float64) *result.Result {
	s := result.ScenarioResult{Name: "chat", WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 8}}
	for i := range reps {
		xs := lumpy(r)
		for k := range xs {
			xs[k] *= scale
		}
		s.Repetitions = append(s.Repetitions, repOf(i+1, xs))
	}
	return &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}},
		Scenarios: []result.ScenarioResult{s}}
}

// The Harrell-Davis p99 of a repetition is the estimate over its histogram;
// with compare.estimator sample, the figure the repetition recorded.
func TestGateValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	res := lumpyResult(r, 3, 1)
	s := &res.Scenarios[0]
	hd, err := GateValues(s, "ttft.p99", config.EstimatorHarrellDavis)
	require.NoError(t, err)
	sample, err := GateValues(s, "ttft.p99", config.EstimatorSample)
	require.NoError(t, err)
	recorded, err := s.Values("ttft.p99")
	require.NoError(t, err)
	assert.Equal(t, recorded, sample)
	for i, rep := range s.Repetitions {
		bars, err := decodeBars(rep.Histograms["ttft"])
		require.NoError(t, err)
		assert.InDelta(t, stat.HarrellDavis(bars, 0.99), hd[i], 1e-9)
		assert.NotEqual(t, sample[i], hd[i])
	}
	// Other metrics are as recorded whatever the estimator.
	tput, err := GateValues(s, "output_throughput", config.EstimatorHarrellDavis)
	require.NoError(t, err)
	want, _ := s.Values("output_throughput")
	assert.Equal(t, want, tput)
}

// On repetitions whose p99 jumps between clusters, the Harrell-Davis p99
// varies less between repetitions than the order statistic, so an A/A
// passes where the order statistic leaves it inconclusive, and a 1.3x
// slower candidate is a regression.
func TestEstimatorOnLumpyTails(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	gates := func(string) []config.Gate {
		return []config.Gate{{Metric: "ttft.p99", Tolerance: mustTolerance(t, "ttft.p99", "+20%")}}
	}
	spread := func(est string, res *result.Result) float64 {
		v, err := GateValues(&res.Scenarios[0], "ttft.p99", est)
		require.NoError(t, err)
		s := slices.Sorted(slices.Values(v))
		return (s[len(s)-1] - s[0]) / stat.SortedMedian(s)
	}
	passed := map[string]int{}
	for range 20 {
		base, aa, slow := lumpyResult(r, 12, 1), lumpyResult(r, 6, 1), lumpyResult(r, 6, 1.3)
		assert.Less(t, spread(config.EstimatorHarrellDavis, base), spread(config.EstimatorSample, base))
		for _, est := range []string{config.EstimatorHarrellDavis, config.EstimatorSample} {
			o := Options{Alpha: 0.05, Gates: gates, Estimator: est}
			v, err := Compare([]*result.Result{base}, aa, o)
			require.NoError(t, err)
			assert.Equal(t, est, v.Estimator)
			if v.Outcome == stat.Pass {
				passed[est]++
			}
			v, err = Compare([]*result.Result{base}, slow, o)
			require.NoError(t, err)
			if est == config.EstimatorHarrellDavis {
				assert.Equal(t, stat.Regression, v.Outcome, "%s: 1.3x slower", est)
			}
		}
	}
	assert.GreaterOrEqual(t, passed[config.EstimatorHarrellDavis], 19, "Harrell-Davis A/A passes of 20")
	assert.Less(t, passed[config.EstimatorSample], passed[config.EstimatorHarrellDavis], "the order statistic passes fewer")
}

// A side without histograms (a result from before them) has its
// percentiles compared as recorded on both sides, and the scenario says
// so once; a malformed histogram is the same, never an error.
func TestEstimatorWithoutHistograms(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base, cand := lumpyResult(r, 6, 1), lumpyResult(r, 6, 1)
	for i := range base.Scenarios[0].Repetitions {
		base.Scenarios[0].Repetitions[i].Histograms = nil
	}
	gates := func(string) []config.Gate {
		return []config.Gate{{Metric: "ttft.p95", Tolerance: mustTolerance(t, "ttft.p95", "+50%")},
			{Metric: "ttft.p99", Tolerance: mustTolerance(t, "ttft.p99", "+50%")}}
	}
	v, err := Compare([]*result.Result{base}, cand, Options{Alpha: 0.05, Gates: gates})
	require.NoError(t, err)
	sc := v.Scenarios[0]
	require.Len(t, sc.Warnings, 1)
	assert.Contains(t, sc.Warnings[0], "TTFT p95, TTFT p99 compared as recorded on both sides")
	assert.Contains(t, sc.Warnings[0], "the baseline's repetition 1 kept no ttft histogram")
	recorded, _ := cand.Scenarios[0].Values("ttft.p99")
	for _, g := range sc.Gates {
		if g.Metric == "ttft.p99" {
			require.Len(t, g.Candidate.Values, len(recorded))
			for i := range recorded {
				assert.Equal(t, recorded[i], float64(g.Candidate.Values[i]), "the candidate's as recorded")
			}
		}
	}

	cand.Scenarios[0].Repetitions[2].Histograms["ttft"] = []byte("HISTFAAAAxx")
	v, err = Compare([]*result.Result{lumpyResult(r, 6, 1)}, cand, Options{Alpha: 0.05, Gates: gates})
	require.NoError(t, err)
	require.Len(t, v.Scenarios[0].Warnings, 1)
	assert.Contains(t, v.Scenarios[0].Warnings[0], "the candidate's ttft.p95 of repetition 3: its ttft histogram: malformed histogram")
}

// mustTolerance is the tolerance text of metric name.
func mustTolerance(t *testing.T, name, text string) metric.Tolerance {
	t.Helper()
	m, err := metric.Lookup(name)
	require.NoError(t, err)
	tol, err := metric.ParseTolerance(m, text)
	require.NoError(t, err)
	return tol
}
