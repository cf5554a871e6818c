package compare

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// subsetResult is a result of eight repetitions of a scenario that mixes
// structured and free requests, summarised from records: free tokens come
// freeGap ms apart, structured ones structGap ms, each with a little noise.
func subsetResult(r *rand.Rand, freeGap, structGap float64, gates ...result.Gate) *result.Result {
	s := result.ScenarioResult{Name: "agents", WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 4}, Gates: gates}
	for i := range 8 {
		a := result.NewAggregator(result.SLO{}, false, 0).WithSubsets(true, false)
		for k := range 60 {
			structured := k%2 == 0
			gap := freeGap
			if structured {
				gap = structGap
			}
			gap *= 1 + 0.03*r.NormFloat64()
			first := int64(20 * time.Millisecond)
			rec := &result.Record{SentNS: 0, FirstTokenNS: first, OutputTokens: 11, PromptTokens: 10, TokensFrom: "usage", Structured: structured}
			rec.EndNS = first + int64(10*gap*float64(time.Millisecond))
			a.Add(rec)
		}
		s.Repetitions = append(s.Repetitions, a.Summary(i+1))
	}
	return &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}},
		Scenarios: []result.ScenarioResult{s}}
}

// A scenario gates its structured requests alone: a grammar that makes
// their tokens 50% dearer is a regression of tpot.p50@structured, while
// tpot.p50@free passes, on both estimators; a baseline without subsets
// shows the gate as not gated rather than failing the comparison.
func TestGateSubsetAlone(t *testing.T) {
	gates := []result.Gate{{Metric: "tpot.p50@structured", Tolerance: "+10%"}, {Metric: "tpot.p50@free", Tolerance: "+10%"}}
	r := rand.New(rand.NewPCG(3, 4))
	base := subsetResult(r, 5, 5, gates...)
	cand := subsetResult(r, 5, 7.5, gates...)
	for _, est := range []string{"harrell-davis", "sample"} {
		t.Run(est, func(t *testing.T) {
			v, err := Compare([]*result.Result{base}, cand, Options{Estimator: est})
			require.NoError(t, err)
			got := map[string]stat.Outcome{}
			for _, g := range v.Scenarios[0].Gates {
				got[g.Metric] = g.Outcome
			}
			assert.Equal(t, map[string]stat.Outcome{"tpot.p50@structured": stat.Regression, "tpot.p50@free": stat.Pass}, got)
		})
	}

	old := subsetResult(r, 5, 5, gates...)
	for i := range old.Scenarios[0].Repetitions {
		old.Scenarios[0].Repetitions[i].Subsets = nil
	}
	v, err := Compare([]*result.Result{old}, cand, Options{})
	require.NoError(t, err)
	assert.Empty(t, v.Scenarios[0].Gates)
	require.Len(t, v.Scenarios[0].NotGated, 2)
	assert.Contains(t, v.Scenarios[0].NotGated[0].Reason, "not measured on the baseline")
}

// A candidate whose subset was not measured (its structured answers all
// wrong, or none sent) fails the comparison with why, rather than pass
// the gate as not gated.
func TestGateSubsetMissingOnTheCandidate(t *testing.T) {
	gates := []result.Gate{{Metric: "tpot.p50@structured", Tolerance: "+10%"}}
	r := rand.New(rand.NewPCG(5, 6))
	base := subsetResult(r, 5, 5, gates...)
	cand := subsetResult(r, 5, 5, gates...)
	for i := range cand.Scenarios[0].Repetitions {
		cand.Scenarios[0].Repetitions[i].Subsets = nil
	}
	_, err := Compare([]*result.Result{base}, cand, Options{})
	require.Error(t, err)
	assert.Equal(t, exit.RunFailed, exit.Code(err), "the candidate's run failed: not bad input")
	assert.Contains(t, err.Error(), "candidate scenario agents")
	assert.Contains(t, err.Error(), "no request of the repetition asked for structured output")
}
