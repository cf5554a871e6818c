package result

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A repetition that mixes structured and free requests, and sends to two
// models, measures each apart: counts, latencies and throughputs of each
// subset are its own requests', and the metrics of a subset read them.
func TestAggregatorSubsets(t *testing.T) {
	a := NewAggregator(SLO{}, false, 0).WithSubsets(true, true).WithDefaultModel("base")
	// 20 structured requests to adapter sql: TTFT 100 ms, tokens 20 ms
	// apart; 30 free ones to the base: TTFT 10 ms, tokens 5 ms apart.
	for range 20 {
		r := rec(0, 100, 20, 11)
		r.Structured, r.Model = true, "sql"
		a.Add(r)
	}
	for range 30 {
		a.Add(rec(0, 10, 5, 11))
	}
	bad := rec(0, 50, 20, 11) // a wrong structured answer: counted, not timed
	bad.Structured, bad.StructuredError, bad.Model = true, "not JSON", "sql"
	a.Add(bad)
	failed := &Record{EndNS: 5 * ms, ErrorKind: "http", Error: "http 500", Structured: true, Model: "sql"}
	a.Add(failed)
	s := a.Summary(1)

	require.Equal(t, []string{SubsetStructured, SubsetFree, "model:base", "model:sql"}, s.SubsetNames())
	st, free := s.Subsets[SubsetStructured], s.Subsets[SubsetFree]
	assert.Equal(t, 22, st.Sent)
	assert.Equal(t, 21, st.Completed)
	assert.Equal(t, 1, st.Failed)
	assert.Equal(t, 21, st.Structured)
	assert.Equal(t, 1, st.StructuredErrors)
	assert.EqualValues(t, 20, st.TTFT.Count, "the wrong answer is not timed")
	assert.InDelta(t, 100, st.TTFT.P50, 0.2)
	assert.InDelta(t, 20, st.TPOT.P50, 0.05)
	assert.Equal(t, 30, free.Sent)
	assert.InDelta(t, 10, free.TTFT.P99, 0.02)
	assert.InDelta(t, 5, free.TPOT.P50, 0.01)
	// The subsets' output throughputs add up to the whole's.
	assert.InDelta(t, s.OutputThroughput, st.OutputThroughput+free.OutputThroughput, 1e-9)
	require.NotNil(t, free.DecodeThroughput)
	assert.InDelta(t, 200, *free.DecodeThroughput, 0.5, "10 tokens in 50 ms")
	assert.Equal(t, s.Subsets["model:sql"].Sent, st.Sent, "every structured request went to sql")

	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"ttft.p50@structured", 100}, {"ttft.p50@free", 10}, {"tpot.p50@model:sql", 20},
		{"e2e.mean@model:base", 60}, {"error_rate@structured", 1.0 / 22}, {"error_rate@free", 0},
	} {
		got, err := s.Value(c.metric)
		require.NoError(t, err, c.metric)
		assert.InDelta(t, c.want, got, c.want*0.003+1e-9, c.metric)
	}
	_, err := s.Value("ttft.p50@model:chat")
	var nm *NotMeasuredError
	require.True(t, errors.As(err, &nm), "Value = %v", err)
	assert.Contains(t, err.Error(), `no request of the repetition was sent to model "chat"`)
	require.NoError(t, validateRep(&s), "a summary validates")
}

// A repetition of one kind and one model has no subsets: the whole is
// the subset, and results do not carry it twice. All-structured keeps the
// structured subset, so that a gate on it finds it.
func TestAggregatorSubsetsOnlyWhereTheyDiffer(t *testing.T) {
	free := NewAggregator(SLO{}, false, 0).WithSubsets(true, true)
	for range 10 {
		r := rec(0, 10, 5, 4)
		r.Model = "sql"
		free.Add(r)
	}
	assert.Nil(t, free.Summary(1).Subsets)

	structured := NewAggregator(SLO{}, false, 0).WithSubsets(true, true)
	for range 10 {
		r := rec(0, 10, 5, 4)
		r.Structured = true
		structured.Add(r)
	}
	s := structured.Summary(1)
	assert.Equal(t, []string{SubsetStructured}, s.SubsetNames())
	v, err := s.Value("ttft.p50@structured")
	require.NoError(t, err)
	assert.InDelta(t, s.TTFT.P50, v, 1e-9)
}

// Models past MaxModelSubsets are counted in the whole only, and said so.
func TestAggregatorModelSubsetsBounded(t *testing.T) {
	a := NewAggregator(SLO{}, false, 0).WithSubsets(true, true)
	for i := range MaxModelSubsets + 5 {
		r := rec(0, 10, 5, 4)
		r.Model = fmt.Sprintf("lora-%d", i)
		a.Add(r)
	}
	s := a.Summary(1)
	assert.Len(t, s.Subsets, MaxModelSubsets)
	assert.Equal(t, 5, s.SubsetsCut)
	assert.Equal(t, MaxModelSubsets+5, s.Sent)
}

// A result whose subsets cannot be true is refused, with the field.
func TestValidateSubsets(t *testing.T) {
	base := func() Repetition {
		a := NewAggregator(SLO{}, false, 0).WithSubsets(true, true)
		for i := range 4 {
			r := rec(0, 10, 5, 4)
			r.Structured = i%2 == 0
			a.Add(r)
		}
		return a.Summary(1)
	}
	for _, c := range []struct {
		name    string
		breakIt func(r *Repetition)
		want    string
	}{
		{"unknown subset", func(r *Repetition) { r.Subsets["vip"] = r.Subsets[SubsetFree] }, `subsets["vip"]: not a subset perfgate measures`},
		{"more sent than the whole", func(r *Repetition) { r.Subsets[SubsetFree].Sent = 9 }, `subsets["free"].sent: 9 sent of the repetition's 4`},
		{"negative", func(r *Repetition) { r.Subsets[SubsetFree].Completed = -1 }, `subsets["free"].completed`},
		{"null", func(r *Repetition) { r.Subsets[SubsetFree] = nil }, `want a subset, got null`},
		{"error rate", func(r *Repetition) { r.Subsets[SubsetFree].ErrorRate = 2 }, `subsets["free"].error_rate`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := base()
			require.NoError(t, validateRep(&r))
			c.breakIt(&r)
			err := validateRep(&r)
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), c.want), "error %q lacks %q", err, c.want)
		})
	}
}

// validateRep checks one repetition as Result.Validate checks each.
func validateRep(r *Repetition) error {
	var v checker
	v.repetition("r", r)
	return v.err()
}

// A subset none of whose requests was timed (every structured answer
// wrong, as llama.cpp gives without --jinja) has no latency, not one of 0.
func TestSubsetNothingTimed(t *testing.T) {
	a := NewAggregator(SLO{}, false, 0).WithSubsets(true, true)
	for i := range 6 {
		r := rec(0, 10, 5, 4)
		if i%2 == 0 {
			r.Structured, r.StructuredError = true, "not JSON"
		}
		a.Add(r)
	}
	s := a.Summary(1)
	_, err := s.Value("tpot.p50@structured")
	var nm *NotMeasuredError
	require.ErrorAs(t, err, &nm)
	assert.Contains(t, err.Error(), "no request of the subset was timed")
	v, err := s.Value("error_rate@structured")
	require.NoError(t, err, "the subset itself is there")
	assert.Zero(t, v)
}
