package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/result"
)

// capacityDocument is the report of cand against base, compared with the
// gates they recorded, as perfgate report --baseline makes it.
func capacityDocument(t *testing.T, base, cand *result.Result) *Document {
	t.Helper()
	v, err := compare.Compare([]*result.Result{base}, cand, compare.Options{})
	require.NoError(t, err)
	d, err := NewDocument(v, []*result.Result{base}, cand, nil)
	require.NoError(t, err)
	d.Key = "capacity.yaml"
	return d
}

// sortedMedian is the median of xs, by sorting: apart from medianOf, to
// check it.
func sortedMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// NewDocument groups the candidate's sweep points by the scenario they
// sweep, in value order, each with its baseline found by name and the
// medians of its repetitions; a capacity scenario carries both searches.
func TestNewDocumentSweepsAndCapacity(t *testing.T) {
	base, cand := capacityFixtures()
	// A point measured on the candidate alone, listed before the others:
	// no baseline, and sorted into place.
	extra := cand.Scenarios[0]
	extra.Name, extra.Sweep = "chat.rate-10", &result.SweepPoint{Of: "chat", Param: "rate", Value: 10, Index: 0, Points: 5}
	cand.Scenarios = append([]result.ScenarioResult{extra}, cand.Scenarios...)
	d := capacityDocument(t, base, cand)

	require.Len(t, d.Sweeps, 1)
	sw := d.Sweeps[0]
	assert.Equal(t, "chat", sw.Of)
	assert.Equal(t, "rate", sw.Param)
	assert.Equal(t, "req/s", sw.Unit)
	var values []float64
	for _, p := range sw.Points {
		values = append(values, p.Value)
	}
	assert.Equal(t, []float64{10, 25, 50, 100, 150}, values, "points in value order")
	assert.Nil(t, sw.Points[0].Baseline, "chat.rate-10 has no baseline")
	require.NotNil(t, sw.Points[0].Candidate)

	for _, p := range sw.Points[1:] {
		bs, cs := findScenario([]*result.Result{base}, p.Scenario), findScenario([]*result.Result{cand}, p.Scenario)
		require.NotNil(t, bs, p.Scenario)
		for _, side := range []struct {
			got *PointStats
			s   *result.ScenarioResult
		}{{p.Baseline, bs}, {p.Candidate, cs}} {
			require.NotNil(t, side.got, p.Scenario)
			var rate, ttft99, tpot50 []float64
			for _, r := range side.s.Repetitions {
				rate, ttft99, tpot50 = append(rate, r.RequestThroughput), append(ttft99, r.TTFT.P99), append(tpot50, r.TPOT.P50)
			}
			assert.Equal(t, sortedMedian(rate), side.got.RequestRate, "%s request rate", p.Scenario)
			assert.Equal(t, sortedMedian(ttft99), side.got.TTFTP99, "%s TTFT p99", p.Scenario)
			assert.Equal(t, sortedMedian(tpot50), side.got.TPOTP50, "%s TPOT p50", p.Scenario)
			assert.Equal(t, len(side.s.Repetitions), side.got.N)
		}
	}
	// The candidate is slower at every load: its TPOT p99 is higher.
	for _, p := range sw.Points[1:] {
		assert.Greater(t, p.Candidate.TPOTP99, p.Baseline.TPOTP99, p.Scenario)
	}

	var capacity *ScenarioData
	for i := range d.Scenarios {
		if d.Scenarios[i].Name == "chat-capacity" {
			capacity = &d.Scenarios[i]
		} else {
			assert.Nil(t, d.Scenarios[i].Capacity, d.Scenarios[i].Name)
		}
	}
	require.NotNil(t, capacity)
	require.NotNil(t, capacity.Capacity)
	assert.Same(t, base.Scenarios[4].Capacity, capacity.Capacity.Baseline)
	assert.Same(t, cand.Scenarios[5].Capacity, capacity.Capacity.Candidate)
}

// A report with sweeps and capacity reads back whole; one from before them
// reads with neither.
func TestDocumentCapacityReadsBack(t *testing.T) {
	dir := t.TempDir()
	base, cand := capacityFixtures()
	d := capacityDocument(t, base, cand)
	path := filepath.Join(dir, "report.json")
	require.NoError(t, WriteDocument(path, d))
	got, err := ReadDocument(path)
	require.NoError(t, err)
	assert.Equal(t, d.Sweeps, got.Sweeps)
	for i := range d.Scenarios {
		assert.Equal(t, d.Scenarios[i].Capacity, got.Scenarios[i].Capacity, d.Scenarios[i].Name)
	}

	old := filepath.Join(dir, "old.json")
	require.NoError(t, WriteDocument(old, testDocument(passVerdict(), 1, 0)))
	raw, err := os.ReadFile(old)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &keys))
	assert.NotContains(t, keys, "sweeps", "omitted when empty, as in a report from before sweeps")
	assert.NotContains(t, string(raw), `"capacity"`)
	got, err = ReadDocument(old)
	require.NoError(t, err)
	assert.Nil(t, got.Sweeps)
	for _, s := range got.Scenarios {
		assert.Nil(t, s.Capacity)
	}
}
