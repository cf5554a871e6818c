package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// histResult builds a result of one scenario whose repetitions hold real
// histograms (result.NewAggregator): each repetition has requests with a
// lognormal TTFT around 50 ms, and every stallEvery-th run of 5 requests
// (0: none) 250 ms later, as an engine stall delays every request in
// flight. The per-repetition values come from the same aggregator.
func histResult(r *rand.Rand, reps, requests, stallEvery int, gates map[string]string) *result.Result {
	s := result.ScenarioResult{Name: "chat", WorkloadHash: "sha256:w", Load: result.Load{Type: "closed", Concurrency: 8}}
	for i := range reps {
		a := result.NewAggregator(result.SLO{}, false, 0)
		var at int64
		stalled := 0
		for range requests {
			ttft := 50 * math.Exp(0.3*r.NormFloat64())
			if stallEvery > 0 && stalled == 0 && r.IntN(stallEvery) == 0 {
				stalled = 5
			}
			if stalled > 0 {
				ttft += 250
				stalled--
			}
			first := at + int64(ttft*float64(time.Millisecond))
			a.Add(&result.Record{ScheduledNS: at, SentNS: at, FirstTokenNS: first, EndNS: first + int64(100*time.Millisecond),
				ITLUS: []int64{10000, 10000}, OutputTokens: 3, TokensFrom: "usage"})
			at += int64(time.Millisecond)
		}
		s.Repetitions = append(s.Repetitions, a.Summary(i+1))
	}
	res := &result.Result{Schema: result.Schema, Identity: result.Identity{Server: result.Server{Engine: "vllm", Version: "0.6.3"}},
		Scenarios: []result.ScenarioResult{s}}
	var gs []result.Gate
	for m, tol := range gates {
		gs = append(gs, result.Gate{Metric: m, Tolerance: tol})
	}
	res.Scenarios[0].Gates = gs
	return res
}

func gateNamed(t *testing.T, s Scenario, name string) Gate {
	t.Helper()
	for _, g := range s.Gates {
		if g.Metric == name {
			return g
		}
	}
	t.Fatalf("no gate %s among %d", name, len(s.Gates))
	return Gate{}
}

func TestCompareTailGates(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 6))
	gates := map[string]string{"ttft.p99": "+10%", "ttft.p95": "+10%", "ttft.p50": "+10%"}
	base := histResult(r, 6, 1000, 0, gates)
	tests := []struct {
		name       string
		stallEvery int
		tail       string
		want       stat.Outcome
		tails      []string // the tail gates made
	}{
		{"same", 0, "p99", stat.Pass, []string{"ttft.p99.tail"}},
		{"stalls", 100, "p99", stat.Regression, []string{"ttft.p99.tail"}},
		{"p95 and up", 0, "p95", stat.Pass, []string{"ttft.p95.tail", "ttft.p99.tail"}},
		{"off", 100, config.TailOff, "", nil},
		{"off by default", 100, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cand := histResult(r, 6, 1000, tt.stallEvery, gates)
			v, err := Compare([]*result.Result{base}, cand, Options{Tail: tt.tail})
			require.NoError(t, err)
			sc := v.Scenarios[0]
			var tails []string
			for _, g := range sc.Gates {
				if strings.HasSuffix(g.Metric, TailSuffix) {
					tails = append(tails, g.Metric)
				}
			}
			assert.ElementsMatch(t, tt.tails, tails, "tail gates")
			assert.Len(t, sc.Gates, 3+len(tt.tails), "every gate is in the scenario")
			// Holm's first step multiplies the smallest p by the family's
			// size: the tail gates count in it.
			minP, minAdj := math.Inf(1), math.Inf(1)
			for _, g := range sc.Gates {
				minP, minAdj = min(minP, float64(g.P)), min(minAdj, float64(g.PAdjusted))
			}
			assert.InDelta(t, min(1, float64(len(sc.Gates))*minP), minAdj, 1e-12, "the smallest adjusted p")
			if tt.tails == nil {
				return
			}
			g := gateNamed(t, sc, "ttft.p99.tail")
			require.NotNil(t, g.Tail, "Tail evidence")
			assert.Equal(t, tt.want, g.Outcome, g.Reason)
			assert.Equal(t, "TTFT p99 tail", g.Title)
			assert.Equal(t, "%", g.Unit)
			assert.Equal(t, "+10%", g.Tolerance)
			assert.InDelta(t, 0.99, float64(g.Tail.Percentile), 1e-12)
			assert.InDelta(t, 0.01, float64(g.Tail.Expected), 1e-12)
			assert.Equal(t, 924, g.Tail.Splits)
			assert.True(t, g.Tail.Exact)
			assert.Len(t, g.Baseline.Values, 6, "each baseline repetition's share")
			assert.Len(t, g.Candidate.Values, 6, "each candidate repetition's share")
			// The baseline's p99 of a lognormal around 50 ms is about 100 ms.
			assert.InDelta(t, 100, float64(g.Tail.Threshold), 15, "Threshold")
			if tt.want == stat.Regression {
				assert.Greater(t, float64(g.Tail.Share), 0.04, "about 5% of stalled requests are beyond")
				assert.Less(t, float64(g.Tail.AdjustedShare), float64(g.Tail.Share), "the tolerance moves requests back")
			}
		})
	}
}

func TestCompareTailNotGated(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 7))
	gates := map[string]string{"ttft.p99": "+10%"}
	withHist := histResult(r, 6, 1000, 0, gates)
	short := histResult(r, 6, 100, 0, gates) // 600 requests, 6 beyond a p99
	old := histResult(r, 6, 1000, 0, gates)
	for i := range old.Scenarios[0].Repetitions {
		old.Scenarios[0].Repetitions[i].Histograms = nil
	}
	bad := histResult(r, 6, 1000, 0, gates)
	bad.Scenarios[0].Repetitions[2].Histograms[result.HistTTFT] = []byte("not a histogram")
	tests := []struct {
		name       string
		base, cand *result.Result
		reason     string
	}{
		{"old baseline", old, withHist, "the baseline kept no ttft histograms (a result from before them)"},
		{"old candidate", withHist, old, "the candidate kept no ttft histograms (a result from before them)"},
		{"malformed", withHist, bad, "the candidate's repetition 3: ttft histogram:"},
		{"too few requests", short, withHist, "the baseline has 600 requests, about 6 beyond its p99, and the tail test needs >= 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compare([]*result.Result{tt.base}, tt.cand, Options{Tail: "p99"})
			require.NoError(t, err)
			sc := v.Scenarios[0]
			require.Len(t, sc.NotGated, 1)
			assert.Equal(t, "ttft.p99.tail", sc.NotGated[0].Metric)
			assert.Contains(t, sc.NotGated[0].Reason, tt.reason)
			require.Len(t, sc.Gates, 1, "only the per-repetition gate")
			assert.Equal(t, "ttft.p99", sc.Gates[0].Metric)
		})
	}
}

func TestCompareTailSettings(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 8))
	gates := map[string]string{"ttft.p99": "+10%"}
	base, cand := histResult(r, 6, 1000, 0, gates), histResult(r, 6, 1000, 0, gates)

	// The candidate's recorded compare.tail applies when the options set none.
	cand.Compare = &result.CompareSettings{Alpha: 0.05, OnInconclusive: "fail", Tail: config.TailOff}
	v, err := Compare([]*result.Result{base}, cand, Options{})
	require.NoError(t, err)
	assert.Len(t, v.Scenarios[0].Gates, 1, "compare.tail off recorded in the candidate")
	v, err = Compare([]*result.Result{base}, cand, Options{Tail: "p99"})
	require.NoError(t, err)
	assert.Len(t, v.Scenarios[0].Gates, 2, "the option overrides the recorded setting")

	_, err = Compare([]*result.Result{base}, cand, Options{Tail: "p99.999"})
	assert.ErrorContains(t, err, "compare.tail: must be a latency percentile")

	// An A/B has none: it pairs rounds.
	v, err = Compare([]*result.Result{base}, cand, Options{Tail: "p99", AB: &AB{Mode: "co-resident", Rounds: 6}})
	require.NoError(t, err)
	for _, g := range v.Scenarios[0].Gates {
		assert.False(t, strings.HasSuffix(g.Metric, TailSuffix), "an A/B gate %s", g.Metric)
	}
}

func TestTailQuantile(t *testing.T) {
	tests := []struct {
		metric string
		lowest float64
		want   float64
		ok     bool
	}{
		{"ttft.p99", 0.99, 0.99, true},
		{"e2e.p99.9", 0.99, 0.999, true},
		{"tpot.p95", 0.99, 0, false},
		{"tpot.p95", 0.95, 0.95, true},
		{"itl.p90", 0.9, 0.9, true},
		{"ttft.mean", 0.5, 0, false},
		{"ttft.p99", 0, 0, false},
		{"cold_start", 0.5, 0, false},
		{"server_ttft", 0.5, 0, false},
	}
	for _, tt := range tests {
		m, err := metric.Lookup(tt.metric)
		require.NoError(t, err)
		q, ok := tailQuantile(m, tt.lowest)
		assert.Equal(t, tt.ok, ok, "tailQuantile(%s, %v) ok", tt.metric, tt.lowest)
		assert.InDelta(t, tt.want, q, 1e-12, "tailQuantile(%s, %v)", tt.metric, tt.lowest)
	}
}

// An undecided tail gate leaves the verdict to its per-repetition gate; a
// tail gate's regression is the verdict's.
func TestTailGateNeverHoldsTheVerdict(t *testing.T) {
	tail := &Tail{Percentile: 0.99}
	tests := []struct {
		name  string
		gates []Gate
		want  stat.Outcome
	}{
		{"tail inconclusive, its gate passes", []Gate{{Metric: "ttft.p99", Outcome: stat.Pass}, {Metric: "ttft.p99.tail", Tail: tail, Outcome: stat.Inconclusive}}, stat.Pass},
		{"tail regression", []Gate{{Metric: "ttft.p99", Outcome: stat.Pass}, {Metric: "ttft.p99.tail", Tail: tail, Outcome: stat.Regression}}, stat.Regression},
		{"its gate inconclusive", []Gate{{Metric: "ttft.p99", Outcome: stat.Inconclusive}, {Metric: "ttft.p99.tail", Tail: tail, Outcome: stat.Pass}}, stat.Inconclusive},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, overall([]Scenario{{Name: "s", Gates: tt.gates}}), "overall")
		})
	}
}
