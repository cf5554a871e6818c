package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/stat"
)

var (
	verdictInf = compare.Num(math.Inf(1))
	verdictNaN = compare.Num(math.NaN())
)

func verdictNums(xs ...float64) []compare.Num {
	out := make([]compare.Num, len(xs))
	for i, x := range xs {
		out[i] = compare.Num(x)
	}
	return out
}

func verdictSide(median, lo, hi float64, values ...float64) compare.Summary {
	return compare.Summary{N: len(values), Median: compare.Num(median), Lo: compare.Num(lo), Hi: compare.Num(hi), Values: verdictNums(values...)}
}

// regressionVerdict has a regression, a pass and inconclusive gates with
// warnings across two scenarios, a cold start that was not gated, changes, a
// mismatch and run warnings.
func regressionVerdict() *compare.Verdict {
	// Three a side: no median has a 95% interval (IntervalNeeds), nor
	// the change a 90% one.
	smallBase := verdictSide(30.1, math.Inf(-1), math.Inf(1), 29.8, 30.1, 31.0)
	smallCand := verdictSide(31.4, math.Inf(-1), math.Inf(1), 30.2, 31.4, 33.9)
	smallE2EBase := verdictSide(2512, math.Inf(-1), math.Inf(1), 2498, 2512, 2530)
	smallE2ECand := verdictSide(2540, math.Inf(-1), math.Inf(1), 2519, 2540, 2601)
	for _, s := range []*compare.Summary{&smallBase, &smallCand, &smallE2EBase, &smallE2ECand} {
		s.IntervalNeeds = 6
	}
	few := []string{
		"need >= 4 samples a side to detect a regression at level 0.025 (alpha 0.05 over 2 gates)",
	}
	return &compare.Verdict{
		Outcome: stat.Regression, OnInconclusive: "fail", Alpha: 0.05,
		Scenarios: []compare.Scenario{
			{
				Name: "chat-c16", BaselineN: 15, CandidateN: 7, Level: 0.05,
				Gates: []compare.Gate{
					{
						Metric: "ttft.p99", Title: "TTFT p99", Unit: "ms", Better: "lower", Tolerance: "+10%",
						Baseline:   verdictSide(41.2, 40.1, 42.5, 40.1, 40.6, 41.0, 41.2, 41.3, 41.9, 42.5),
						Candidate:  verdictSide(54.05, 52.0, 56.3, 52.0, 53.1, 54.05, 55.2, 56.3),
						Shift:      compare.Interval{Estimate: 12.85, Lo: 10.3, Hi: 15.7},
						Change:     compare.Interval{Estimate: 0.312, Lo: 0.25, Hi: 0.381},
						Confidence: 0.9, P: 0.0007, PAdjusted: 0.0021, Level: 0.05,
						Outcome: stat.Regression, Reason: "significant (p=0.0021) and +31.2% is beyond +10%",
					},
					{
						Metric: "error_rate", Title: "error rate", Unit: "%", Better: "lower", Tolerance: "+1 points",
						Baseline:     verdictSide(0, 0, 0, 0, 0, 0),
						Candidate:    verdictSide(0.005, 0, 0.012, 0, 0.005, 0.012),
						Shift:        compare.Interval{Estimate: 0.005, Lo: 0, Hi: 0.012},
						Change:       compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN},
						ChangePoints: &compare.Interval{Estimate: 0.5, Lo: 0, Hi: 1.2},
						Confidence:   0.9, P: 0.04, PAdjusted: 0.08, Level: 0.05,
						Outcome: stat.Inconclusive, Reason: "the 90% interval reaches +1.20 points, beyond +1 point",
					},
					{
						Metric: "output_throughput", Title: "output throughput", Unit: "tok/s", Better: "higher", Tolerance: "-5%",
						Baseline:   verdictSide(1234.5, 1220, 1251, 1220, 1230, 1234.5, 1240, 1251),
						Candidate:  verdictSide(1240.2, 1228, 1262, 1228, 1236, 1240.2, 1250, 1262),
						Shift:      compare.Interval{Estimate: 6.2, Lo: -14.8, Hi: 24.7},
						Change:     compare.Interval{Estimate: 0.005, Lo: -0.012, Hi: 0.02},
						Confidence: 0.9, P: 0.71, PAdjusted: 1, Level: 0.05,
						Outcome: stat.Pass, Reason: "the 90% interval rules out worse than -5%",
					},
				},
				Warnings: []string{"token counts come from usage in the baseline and stream in the candidate: throughputs may not be comparable"},
			},
			{
				Name: "chat-c1", BaselineN: 3, CandidateN: 3, Level: 0.05,
				Gates: []compare.Gate{
					{
						Metric: "ttft.p99", Title: "TTFT p99", Unit: "ms", Better: "lower", Tolerance: "+10%",
						Baseline: smallBase, Candidate: smallCand,
						Shift:      compare.Interval{Estimate: 1.3, Lo: compare.Num(math.Inf(-1)), Hi: verdictInf},
						Change:     compare.Interval{Estimate: 0.0432, Lo: compare.Num(math.Inf(-1)), Hi: verdictInf},
						Confidence: 0.9, P: 0.2, PAdjusted: 0.4, Level: 0.05, IntervalNeeds: 6,
						Outcome: stat.Inconclusive, Reason: "too few samples: need >= 6 a side", Warnings: few,
					},
					{
						Metric: "e2e.p99", Title: "E2E p99", Unit: "ms", Better: "lower", Tolerance: "+10%",
						Baseline: smallE2EBase, Candidate: smallE2ECand,
						Shift:      compare.Interval{Estimate: 28, Lo: compare.Num(math.Inf(-1)), Hi: verdictInf},
						Change:     compare.Interval{Estimate: 0.0111, Lo: compare.Num(math.Inf(-1)), Hi: verdictInf},
						Confidence: 0.9, P: 0.35, PAdjusted: 0.4, Level: 0.05, IntervalNeeds: 6,
						Outcome: stat.Inconclusive, Reason: "too few samples: need >= 6 a side", Warnings: few,
					},
				},
				NotGated: []compare.NotGated{{
					Metric: "cold_start", Title: "cold start", Unit: "ms",
					Baseline: verdictNums(3238.6), Candidate: verdictNums(3401.2),
					Reason: "measured once per stack start: 1+1 starts, and a test needs >= 4 a side; shown, not gated",
				}},
				Warnings: []string{"the candidate's warm-up never reached steady state: its first repetitions may still be warming up"},
			},
		},
		Changes: []compare.Difference{
			{Field: "engine version", Baseline: "v0.6.3", Candidate: "v0.7.0"},
			{Field: "stack args", Baseline: "", Candidate: "--quantization fp8"},
		},
		Mismatches: []compare.Difference{
			{Field: "GPU", Baseline: "1× NVIDIA H100 80GB HBM3", Candidate: "1× NVIDIA H100 NVL"},
		},
		Warnings: []string{"compared despite 1 identity mismatches (--allow-mismatch): the numbers may not be about this change"},
	}
}

func verdictPassGate(title, metric string, base, cand, change float64) compare.Gate {
	return compare.Gate{
		Metric: metric, Title: title, Unit: "ms", Better: "lower", Tolerance: "+10%",
		Baseline:   verdictSide(base, base*0.98, base*1.02, base*0.98, base, base*1.02, base*1.01, base*0.99, base, base),
		Candidate:  verdictSide(cand, cand*0.98, cand*1.02, cand*0.98, cand, cand*1.02, cand*1.01, cand*0.99, cand, cand),
		Shift:      compare.Interval{Estimate: compare.Num(cand - base), Lo: compare.Num((cand - base) - 0.02*base), Hi: compare.Num((cand - base) + 0.02*base)},
		Change:     compare.Interval{Estimate: compare.Num(change), Lo: compare.Num(change - 0.02), Hi: compare.Num(change + 0.02)},
		Confidence: 0.9, P: 0.6, PAdjusted: 1, Level: 0.05,
		Outcome: stat.Pass, Reason: "the 90% interval rules out worse than +10%",
	}
}

func passVerdict() *compare.Verdict {
	return &compare.Verdict{
		Outcome: stat.Pass, OnInconclusive: "fail", Alpha: 0.05,
		Scenarios: []compare.Scenario{{
			Name: "chat-c16", BaselineN: 7, CandidateN: 7, Level: 0.05,
			Gates: []compare.Gate{
				verdictPassGate("TTFT p99", "ttft.p99", 41.2, 41.6, 0.0097),
				verdictPassGate("E2E p99", "e2e.p99", 2512, 2488, -0.0096),
			},
		}},
	}
}

func noBaselineVerdict() *compare.Verdict {
	return &compare.Verdict{
		Outcome: stat.Pass, OnInconclusive: "fail", Alpha: 0.05,
		Scenarios: []compare.Scenario{
			{
				Name: "chat-c16", BaselineN: 7, CandidateN: 7, Level: 0.05,
				Gates: []compare.Gate{verdictPassGate("TTFT p99", "ttft.p99", 41.2, 40.9, -0.0073)},
			},
			{Name: "chat-c64", NoBaseline: true, CandidateN: 7},
		},
		Warnings: []string{"scenario chat-c64 has no baseline: not compared"},
	}
}

func inconclusiveVerdict() *compare.Verdict {
	g := verdictPassGate("TTFT p99", "ttft.p99", 41.2, 44.5, 0.08)
	g.Change.Hi, g.Shift.Hi = 0.14, 5.8
	g.P, g.PAdjusted = 0.03, 0.03
	g.Outcome, g.Reason = stat.Inconclusive, "the 90% interval reaches +14.0%, beyond +10%"
	return &compare.Verdict{
		Outcome: stat.Inconclusive, OnInconclusive: "pass", Alpha: 0.05, Sequential: true,
		Scenarios: []compare.Scenario{{Name: "chat-c16", BaselineN: 7, CandidateN: 7, Level: 0.0125, Gates: []compare.Gate{g}}},
	}
}

var verdictCases = []struct {
	name    string
	verdict func() *compare.Verdict
	first   string // what the markdown's first line must say
	last    string // what the text's last line must start with
}{
	{"regression", regressionVerdict, "regression", "verdict: REGRESSION (1 gate regressed: chat-c16 TTFT p99 +31.2%)"},
	{"pass", passVerdict, "pass", "verdict: pass (2 gates)"},
	{"nobaseline", noBaselineVerdict, "pass", "verdict: pass (1 gate)"},
	{"inconclusive", inconclusiveVerdict, "inconclusive", "verdict: inconclusive (1 gate undecided; on_inconclusive: pass → exit 0)"},
	{"ab", abVerdict, "regression", "verdict: REGRESSION (1 gate regressed: chat-c16 TTFT p95 +12.0%)"},
}

// The verdict's text ends with its verdict line and has no trailing
// blanks; what it says is the view's golden (TestVerdictViewGolden), how a
// terminal writes it the renderer's (TestRenderBlocksText).
func TestVerdictText(t *testing.T) {
	for _, c := range verdictCases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := emitVerdictText(&buf, c.verdict()); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; last != c.last {
				t.Errorf("last line = %q, want %q", last, c.last)
			}
			for i, l := range lines {
				if strings.TrimRight(l, " ") != l {
					t.Errorf("line %d has trailing spaces: %q", i+1, l)
				}
			}
		})
	}
}

// The verdict's markdown starts with its verdict.
func TestVerdictMarkdown(t *testing.T) {
	for _, c := range verdictCases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := emitVerdictMarkdown(&buf, c.verdict()); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(buf.String(), "\n")
			if !strings.Contains(first, "perfgate: "+c.first) {
				t.Errorf("first line %q does not give the verdict %q", first, c.first)
			}
		})
	}
}

func TestVerdictMarkdownHeadlineWorstChange(t *testing.T) {
	var buf bytes.Buffer
	if err := emitVerdictMarkdown(&buf, regressionVerdict()); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(buf.String(), "\n")
	if want := "❌"; !strings.HasPrefix(first, "### "+want) {
		t.Errorf("first line %q does not start with %s", first, want)
	}
	if want := "chat-c16 TTFT p99 +31.2% [+25.0%, +38.1%]"; !strings.Contains(first, want) {
		t.Errorf("first line %q does not name the worst change %q", first, want)
	}
}

func TestVerdictJSONRoundTrip(t *testing.T) {
	v := regressionVerdict()
	var buf bytes.Buffer
	if err := emitVerdictJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Fatalf("not valid JSON:\n%s", buf.Bytes())
	}
	if !bytes.Contains(buf.Bytes(), []byte("\n  \"outcome\": \"regression\"")) {
		t.Errorf("JSON is not indented with the model's tags:\n%s", buf.Bytes())
	}

	// The infinite upper bound of chat-c1's TTFT change is null.
	var raw struct {
		Scenarios []struct {
			Gates []struct {
				Change map[string]*float64 `json:"change"`
			} `json:"gates"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	change := raw.Scenarios[1].Gates[0].Change
	if hi, ok := change["hi"]; !ok || hi != nil {
		t.Errorf("infinite change bound = %v (present %v), want null", hi, ok)
	}
	if est := change["estimate"]; est == nil || *est != 0.0432 {
		t.Errorf("change estimate = %v, want 0.0432", est)
	}

	var back compare.Verdict
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	// Beside a known estimate, a null bound is an unbounded one.
	if hi := back.Scenarios[1].Gates[0].Change.Hi; !math.IsInf(float64(hi), 1) {
		t.Errorf("null bound read back as %v, want +Inf", hi)
	}
	if back.Outcome != stat.Regression || back.Scenarios[0].Gates[0].Outcome != stat.Regression ||
		back.Scenarios[0].Gates[0].PAdjusted != 0.0021 || len(back.Mismatches) != 1 || len(back.Changes) != 2 {
		t.Errorf("round trip lost fields: %+v", back)
	}
	var again bytes.Buffer
	if err := emitVerdictJSON(&again, &back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("JSON changed on a round trip:\n--- first\n%s\n--- second\n%s", buf.Bytes(), again.Bytes())
	}
}

func TestVerdictEscapesResultText(t *testing.T) {
	v := passVerdict()
	v.Scenarios[0].Name = "chat|<script>\x07alert(1)"
	v.Changes = []compare.Difference{{Field: "engine version", Baseline: "v1\x1b[31m", Candidate: "*v2*_[x](y)`"}}

	var md bytes.Buffer
	if err := emitVerdictMarkdown(&md, v); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, bad := range []string{"\x07", "\x1b", "<script>", "chat|"} {
		if strings.Contains(out, bad) {
			t.Errorf("markdown holds %q unescaped:\n%s", bad, out)
		}
	}
	for _, want := range []string{`chat\|\<script\> alert(1)`, `\*v2\*\_\[x\](y)` + "\\`"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks the escaped %q:\n%s", want, out)
		}
	}

	var text bytes.Buffer
	if err := emitVerdictText(&text, v); err != nil {
		t.Fatal(err)
	}
	out = text.String()
	for _, bad := range []string{"\x07", "\x1b"} {
		if strings.Contains(out, bad) {
			t.Errorf("text holds control character %q:\n%s", bad, out)
		}
	}
	if want := "scenario chat|<script> alert(1) ·"; !strings.Contains(out, want) {
		t.Errorf("text lacks the stripped name %q:\n%s", want, out)
	}
}

func TestVerdictMarkdownTruncates(t *testing.T) {
	v := passVerdict()
	v.Scenarios[0].Name = strings.Repeat("a", 500)
	var buf bytes.Buffer
	if err := emitVerdictMarkdown(&buf, v); err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("a", verdictMaxShown-1) + "…"; !strings.Contains(buf.String(), want) {
		t.Errorf("long name not cut to %d runes", verdictMaxShown)
	}
	if strings.Contains(buf.String(), strings.Repeat("a", verdictMaxShown)) {
		t.Errorf("long name shown past %d runes", verdictMaxShown)
	}
}

func TestVerdictNumbers(t *testing.T) {
	for _, c := range []struct {
		x    float64
		unit string
		want string
	}{
		{41.2, "ms", "41.2"}, {1234, "ms", "1234"}, {1234.5, "tok/s", "1235"}, {0.45, "ms", "0.450"},
		{7.891, "req/s", "7.89"}, {0.005, "%", "0.50%"}, {0, "ms", "0"}, {math.Inf(1), "ms", "∞"},
	} {
		if got := verdictValue(c.x, c.unit); got != c.want {
			t.Errorf("verdictValue(%v, %q) = %q, want %q", c.x, c.unit, got, c.want)
		}
	}
	for _, c := range []struct {
		s    compare.Summary
		unit string
		want string
	}{
		{verdictSide(41.2, 40.1, 42.5), "ms", "41.2 ± 3%"},
		// Too few repetitions: the median alone (the table's note says why).
		{verdictSide(41.2, math.Inf(-1), math.Inf(1)), "ms", "41.2"},
		{verdictSide(43.8, math.Inf(-1), 50), "ms", "43.8"},
		// A share's interval in points, never relative to its median.
		{verdictSide(0, 0, 0), "%", "0.00% ± 0.00 pts"},
		{verdictSide(0.02, 0.01, 0.04), "%", "2.00% ± 2.00 pts"},
		{verdictSide(0.01, 0, 0.02), "%", "1.00% ± 1.00 pts"},
		// An interval that reaches 0 or crosses it: a percent of the median
		// means nothing, so the ± is in the metric's unit, never "?".
		{verdictSide(1, -1, 2), "ms", "1.00 ± 2.00"},
		{verdictSide(2, 0, 3), "count", "2 ± 2"},
		{verdictSide(math.NaN(), math.NaN(), math.NaN()), "ms", "—"},
	} {
		if got := verdictSummary(c.s, c.unit); got != c.want {
			t.Errorf("summaryString(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
	g := compare.Gate{Unit: "ms", Change: compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN},
		Shift: compare.Interval{Estimate: 3.1, Lo: -1, Hi: verdictInf}}
	if got, want := changeText(g).raw(), "+3.10 ms"; got != want {
		t.Errorf("changeText without a relative change, unbounded = %q, want %q", got, want)
	}
	g.Shift.Hi = 7.2
	if got, want := changeText(g).raw(), "+3.10 [-1.00, +7.20] ms"; got != want {
		t.Errorf("changeText without a relative change = %q, want %q", got, want)
	}
	g = compare.Gate{Unit: "%", Change: compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN},
		Shift: compare.Interval{Estimate: 0.005, Lo: 0, Hi: 0.012}}
	if got, want := changeText(g).raw(), "+0.50 [+0.00, +1.20] pts"; got != want {
		t.Errorf("changeText of a fraction = %q, want %q", got, want)
	}
	if got, want := changeEstimate(g).raw(), "+0.50 pts"; got != want {
		t.Errorf("changeEstimate of a fraction = %q, want %q", got, want)
	}
	// 2.00% → 4.00%: +2 points, not +100%, whether the verdict gave its
	// change in points or (from before change_points) relative.
	g = compare.Gate{Unit: "%", Change: compare.Interval{Estimate: 1, Lo: 0.5, Hi: 1.5},
		Shift: compare.Interval{Estimate: 0.02, Lo: 0.01, Hi: 0.03}}
	if got, want := changeText(g).raw(), "+2.00 [+1.00, +3.00] pts"; got != want {
		t.Errorf("changeText of a share from 2%% to 4%% = %q, want %q", got, want)
	}
	g.Change = compare.Interval{Estimate: verdictNaN, Lo: verdictNaN, Hi: verdictNaN}
	g.ChangePoints = &compare.Interval{Estimate: 2, Lo: 1, Hi: 3}
	if got, want := changeEstimate(g).raw(), "+2.00 pts"; got != want {
		t.Errorf("changeEstimate of a share from 2%% to 4%% = %q, want %q", got, want)
	}
}

type verdictFailingWriter struct{}

func (verdictFailingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestVerdictWriteErrors(t *testing.T) {
	for name, write := range map[string]func(io.Writer, *compare.Verdict) error{
		"text": emitVerdictText, "markdown": emitVerdictMarkdown, "json": emitVerdictJSON,
	} {
		if err := write(verdictFailingWriter{}, regressionVerdict()); err == nil {
			t.Errorf("%s: a failed write returned no error", name)
		}
	}
}
