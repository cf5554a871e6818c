package compare

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// TailSuffix ends a tail gate's metric name: "ttft.p99.tail" is the tail
// test beside the ttft.p99 gate. No catalogue metric ends so.
const TailSuffix = ".tail"

// Tail is a tail gate's evidence (Gate.Tail): the request-level test of a
// latency percentile beside its per-repetition gate (stat.DecideWithTails).
// The gate's Baseline and Candidate summarise each repetition's share of
// requests beyond the baseline's pooled percentile (Threshold), a fraction;
// the candidate's as measured, before the tolerance.
type Tail struct {
	// Percentile is the quantile tested (0.99 for a p99 gate).
	Percentile Num `json:"percentile"`
	// Threshold is the baseline's pooled percentile over all its requests,
	// in milliseconds.
	Threshold Num `json:"threshold"`
	// Expected is 1 − Percentile: the share beyond it of like requests.
	Expected Num `json:"expected"`
	// Share is the candidate's share of all its requests beyond Threshold,
	// as measured; AdjustedShare after the tolerance (its values divided
	// by 1+tolerance, or less the tolerance): the statistic tested.
	Share         Num `json:"share"`
	AdjustedShare Num `json:"adjusted_share"`
	// PLower is the mirror test's p-value (fewer requests beyond than
	// expected), the evidence for a pass; the gate's P is the regression
	// test's.
	PLower Num `json:"p_lower"`
	// Splits is how many splits of the repetitions the p-values count
	// over; Exact is false when they were drawn at random.
	Splits int  `json:"splits"`
	Exact  bool `json:"exact"`
}

// tailHistograms maps a latency metric's family to its histogram's key in
// Repetition.Histograms.
var tailHistograms = map[string]string{"ttft": result.HistTTFT, "tpot": result.HistTPOT, "itl": result.HistITL, "e2e": result.HistE2E}

// tailQuantile is the quantile a tail gate beside m tests, and whether m
// gets one at all: a latency percentile of a family with request
// histograms, at or above the lowest percentile tested (from compare.tail,
// 0 for off).
func tailQuantile(m metric.Info, lowest float64) (float64, bool) {
	family, st, ok := strings.Cut(m.Name, ".")
	if !ok || lowest <= 0 || m.Subset != "" || tailHistograms[family] == "" || !strings.HasPrefix(st, "p") {
		return 0, false
	}
	q, err := config.ParseTail(st)
	if err != nil || q < lowest-1e-12 {
		return 0, false
	}
	return q, true
}

// tailSetting is the lowest percentile with a tail test: the option's,
// else the candidate's recorded compare.tail, else the default; 0 for off.
func (o Options) tailSetting(candidate *result.Result) (float64, error) {
	s := o.Tail
	if s == "" && candidate.Compare != nil {
		s = candidate.Compare.Tail
	}
	q, err := config.ParseTail(s)
	if err != nil {
		return 0, fmt.Errorf("compare.tail: %w", err)
	}
	return q, nil
}

// tailDistributions decodes each repetition's histogram of one metric
// family into bars in milliseconds, or says why it cannot: a reason for the
// not-gated list ("" when every repetition has one).
func tailDistributions(s *result.ScenarioResult, hist, side string) ([][]stat.Bar, string) {
	if len(s.Repetitions) == 0 {
		return nil, "the " + side + " has no repetitions"
	}
	out := make([][]stat.Bar, 0, len(s.Repetitions))
	for _, r := range s.Repetitions {
		enc := r.Histograms[hist]
		if len(enc) > 0 {
			continue
		}
		if len(out) == 0 && !slices.ContainsFunc(s.Repetitions, func(r result.Repetition) bool { return len(r.Histograms[hist]) > 0 }) {
			return nil, fmt.Sprintf("the %s kept no %s histograms (a result from before them): the tail test needs every request's value", side, hist)
		}
		return nil, fmt.Sprintf("the %s's repetition %d kept no %s histogram (no request measured): the tail test needs every request's value",
			side, r.Index, hist)
	}
	for _, r := range s.Repetitions {
		enc := r.Histograms[hist]
		bars, err := decodeBars(enc)
		if err != nil {
			return nil, fmt.Sprintf("the %s's repetition %d: %s histogram: %v", side, r.Index, hist, err)
		}
		out = append(out, bars)
	}
	return out, ""
}

// decodeBars decodes a V2-compressed HDR histogram of microseconds into its
// non-empty buckets in milliseconds, each at its highest equivalent value
// (the value the histogram's own percentiles report). A malformed encoding,
// or one of another geometry than perfgate writes, is an error
// (result.DecodeHistogram), never a panic.
func decodeBars(enc []byte) ([]stat.Bar, error) {
	h, err := result.DecodeHistogram(enc)
	if err != nil {
		return nil, err
	}
	var bars []stat.Bar
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			bars = append(bars, stat.Bar{Value: float64(b.To) / 1e3, Count: b.Count})
		}
	}
	return bars, nil
}

// tailTooFew says why a tail gate is left out when the baseline has too
// few requests beyond its quantile for the test to see anything (fewer
// than stat.TailMinBeyond), "" when it has enough. Such a gate is not
// gated rather than inconclusive: a run of short repetitions keeps the
// verdict its per-repetition gates give.
func tailTooFew(base [][]stat.Bar, q float64) string {
	var n int64
	for _, r := range base {
		for _, b := range r {
			n += max(0, b.Count)
		}
	}
	if beyond := float64(n) * (1 - q); beyond < stat.TailMinBeyond {
		return fmt.Sprintf("the baseline has %d requests, about %.3g beyond its p%s, and the tail test needs >= %d: longer repetitions, or a lower compare.tail, give it enough; shown, not gated",
			n, beyond, strings.TrimPrefix(strings.TrimSuffix(fmt.Sprintf("%.6g", 100*q), ".0"), ""), stat.TailMinBeyond)
	}
	return ""
}

// tailSeed is a tail gate's Monte Carlo seed: fixed by the scenario and
// metric, so a verdict is reproducible.
func tailSeed(scenario, metric string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(scenario + "\x00" + metric))
	return h.Sum64()
}

// fillTail copies a tail decision into its gate.
func fillTail(g *Gate, d stat.TailDecision, q float64) {
	g.Baseline = summarise(d.BaselineShares)
	g.Candidate = summarise(d.CandidateShares)
	nan := Num(math.NaN())
	g.Shift = Interval{nan, nan, nan}
	g.Change = Interval{nan, nan, nan}
	g.Confidence = nan
	g.P, g.PAdjusted, g.Level = Num(d.P), Num(d.PAdjusted), Num(d.Level)
	g.Outcome, g.Reason = d.Outcome, d.Reason
	if d.Outcome == stat.Inconclusive {
		g.Reason += "; an undecided tail gate leaves the verdict to the " + strings.TrimSuffix(g.Metric, TailSuffix) + " gate"
	}
	g.Warnings = append(g.Warnings, d.Warnings...)
	g.Tail = &Tail{Percentile: Num(q), Threshold: Num(d.Threshold), Expected: Num(d.Expected), Share: Num(d.Share),
		AdjustedShare: Num(d.AdjustedShare), PLower: Num(d.PLower), Splits: d.Splits, Exact: d.Exact}
}
