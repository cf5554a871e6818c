package compare

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// suiteAt answers n items the way the simulator does: item k is right when
// its fixed draw (k+0.5)/n is below accuracy, so a lower accuracy only turns
// right answers wrong.
func suiteAt(n int, accuracy float64, mode string) result.SuiteResult {
	s := result.SuiteResult{Name: "arith", Hash: "sha256:s", Mode: mode, Interleaved: n}
	for k := range n {
		right := (float64(k)+0.5)/float64(n) < accuracy
		o := result.ItemOutcome{ID: fmt.Sprintf("q%03d", k), Hash: fmt.Sprintf("h%d", k), Scorer: "numeric", Output: "The answer is 7."}
		if right {
			o.Pass, o.Score = true, 1
		} else {
			o.Output = "The answer is 8."
		}
		s.Items = append(s.Items, o)
	}
	return s
}

// withSuite is a steady latency result carrying one suite.
func withSuite(s result.SuiteResult) *result.Result {
	r := fakeResult("chat", 100, 101, 99, 100, 102, 98)
	r.Scenarios[0].Quality = []result.SuiteResult{s}
	return r
}

func TestCompareQuality(t *testing.T) {
	base := withSuite(suiteAt(200, 0.9, config.QualityInterleaved))
	tests := []struct {
		name     string
		cand     result.SuiteResult
		accuracy stat.Outcome
		overall  stat.Outcome
	}{
		{"A/A", suiteAt(200, 0.9, config.QualityInterleaved), stat.Pass, stat.Pass},
		{"0.6 regresses", suiteAt(200, 0.6, config.QualityInterleaved), stat.Regression, stat.Regression},
		{"0.88 within 5 points", suiteAt(200, 0.88, config.QualityInterleaved), stat.Pass, stat.Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			five := config.Gate{Metric: "accuracy"}
			five.Tolerance.Value, five.Tolerance.Text = 0.05, "-5 points"
			v, err := Compare([]*result.Result{base}, withSuite(tt.cand), Options{QualityGates: []config.Gate{five}})
			require.NoError(t, err)
			require.Len(t, v.Scenarios[0].Quality, 1)
			q := v.Scenarios[0].Quality[0]
			require.Len(t, q.Gates, 1)
			g := q.Gates[0]
			assert.Equal(t, tt.accuracy, g.Outcome, g.Reason)
			assert.Equal(t, tt.overall, v.Outcome)
			assert.Equal(t, 200, q.N)
			assert.Equal(t, "mcnemar", g.Test)
			assert.Zero(t, g.Gains)
			assert.Equal(t, q.Baseline.Pass-q.Candidate.Pass, g.Losses)
			assert.Equal(t, q.N-g.Losses, q.Drift.Identical, "every changed answer changed its output")
			// One Holm family: the quality p-value is adjusted with the
			// latency gates' (7 tested default gates + 1).
			if g.P > 0 && g.P < 1 {
				assert.Greater(t, float64(g.PAdjusted), float64(g.P))
			}
			if tt.overall == stat.Regression {
				assert.Equal(t, exit.Regression, v.ExitCode())
				require.NotEmpty(t, q.Examples)
				assert.True(t, q.Examples[0].BaselinePass && !q.Examples[0].CandidatePass)
			}
		})
	}
}

func TestCompareQualityEdges(t *testing.T) {
	t.Run("every quality gate off, as recorded", func(t *testing.T) {
		cand := suiteAt(50, 0.5, config.QualityInterleaved)
		cand.Gates = []result.Gate{}
		v, err := Compare([]*result.Result{withSuite(suiteAt(50, 0.9, config.QualityInterleaved))}, withSuite(cand), Options{})
		require.NoError(t, err)
		assert.Empty(t, v.Scenarios[0].Quality[0].Gates)
		assert.Equal(t, stat.Pass, v.Outcome, "no quality gate, so the latency gates decide")
	})
	t.Run("no baseline answers", func(t *testing.T) {
		v, err := Compare([]*result.Result{fakeResult("chat", 100, 101, 99, 100, 102, 98)}, withSuite(suiteAt(50, 0.9, config.QualityInterleaved)), Options{})
		require.NoError(t, err)
		assert.Empty(t, v.Scenarios[0].Quality)
		assert.Contains(t, v.Scenarios[0].Warnings, "eval suite arith has no baseline answers: not compared")
	})
	t.Run("changed items are not paired", func(t *testing.T) {
		cand := suiteAt(50, 0.9, config.QualitySeparate)
		cand.Items[0].Hash = "edited"
		cand.Items = cand.Items[:45]
		v, err := Compare([]*result.Result{withSuite(suiteAt(50, 0.9, config.QualityInterleaved))}, withSuite(cand), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		assert.Equal(t, 44, q.N)
		assert.Equal(t, 1, q.Changed)
		assert.Equal(t, 5, q.OnlyBaseline)
		assert.Contains(t, q.Warnings, "the suite differs between the sides: 5 items only in the baseline, 0 only in the candidate, 1 changed; 44 compared")
		assert.Contains(t, q.Warnings, "the baseline answered in interleaved mode and the candidate in separate mode: batching differs")
	})
	t.Run("continuous suites gate the mean score", func(t *testing.T) {
		b, c := suiteAt(60, 0.9, config.QualityInterleaved), suiteAt(60, 0.9, config.QualityInterleaved)
		b.Continuous, c.Continuous = true, true
		for i := range c.Items {
			c.Items[i].Score = 0.4 // every score fell by at least 0.6
		}
		v, err := Compare([]*result.Result{withSuite(b)}, withSuite(c), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		var score *QualityGate
		for i := range q.Gates {
			if q.Gates[i].Metric == "score" {
				score = &q.Gates[i]
			}
		}
		require.NotNil(t, score, "default gates: accuracy and score")
		assert.Equal(t, "wilcoxon", score.Test)
		assert.Equal(t, stat.Regression, score.Outcome, score.Reason)
	})
}

// failItems makes the items at idx failed requests, as the run records
// them: no pass, no score, the output that arrived before the failure.
func failItems(s result.SuiteResult, kind, msg string, idx ...int) result.SuiteResult {
	s.Items = slices.Clone(s.Items)
	for _, i := range idx {
		it := &s.Items[i]
		it.Pass, it.Score, it.Detail, it.Output = false, 0, "", ""
		it.Error, it.ErrorKind = msg, kind
	}
	return s
}

// every returns the indexes from, from+step, ... below n.
func every(from, step, n int) []int {
	var out []int
	for i := from; i < n; i += step {
		out = append(out, i)
	}
	return out
}

func qualityGateOf(t *testing.T, q Suite, metric string) QualityGate {
	t.Helper()
	for _, g := range q.Gates {
		if g.Metric == metric {
			return g
		}
	}
	t.Fatalf("suite %s has no %s gate (gates %+v)", q.Name, metric, q.Gates)
	return QualityGate{}
}

// The case: a candidate answering every item right but failing 13%
// of its eval requests in transport (the simulator at --error-rate 0.1).
// Its accuracy is 100% of what it answered, not 87%; the failures are
// dropped from the pairs, counted and gated as the error rate, and listed
// with their errors.
func TestCompareQualityFailedItems(t *testing.T) {
	base := withSuite(suiteAt(200, 1, config.QualityInterleaved))
	cand := suiteAt(200, 1, config.QualityInterleaved)
	cand = failItems(cand, "http", "http 500: simulated engine error", every(0, 16, 200)...) // 13 items
	cand = failItems(cand, "stream", "stream: simulated engine error during generation", append(every(8, 16, 200), 199)...)
	require.Equal(t, 26, cand.Failed())

	v, err := Compare([]*result.Result{base}, withSuite(cand), Options{})
	require.NoError(t, err)
	q := v.Scenarios[0].Quality[0]
	assert.Equal(t, 174, q.N, "the 26 failed items are dropped from the pairs")
	assert.Equal(t, 26, q.Dropped)
	assert.Equal(t, Accuracy{Pass: 174, N: 174, Rate: q.Candidate.Rate, Failed: 26,
		FailedKinds: map[string]int{"http": 13, "stream": 13}, ErrorRate: q.Candidate.ErrorRate}, q.Candidate)
	assert.InDelta(t, 1, float64(q.Candidate.Rate.Estimate), 1e-12, "accuracy over the answered items")
	assert.InDelta(t, 1, float64(q.Baseline.Rate.Estimate), 1e-12)
	assert.InDelta(t, 0.13, float64(q.Candidate.ErrorRate.Estimate), 1e-12)
	assert.Zero(t, float64(q.Baseline.ErrorRate.Estimate))
	assert.Equal(t, 174, q.Drift.Identical, "failed items are not output drift")
	assert.Zero(t, q.Drift.Differ)

	acc := qualityGateOf(t, q, "accuracy")
	assert.Equal(t, stat.Pass, acc.Outcome, acc.Reason)
	assert.Equal(t, 174, acc.N)
	assert.Zero(t, acc.Losses, "no answer turned wrong")

	er := qualityGateOf(t, q, "eval_error_rate")
	assert.Equal(t, stat.Regression, er.Outcome, er.Reason)
	assert.Equal(t, "+2 points", er.Tolerance, "the default")
	assert.Equal(t, "mcnemar", er.Test)
	assert.Equal(t, 200, er.N)
	assert.InDelta(t, 0.13, float64(er.Change.Estimate), 1e-12)
	assert.Equal(t, 26, er.Losses)
	assert.Contains(t, er.Reason, "+13.0 points is beyond +2 points")
	assert.Equal(t, stat.Regression, v.Outcome, "a server failing its eval requests does not pass")

	assert.Contains(t, q.Warnings, "26 of 200 items failed to answer (0 in the baseline, 26 in the candidate) and were dropped: accuracy and the paired tests are over the other 174, and the failures are the error rate's")
	require.NotEmpty(t, q.Examples)
	ex := q.Examples[0]
	assert.Equal(t, "q000", ex.ID)
	assert.True(t, ex.BaselinePass)
	assert.False(t, ex.CandidatePass)
	assert.Equal(t, "http 500: simulated engine error", ex.CandidateError)
	assert.Equal(t, "http", ex.CandidateErrorKind)
	assert.Empty(t, ex.BaselineError)
}

func TestCompareQualityFailedItemsEdges(t *testing.T) {
	base := suiteAt(200, 0.9, config.QualityInterleaved)
	t.Run("a stray failure passes both gates", func(t *testing.T) {
		// One of 200: the 90% bound of the rise is under 2 points. Two
		// would not be (2.4 points): the default tolerance is tighter than
		// the default max_error_rate, for the gate to be able to regress.
		cand := failItems(base, "timeout", "timeout: request took longer than 1m0s", 77)
		v, err := Compare([]*result.Result{withSuite(base)}, withSuite(cand), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		assert.Equal(t, 199, q.N)
		assert.Equal(t, stat.Pass, qualityGateOf(t, q, "accuracy").Outcome)
		assert.Equal(t, stat.Pass, qualityGateOf(t, q, "eval_error_rate").Outcome, qualityGateOf(t, q, "eval_error_rate").Reason)
		assert.Equal(t, stat.Pass, v.Outcome)
	})
	t.Run("failures on either side are dropped", func(t *testing.T) {
		b := failItems(base, "http", "http 503: busy", 1, 2, 3)
		c := failItems(base, "stream", "stream: connection reset by peer", 3, 4)
		v, err := Compare([]*result.Result{withSuite(b)}, withSuite(c), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		assert.Equal(t, 196, q.N)
		assert.Equal(t, 4, q.Dropped)
		assert.Equal(t, 3, q.Baseline.Failed)
		assert.Equal(t, 2, q.Candidate.Failed)
		er := qualityGateOf(t, q, "eval_error_rate")
		assert.Equal(t, 1, er.Losses, "item 4 failed in the candidate only")
		assert.Equal(t, 2, er.Gains, "items 1 and 2 failed in the baseline only")
		var ids []string
		for _, ex := range q.Examples {
			ids = append(ids, ex.ID)
		}
		assert.Equal(t, []string{"q004", "q001", "q002"}, ids, "failed in the candidate first; failed on both sides is no change")
		assert.Equal(t, "http 503: busy", q.Examples[1].BaselineError)
	})
	t.Run("too many failures: accuracy cannot pass", func(t *testing.T) {
		cand := failItems(base, "http", "http 500: boom", every(0, 3, 200)...) // 67 items, 34%
		off := config.Gate{Metric: "accuracy"}
		off.Tolerance.Value, off.Tolerance.Text = 0.02, "-2 points"
		// The error-rate gate off: nothing else may let it pass.
		v, err := Compare([]*result.Result{withSuite(base)}, withSuite(cand), Options{QualityGates: []config.Gate{off}})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		acc := qualityGateOf(t, q, "accuracy")
		assert.Equal(t, stat.Inconclusive, acc.Outcome)
		assert.Equal(t, "67 of 200 items failed to answer (34%, over 20%): the 133 answered cannot speak for the suite", acc.Reason)
		assert.Contains(t, acc.Warnings, "on the answered items alone: the 90% interval rules out worse than -2 points")
		assert.Equal(t, stat.Inconclusive, v.Outcome)
		assert.NotEqual(t, 0, v.ExitCode(), "never a pass")
	})
	t.Run("a server answering nothing", func(t *testing.T) {
		cand := failItems(base, "connect", "connect: connection refused", every(0, 1, 200)...)
		v, err := Compare([]*result.Result{withSuite(base)}, withSuite(cand), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		assert.Zero(t, q.N)
		assert.Equal(t, stat.Inconclusive, qualityGateOf(t, q, "accuracy").Outcome)
		assert.Contains(t, qualityGateOf(t, q, "accuracy").Reason, "200 of 200 items failed to answer (100%, over 20%)")
		assert.Equal(t, stat.Regression, qualityGateOf(t, q, "eval_error_rate").Outcome)
		assert.Equal(t, stat.Regression, v.Outcome)
		assert.Equal(t, exit.Regression, v.ExitCode())
	})
	t.Run("an older result records no error kind", func(t *testing.T) {
		cand := failItems(base, "", "http 500: boom", 5)
		v, err := Compare([]*result.Result{withSuite(base)}, withSuite(cand), Options{})
		require.NoError(t, err)
		q := v.Scenarios[0].Quality[0]
		assert.Equal(t, 199, q.N)
		assert.Equal(t, map[string]int{"error": 1}, q.Candidate.FailedKinds)
	})
}
