package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/stat"
)

// qualityConfig gates only quality: every latency gate is off, so that the
// verdict is the eval suite's alone. 4 repetitions of 60 requests with one
// eval item beside every workload request (share 0.5) carry the 200 items
// of examples/evals/arithmetic.jsonl amid the load.
const qualityConfig = `
target: {base_url: %q}
warmup: {method: none}
repetitions: 4
gates: {ttft.p95: off, ttft.p99: off, tpot.p99: off, e2e.p99: off, output_throughput: off, goodput: off, error_rate: off, cold_start: off}
scenarios:
  - name: chat
    synth: {requests: 60, input: {type: fixed, value: 32}, output: {type: fixed, value: 8}}
    load: {type: closed, concurrency: 8}
quality:
  suites: [%q]
  mode: %s
  share: 0.5
  gates: {accuracy: %s}
`

// answeringSim starts a simulator that answers the suite's items right with
// probability accuracy.
func answeringSim(t *testing.T, suite *sim.AnswerSuite, accuracy float64) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = 2*time.Millisecond, 0, 0
	cfg.Answers, cfg.Accuracy = []*sim.AnswerSuite{suite}, accuracy
	url, _ := startSim(t, cfg)
	return url
}

// The quality checks: a full perfgate gate against the simulator,
// with a baseline promoted from a simulator answering 90% right.
func TestQualityGateAgainstSimulator(t *testing.T) {
	suitePath, err := filepath.Abs("../../examples/evals/arithmetic.jsonl")
	require.NoError(t, err)
	suite := loadAnswers(t, suitePath)
	require.GreaterOrEqual(t, len(suite.Items), 200)

	dir := t.TempDir()
	write := func(name, mode, tolerance string, url string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, fmt.Appendf(nil, qualityConfig, url, suitePath, mode, tolerance), 0o644))
		return p
	}
	base := answeringSim(t, suite, 0.9)
	conf := write("perfgate.yaml", "interleaved", "-2 points", base)
	promoteBaseline(t, conf)

	baseline, err := result.Read(filepath.Join(dir, "baselines", "chat.json"))
	require.NoError(t, err)
	require.Len(t, baseline.Scenarios[0].Quality, 1)
	bq := baseline.Scenarios[0].Quality[0]
	pass, n := bq.Passed()
	assert.Equal(t, len(suite.Items), n)
	assert.InDelta(t, 0.9, float64(pass)/float64(n), 0.06, "the simulator answers about 90%% right")
	assert.Equal(t, n, bq.Interleaved, "share 0.5 over 4×60 requests carries every item amid the load")
	for _, it := range bq.Items {
		require.Empty(t, it.Error, it.ID)
		require.NotEmpty(t, it.Output, it.ID)
	}

	suiteOf := func(t *testing.T, v *compare.Verdict) compare.Suite {
		t.Helper()
		require.Len(t, v.Scenarios, 1)
		require.Len(t, v.Scenarios[0].Quality, 1)
		q := v.Scenarios[0].Quality[0]
		require.Len(t, q.Gates, 2, "accuracy, and the error rate by default")
		// Keep the accuracy gate first for the checks below: no request
		// fails, so the error-rate gate passes.
		slices.SortStableFunc(q.Gates, func(a, b compare.QualityGate) int { return strings.Compare(a.Metric, b.Metric) })
		assert.Equal(t, []string{"accuracy", "eval_error_rate"}, []string{q.Gates[0].Metric, q.Gates[1].Metric})
		assert.Equal(t, stat.Pass, q.Gates[1].Outcome, q.Gates[1].Reason)
		return q
	}

	t.Run("0.9 against 0.9 passes", func(t *testing.T) {
		v, stderr, err := gate(t, conf, answeringSim(t, suite, 0.9))
		require.NoError(t, err, stderr)
		q := suiteOf(t, v)
		assert.Equal(t, stat.Pass, q.Gates[0].Outcome, q.Gates[0].Reason)
		assert.Equal(t, stat.Pass, v.Outcome)
		assert.Equal(t, q.N, q.Drift.Identical, "A/A: every output identical")
	})

	t.Run("0.6 against 0.9 regresses", func(t *testing.T) {
		v, stderr, err := gate(t, conf, answeringSim(t, suite, 0.6))
		require.Error(t, err, stderr)
		assert.Equal(t, exit.Regression, exit.Code(err))
		q := suiteOf(t, v)
		g := q.Gates[0]
		assert.Equal(t, stat.Regression, g.Outcome, g.Reason)
		assert.InDelta(t, -0.3, float64(g.Change.Estimate), 0.08)
		assert.Zero(t, g.Gains, "a lower accuracy only turns right answers wrong")
		assert.NotEmpty(t, q.Examples)
		assert.True(t, q.Examples[0].BaselinePass && !q.Examples[0].CandidatePass, "pass→fail examples first")
	})

	t.Run("0.88 with a 5-point tolerance is never a regression", func(t *testing.T) {
		conf5 := write("five.yaml", "separate", "-5 points", base)
		v, stderr, err := gate(t, conf5, answeringSim(t, suite, 0.88))
		q := suiteOf(t, v)
		assert.NotEqual(t, stat.Regression, q.Gates[0].Outcome, q.Gates[0].Reason)
		assert.Contains(t, []stat.Outcome{stat.Pass, stat.Inconclusive}, v.Outcome)
		if v.Outcome == stat.Pass {
			require.NoError(t, err, stderr)
		}
		assert.Contains(t, q.Warnings, "the baseline answered in interleaved mode and the candidate in separate mode: batching differs")
	})
}

// The case: a candidate that answers every item right but fails
// about one request in ten in transport (the simulator at --error-rate 0.1,
// half HTTP 500s, half broken streams). Its accuracy is 100%, not the 84-87%
// that counting failures as wrong answers made of it: the failed items are
// dropped from the pairs, reported and gated as the suite's error rate (the
// default +2 points), which the candidate fails, and listed with their
// errors among the changed items.
func TestQualityFailuresAreNotWrongAnswers(t *testing.T) {
	suitePath, err := filepath.Abs("../../examples/evals/arithmetic.jsonl")
	require.NoError(t, err)
	suite := loadAnswers(t, suitePath)
	dir := t.TempDir()
	conf := filepath.Join(dir, "perfgate.yaml")
	yaml := fmt.Sprintf(qualityConfig, answeringSim(t, suite, 1), suitePath, "interleaved", "-2 points")
	// A run with more than 5% failed requests stops (exit 3) unless it
	// allows more: this one allows up to 30%.
	yaml = strings.Replace(yaml, "  - name: chat\n", "  - name: chat\n    max_error_rate: 0.3\n", 1)
	require.NoError(t, os.WriteFile(conf, []byte(yaml), 0o644))
	promoteBaseline(t, conf)

	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken = 2*time.Millisecond, 0, 0
	cfg.Answers, cfg.Accuracy = []*sim.AnswerSuite{suite}, 1
	// Seed 2's first request, the readiness probe's, is answered.
	cfg.ErrorRate, cfg.Seed = 0.1, 2
	failing, _ := startSim(t, cfg)

	v, stderr, err := gate(t, conf, failing, "--format", "json")
	require.Error(t, err, stderr)
	require.Len(t, v.Scenarios, 1)
	require.Len(t, v.Scenarios[0].Quality, 1)
	q := v.Scenarios[0].Quality[0]

	cand, rerr := result.Read(filepath.Join(dir, "cand.json"))
	require.NoError(t, rerr)
	items := cand.Scenarios[0].Quality[0]
	failed := items.Failed()
	t.Logf("%d of %d eval requests failed: %v", failed, len(items.Items), items.FailedKinds())
	require.Greater(t, failed, 5, "about one request in ten fails")
	for _, it := range items.Items {
		if it.Failed() {
			assert.Contains(t, []string{"http", "stream"}, it.ErrorKind, "%s: %s", it.ID, it.Error)
			assert.NotEmpty(t, it.Error, it.ID)
			assert.False(t, it.Pass, it.ID)
		}
	}

	// Accuracy unchanged: 100% -> 100%, over the items answered on both sides.
	assert.Equal(t, len(suite.Items)-failed, q.N)
	assert.Equal(t, failed, q.Dropped)
	assert.Equal(t, q.N, q.Baseline.Pass)
	assert.Equal(t, q.N, q.Candidate.Pass)
	var acc, errs *compare.QualityGate
	for i := range q.Gates {
		switch q.Gates[i].Metric {
		case "accuracy":
			acc = &q.Gates[i]
		case "eval_error_rate":
			errs = &q.Gates[i]
		}
	}
	require.NotNil(t, acc)
	require.NotNil(t, errs, "the error-rate gate is on by default")
	assert.Equal(t, 1.0, float64(acc.Baseline.Estimate))
	assert.Equal(t, 1.0, float64(acc.Candidate.Estimate))
	assert.Equal(t, stat.Pass, acc.Outcome, acc.Reason)
	assert.Zero(t, acc.Losses, "no answer turned wrong")

	// The error rate, reported and gated.
	assert.Equal(t, failed, q.Candidate.Failed)
	assert.InDelta(t, float64(failed)/float64(len(suite.Items)), float64(q.Candidate.ErrorRate.Estimate), 1e-9)
	assert.Zero(t, q.Baseline.Failed)
	assert.Equal(t, "+2 points", errs.Tolerance)
	assert.InDelta(t, float64(failed)/float64(len(suite.Items)), float64(errs.Change.Estimate), 1e-9)
	assert.NotEqual(t, stat.Pass, errs.Outcome, "a server failing its eval requests does not pass: %s", errs.Reason)
	assert.NotEqual(t, stat.Pass, v.Outcome)

	// The changed items show the error, not an empty wrong answer.
	require.NotEmpty(t, q.Examples)
	ex := q.Examples[0]
	assert.True(t, ex.BaselinePass)
	assert.NotEmpty(t, ex.CandidateError)
	assert.Contains(t, []string{"http", "stream"}, ex.CandidateErrorKind)

	// And the terminal report says so.
	var stdout, stderr2 bytes.Buffer
	require.Error(t, Main(context.Background(), []string{"compare", "--baselines", filepath.Join(dir, "baselines", "chat.json"), "--result", filepath.Join(dir, "cand.json")}, &stdout, &stderr2))
	out := stdout.String()
	assert.Contains(t, out, "accuracy 100.0% ("+fmt.Sprint(q.N)+"/"+fmt.Sprint(q.N)+") → 100.0% ("+fmt.Sprint(q.N)+"/"+fmt.Sprint(q.N)+")", out)
	assert.Contains(t, out, fmt.Sprintf("failed requests 0 → %d", failed), out)
	assert.Contains(t, out, "(pass → failed)", out)
}

// A malformed eval suite stops run, gate and validate with exit 2, naming
// the file and the line, before anything is sent.
func TestMalformedSuiteIsUsageError(t *testing.T) {
	dir := t.TempDir()
	suite := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(suite, []byte(
		`{"id":"a","prompt":"2+2?","scorer":"numeric","expected":4}`+"\n"+
			`{"id":"b","prompt":"x","scorer":"regex","expected":"(unclosed"}`+"\n"+
			`{"id":"c","prompt":"x","scorer":"json_schema","options":{"schema":{"type":12}}}`+"\n"+
			`not json`+"\n"), 0o644))
	conf := filepath.Join(dir, "perfgate.yaml")
	// The target is never contacted: loading fails first.
	require.NoError(t, os.WriteFile(conf, fmt.Appendf(nil, qualityConfig, "http://127.0.0.1:9", suite, "interleaved", "-2 points"), 0o644))
	for _, args := range [][]string{
		{"run", "-c", conf, "-o", filepath.Join(dir, "r.json")},
		{"gate", "-c", conf, "-o", filepath.Join(dir, "r.json")},
		{"validate", "-c", conf},
	} {
		t.Run(args[0], func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), args, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, exit.Usage, exit.Code(err), err.Error())
			for _, line := range []string{suite + ":2: expected", suite + ":3: options.schema", suite + ":4:"} {
				assert.Contains(t, err.Error(), line)
			}
		})
	}
}

// loadAnswers reads a suite as perfgate sim reads it, to answer it.
func loadAnswers(t *testing.T, path string) *sim.AnswerSuite {
	t.Helper()
	suites, err := sim.LoadAnswers([]string{path})
	require.NoError(t, err)
	return suites[0]
}
