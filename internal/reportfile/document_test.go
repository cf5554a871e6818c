package reportfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

func TestNewDocument(t *testing.T) {
	base := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{aggregated("chat", 3, 1)}}
	cand := &result.Result{Schema: result.Schema, Scenarios: []result.ScenarioResult{aggregated("chat", 3, 1.5), aggregated("new", 2, 1)}}
	v := &compare.Verdict{Scenarios: []compare.Scenario{{Name: "chat"}, {Name: "new", NoBaseline: true}}}
	history := []baseline.Entry{
		{Scenario: "chat", Commit: "a", Date: time.Unix(1, 0)},
		{Scenario: "other", Commit: "b"},
		{Scenario: "chat", Commit: "c", Date: time.Unix(2, 0)},
	}
	d, err := New(v, []*result.Result{base}, cand, history)
	require.NoError(t, err)
	require.Len(t, d.Scenarios, 2)
	chat := d.Scenarios[0]
	assert.Equal(t, "chat", chat.Name)
	assert.Len(t, chat.History, 2, "only the scenario's own history")
	require.Len(t, chat.Latency, 4)
	ttft := chat.Latency[0]
	assert.Equal(t, "ttft", ttft.Metric)
	require.NotNil(t, ttft.Baseline)
	require.NotNil(t, ttft.Candidate)
	// TTFT is 1..100 ms on the baseline, 1.5..150 ms on the candidate.
	assert.Equal(t, "p50", ttft.Baseline.Percentiles[0].Name)
	assert.InDelta(t, 50, ttft.Baseline.Percentiles[0].Value, 0.1)
	assert.InDelta(t, 75, ttft.Candidate.Percentiles[0].Value, 0.1)
	assert.InDelta(t, 99, ttft.Baseline.Percentiles[3].Value, 0.1)
	// The pooled CDF rises from the smallest value to the largest.
	cdf := ttft.Candidate.CDF
	require.NotEmpty(t, cdf)
	assert.InDelta(t, 1.5, cdf[0].Value, 0.01)
	assert.InDelta(t, 150, cdf[len(cdf)-1].Value, 0.2)
	assert.Equal(t, 1.0, cdf[len(cdf)-1].Fraction)
	for i := 1; i < len(cdf); i++ {
		assert.Greater(t, cdf[i].Value, cdf[i-1].Value, "one point per distinct value")
		assert.Greater(t, cdf[i].Fraction, cdf[i-1].Fraction)
	}
	// The median point says half the requests are at or below 75 ms.
	for _, p := range cdf {
		if p.Fraction == 0.5 {
			assert.InDelta(t, 75, p.Value, 0.1)
		}
	}
	assert.Nil(t, d.Scenarios[1].Latency[0].Baseline, "no baseline, no baseline distribution")
	assert.NotNil(t, d.Scenarios[1].Latency[0].Candidate)

	// A histogram that does not decode names the scenario and repetition.
	cand.Scenarios[0].Repetitions[1].Histograms["ttft"] = []byte("not a histogram")
	_, err = New(v, []*result.Result{base}, cand, nil)
	assert.ErrorContains(t, err, "candidate: scenario chat repetition 2: ttft histogram")
}

// A report file of another kind, schema or shape is refused with what it
// is, naming the file.
func TestReadRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	d := docOf(stat.Regression, 3)
	d.Title, d.Source = "job", Source{Repository: "a/b", PullRequest: 7, Commit: "abc"}
	require.NoError(t, Write(path, d))
	back, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, d, back, "a report reads back as written")

	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	for _, c := range []struct{ name, content, want string }{
		{"result.json", `{"schema":"perfgate/result/v1"}`, "this is a result file"},
		{"result2.json", `{"schema":"perfgate/result/v2"}`, "this is a result file"},
		{"other.json", `{"schema":"perfgate/report/v9"}`, `schema "perfgate/report/v9", want "perfgate/report/v1"`},
		{"text.json", `hello`, "not JSON"},
		{"noverdict.json", `{"schema":"perfgate/report/v1","scenarios":[]}`, "verdict: missing"},
		{"short.json", `{"schema":"perfgate/report/v1","verdict":{"scenarios":[{"name":"a"}]},"scenarios":[]}`, "1 verdict scenarios"},
	} {
		_, err := Read(write(c.name, c.content))
		assert.ErrorContains(t, err, c.want, c.name)
		assert.ErrorContains(t, err, c.name, "the error names the file")
	}
	_, err = Read(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestOutcomeAndExitCode(t *testing.T) {
	pass, reg, inc := docOf(stat.Pass, 0), docOf(stat.Regression, 0), docOf(stat.Inconclusive, 0)
	assert.Equal(t, "pass", string(Outcome([]*Document{pass, pass})))
	assert.Equal(t, "inconclusive", string(Outcome([]*Document{pass, inc})))
	assert.Equal(t, "regression", string(Outcome([]*Document{inc, reg, pass})))
	incFail := docOf(stat.Inconclusive, 0)
	incFail.Verdict.OnInconclusive = config.InconclusiveFail
	for _, c := range []struct {
		docs   []*Document
		failOn string
		code   int
		err    string // ExitError's message, "" for none
	}{
		{[]*Document{pass, inc}, exit.FailOnConfig, 0, ""}, // the inconclusive verdict's on_inconclusive is pass
		{[]*Document{pass, inc}, "", 0, ""},
		{[]*Document{pass, reg}, exit.FailOnConfig, 1, "regression"},
		{[]*Document{pass, incFail}, exit.FailOnConfig, 1, "inconclusive, and compare.on_inconclusive is fail"},
		{[]*Document{inc, incFail}, exit.FailOnConfig, 1, "inconclusive, and compare.on_inconclusive is fail"},
		{[]*Document{incFail, reg}, exit.FailOnConfig, 1, "regression"},
		{[]*Document{pass, inc}, exit.FailOnInconclusive, 1, "inconclusive, and --fail-on inconclusive"},
		{[]*Document{pass, incFail}, exit.FailOnRegression, 0, ""},
		{[]*Document{inc, reg}, exit.FailOnRegression, 1, "regression"},
		{[]*Document{reg, incFail}, exit.FailOnNever, 0, ""},
		{[]*Document{pass, pass}, exit.FailOnInconclusive, 0, ""},
	} {
		var outcomes []string
		for _, d := range c.docs {
			outcomes = append(outcomes, string(d.Verdict.Outcome)+"/"+d.Verdict.OnInconclusive)
		}
		if got := ExitCode(c.docs, c.failOn); got != c.code {
			t.Errorf("ExitCode(%v, %q) = %d, want %d", outcomes, c.failOn, got, c.code)
		}
		err := ExitError(c.docs, c.failOn)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("ExitError(%v, %q) = %v, want nil", outcomes, c.failOn, err)
		case c.err != "" && (err == nil || err.Error() != c.err || exit.Code(err) != c.code):
			t.Errorf("ExitError(%v, %q) = %v (exit %d), want %q (exit %d)", outcomes, c.failOn, err, exit.Code(err), c.err, c.code)
		}
	}
}

// exit.ForOutcome knows compare.on_inconclusive's values as strings: they
// must be config's.
func TestExitPolicyMatchesConfig(t *testing.T) {
	for _, c := range []struct {
		onInconclusive string
		want           int
	}{
		{config.InconclusivePass, exit.OK},
		{config.InconclusiveFail, exit.Regression},
		{config.DefaultOnInconclusive, exit.Regression},
		{"", exit.Regression}, // a verdict from before the setting: the default
	} {
		got := exit.ForOutcome(string(stat.Inconclusive), exit.Policy{OnInconclusive: c.onInconclusive})
		if got != c.want {
			t.Errorf("exit.ForOutcome(inconclusive, on_inconclusive %q) = %d, want %d", c.onInconclusive, got, c.want)
		}
	}
	for _, o := range []stat.Outcome{stat.Pass, stat.Inconclusive, stat.Regression} {
		if !slices.Contains([]string{exit.OutcomePass, exit.OutcomeInconclusive, exit.OutcomeRegression}, string(o)) {
			t.Errorf("outcome %q is not one exit knows", o)
		}
	}
}

// docOf is a report of one scenario whose verdict is outcome (an
// inconclusive one under on_inconclusive pass), with history entries.
func docOf(outcome stat.Outcome, history int) *Document {
	v := &compare.Verdict{Outcome: outcome, Alpha: 0.05, Scenarios: []compare.Scenario{{Name: "chat", BaselineN: 7, CandidateN: 7}}}
	if outcome == stat.Inconclusive {
		v.OnInconclusive = config.InconclusivePass
	}
	d := &Document{Schema: Schema, Key: "perfgate.yaml", Verdict: v, Scenarios: []ScenarioData{{Name: "chat"}}}
	start := time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
	for i := range history {
		d.Scenarios[0].History = append(d.Scenarios[0].History, baseline.Entry{
			Scenario: "chat", Commit: fmt.Sprintf("%07x0000000000", 0xa1b2c3+i), Date: start.AddDate(0, 0, i), Repetitions: 7,
			Metrics: map[string]baseline.Summary{"ttft.p99": {Median: 50 + float64(i%3), N: 7}},
		})
	}
	return d
}

// aggregated is a scenario whose repetitions are aggregated from records
// with TTFT i·scale ms for i = 1..100, so every percentile is known.
func aggregated(name string, reps int, scale float64) result.ScenarioResult {
	s := result.ScenarioResult{Name: name}
	for r := 1; r <= reps; r++ {
		a := result.NewAggregator(result.SLO{}, false, 0)
		for i := 1; i <= 100; i++ {
			ttft := int64(float64(i) * scale * 1000)
			a.Add(&result.Record{SentNS: int64(i) * 1e6, FirstTokenNS: int64(i)*1e6 + ttft*1000, EndNS: int64(i)*1e6 + 2*ttft*1000,
				TTFTUS: ttft, E2EUS: 2 * ttft, ITLUS: []int64{ttft / 2, ttft / 2}, OutputTokens: 3, PromptTokens: 10, TokensFrom: "usage"})
		}
		s.Repetitions = append(s.Repetitions, a.Summary(r))
	}
	return s
}
