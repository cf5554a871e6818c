package compare

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
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
