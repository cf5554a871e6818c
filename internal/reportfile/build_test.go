package reportfile

import (
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/result/resulttest"
)

// A candidate that measured p75 and p99.99 against a baseline from before
// the key: the baseline gives them from its histograms, or, without
// histograms, leaves them out.
func TestDistributionPercentilesAgainstOldBaseline(t *testing.T) {
	cand := resulttest.PercentilesResult()
	cs := &cand.Scenarios[0]
	d, err := distribution(cs, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	var names []string
	for _, p := range d.Percentiles {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"p50", "p75", "p99", "p99.99"}, names)
	p75, _ := d.Percentile("p75")
	assert.Equal(t, 38.75, p75, "the median of the repetitions' (p50+p90)/2: (31+46.5)/2")

	// The old baseline: TTFT of 1..1000 ms in each repetition's histogram,
	// no percentiles map.
	old := result.ScenarioResult{Name: "chat"}
	for i := 1; i <= 3; i++ {
		h := hdrhistogram.New(1, 3600e6, 3)
		for v := int64(1); v <= 1000; v++ {
			require.NoError(t, h.RecordValue(v*1000))
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		require.NoError(t, err)
		r := resulttest.Rep(i, 500)
		r.Histograms = map[string][]byte{"ttft": enc}
		old.Repetitions = append(old.Repetitions, r)
	}
	bd, err := distribution(&old, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	p75, ok := bd.Percentile("p75")
	require.True(t, ok)
	assert.InEpsilon(t, 750, p75, 0.002)
	p9999, ok := bd.Percentile("p99.99")
	require.True(t, ok)
	assert.InEpsilon(t, 1000, p9999, 0.002)
	p50, _ := bd.Percentile("p50")
	assert.Equal(t, 500.0, p50, "a field is read, not recomputed")
	require.NotEmpty(t, bd.CDF, "the pooled histograms give a CDF")
	last := bd.CDF[len(bd.CDF)-1]
	assert.Equal(t, 1.0, last.Fraction)
	assert.InEpsilon(t, 1000, last.Value, 0.002)

	bare := old
	bare.Repetitions = nil
	for _, r := range old.Repetitions {
		r.Histograms = nil
		bare.Repetitions = append(bare.Repetitions, r)
	}
	bd2, err := distribution(&bare, "ttft", cand.PercentileNames())
	require.NoError(t, err)
	_, ok = bd2.Percentile("p75")
	assert.False(t, ok, "not measured, no histogram")
	assert.Empty(t, bd2.CDF)
}

func TestWarmupNotes(t *testing.T) {
	q := 3.0
	base := &result.ScenarioResult{Warmup: &result.Warmup{Method: config.WarmupWindows, Steady: true, Requests: 10}}
	cand := &result.ScenarioResult{Warmup: &result.Warmup{Method: config.WarmupWindows, Steady: true, Requests: 30, Failed: 10,
		Errors: map[string]int{"http": 10}, DrainQueue: &q}}
	assert.Equal(t, []string{
		"the candidate's warm-up: 10 of 40 requests failed: http 10",
		"the candidate's warm-up did not drain within target.timeout: its last requests may have run into repetition 1",
	}, warmupNotes(base, cand))
	assert.Empty(t, warmupNotes(nil, base))
}

// A step load's spike figures go into the document on both sides, medians
// of the repetitions, the gated one flagged; a scenario of another load has
// none.
func TestRecoveryRows(t *testing.T) {
	side := func(seconds ...float64) *result.Result {
		s := result.ScenarioResult{Name: "spike"}
		for i, sec := range seconds {
			r := resulttest.Rep(i+1, 100)
			r.Recovery = &result.Recovery{StepS: 20, WindowS: 5, Recovered: sec < 60, Seconds: sec, Breaches: int(10 * sec), BeforeP95MS: 90, PeakP95MS: 100 * sec}
			s.Repetitions = append(s.Repetitions, r)
		}
		return &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{s}}
	}
	v := &compare.Verdict{Scenarios: []compare.Scenario{{Name: "spike", Gates: []compare.Gate{{Metric: "recovery"}}}}}
	d, err := New(v, []*result.Result{side(20, 21, 22)}, side(30, 64, 31), nil)
	require.NoError(t, err)
	rows := d.Scenarios[0].Recovery
	require.Len(t, rows, 5)
	byMetric := map[string]TelemetryRow{}
	for _, r := range rows {
		byMetric[r.Metric] = r
	}
	rec := byMetric["recovery"]
	assert.Equal(t, 21.0, *rec.Baseline)
	assert.Equal(t, 31.0, *rec.Candidate)
	assert.True(t, rec.Gated)
	assert.False(t, byMetric["recovery_breaches"].Gated)
	assert.Equal(t, 310.0, *byMetric["recovery_breaches"].Candidate)
	assert.Equal(t, 0.0, *byMetric["not_recovered"].Baseline)
	assert.Equal(t, 1.0, *byMetric["not_recovered"].Candidate, "the repetition at 64 s never recovered")

	assert.Equal(t, "step", d.Scenarios[0].RecoveryOf)
	assert.Equal(t, "TTFT p95 before the step", byMetric["before_ttft_p95"].Title)

	plain := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{{Name: "spike", Repetitions: []result.Repetition{resulttest.Rep(1, 100)}}}}
	d, err = New(v, []*result.Result{plain}, plain, nil)
	require.NoError(t, err)
	assert.Nil(t, d.Scenarios[0].Recovery)
	assert.Empty(t, d.Scenarios[0].RecoveryOf)
}

// A fault's recovery rows say "the fault", and its own rows follow: the
// errors, the replica back after (left out of the median where it was not
// back), the goodput before and while down.
func TestFaultRows(t *testing.T) {
	side := func(errors int, back ...float64) *result.Result {
		s := result.ScenarioResult{Name: "lost"}
		for i, b := range back {
			r := resulttest.Rep(i+1, 100)
			r.Recovery = &result.Recovery{StepS: 30, WindowS: 5, Recovered: true, Seconds: 10}
			r.Fault = &result.Fault{Kill: "replica", Replica: 2, Replicas: 2, AtS: 30, KilledS: 30, Restarted: true,
				Errors: errors + i, BeforeRPS: new(8.0), DuringRPS: new(5.0)}
			if b > 0 {
				r.Fault.BackS = new(30 + b)
			}
			s.Repetitions = append(s.Repetitions, r)
		}
		return &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{s}}
	}
	v := &compare.Verdict{Scenarios: []compare.Scenario{{Name: "lost"}}}
	d, err := New(v, []*result.Result{side(10, 4, 5, 6)}, side(20, 40, 0, 0), nil)
	require.NoError(t, err)
	sd := d.Scenarios[0]
	assert.Equal(t, "fault", sd.RecoveryOf)
	byMetric := map[string]TelemetryRow{}
	for _, r := range sd.Recovery {
		byMetric[r.Metric] = r
	}
	assert.Equal(t, "TTFT p95 before the fault", byMetric["before_ttft_p95"].Title)
	assert.Equal(t, 11.0, *byMetric["fault_errors"].Baseline)
	assert.Equal(t, 21.0, *byMetric["fault_errors"].Candidate)
	assert.Equal(t, 5.0, *byMetric["replica_back"].Baseline)
	assert.Equal(t, 40.0, *byMetric["replica_back"].Candidate, "the repetitions where it was not back are left out")
	assert.Equal(t, 8.0, *byMetric["goodput_before"].Candidate)
	assert.Equal(t, 5.0, *byMetric["goodput_down"].Candidate)
}
