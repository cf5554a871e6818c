package compare

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// MaxExamples is how many changed items a suite's comparison keeps for the
// report.
const MaxExamples = 5

// MaxDroppedShare is the largest share of a suite's compared items that may
// have failed (on one side or both) for its answers to speak for the suite:
// past it, the accuracy, score and identical gates are not passed on the
// items that happened to be answered (a pass is made inconclusive, with the
// reason), while the error-rate gate judges the failures themselves.
const MaxDroppedShare = 0.2

// Suite is one eval suite's comparison: accuracy on both sides, output drift,
// and the quality gates, decided in the same Holm family as the scenario's
// latency gates.
type Suite struct {
	Name string `json:"name"`
	// N is the number of items compared (answered on both sides with the
	// same content).
	N int `json:"n"`
	// Dropped counts the items on both sides with the same content left
	// out of N because their request failed on one side or both: a failed
	// request is no answer, so it is neither right nor wrong. The
	// error-rate gate compares the failures over N + Dropped items.
	Dropped int `json:"dropped,omitempty"`
	// OnlyBaseline, OnlyCandidate and Changed count items left out of the
	// comparison (see quality.Paired).
	OnlyBaseline  int `json:"only_baseline,omitempty"`
	OnlyCandidate int `json:"only_candidate,omitempty"`
	Changed       int `json:"changed,omitempty"`
	// Baseline and Candidate are each side's accuracy over the compared
	// items, with its 95% Wilson interval.
	Baseline  Accuracy `json:"baseline"`
	Candidate Accuracy `json:"candidate"`
	// Drift is the share of outputs identical to the baseline's, and where
	// the others first differ.
	Drift Drift `json:"drift"`
	// Gates are the suite's quality gates, regressions first.
	Gates []QualityGate `json:"gates"`
	// Examples are items whose output changed (pass→fail first, then
	// items whose request failed in the candidate only, with the error),
	// outputs as received: renderers escape and truncate them.
	Examples []quality.Example `json:"examples,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

// Accuracy is one side's pass count and rate over the compared items, and
// its failed requests.
type Accuracy struct {
	Pass int `json:"pass"`
	N    int `json:"n"`
	// Rate is Pass/N with its 95% Wilson interval.
	Rate Interval `json:"rate"`
	// Failed counts the items whose request failed on this side, of the
	// N + Dropped items on both sides: they are not in N.
	Failed int `json:"failed,omitempty"`
	// FailedKinds counts them by error kind (http, stream, timeout,
	// unanswered, ...; "error" where an older result recorded none).
	FailedKinds map[string]int `json:"failed_kinds,omitempty"`
	// ErrorRate is Failed/(N + Dropped) with its 95% Wilson interval.
	ErrorRate Interval `json:"error_rate"`
}

// Drift is output drift against the baseline.
type Drift struct {
	Identical int `json:"identical"`
	Differ    int `json:"differ"`
	// Share is Identical/N with its 95% Wilson interval.
	Share Interval `json:"share"`
	// FirstDiffChar and FirstDiffWord are the median positions of the first
	// difference among the outputs that differ.
	FirstDiffChar int `json:"first_diff_char"`
	FirstDiffWord int `json:"first_diff_word"`
}

// QualityGate is one quality gate's evidence and outcome. Rates and changes
// are fractions (0.02 is 2 points).
type QualityGate struct {
	Metric    string `json:"metric"`
	Title     string `json:"title"`
	Tolerance string `json:"tolerance"`
	// Test names the paired test: mcnemar (accuracy, eval_error_rate),
	// wilcoxon (score) or binomial (identical).
	Test string `json:"test"`
	N    int    `json:"n"`
	// Baseline and Candidate are the sides' means with 95% intervals.
	Baseline  Interval `json:"baseline"`
	Candidate Interval `json:"candidate"`
	// Change is candidate − baseline at Confidence (each bound a one-sided
	// bound at (1+Confidence)/2).
	Change     Interval `json:"change"`
	Confidence Num      `json:"confidence"`
	// Losses and Gains count the items that got worse and better.
	Losses int `json:"losses"`
	Gains  int `json:"gains"`
	// NeedItems, when set, is about how many items would detect the
	// tolerance (80% power): the suite is smaller.
	NeedItems int `json:"need_items,omitempty"`

	P         Num          `json:"p"`
	PAdjusted Num          `json:"p_adjusted"`
	Level     Num          `json:"level"`
	Outcome   stat.Outcome `json:"outcome"`
	Reason    string       `json:"reason"`
	Warnings  []string     `json:"warnings,omitempty"`

	// unjudged, when set, is why the suite's answers cannot speak for it
	// (too many items failed): the decision, once filled, cannot pass.
	unjudged string
}

// suiteInput is a suite's comparison before its gates are decided.
type suiteInput struct {
	suite Suite
	gates []stat.PairedGate
}

// compareSuites pairs the candidate scenario's suites with the baseline's and
// returns their comparisons with the paired gates to decide; gates gives each
// suite's gates (nil: those the candidate recorded, else the defaults).
func compareSuites(base, cand *result.ScenarioResult, gates []config.Gate) ([]suiteInput, []string) {
	var out []suiteInput
	var warnings []string
	for i := range cand.Quality {
		c := &cand.Quality[i]
		b := findSuite(base, c.Name)
		if b == nil {
			warnings = append(warnings, fmt.Sprintf("eval suite %s has no baseline answers: not compared", c.Name))
			continue
		}
		p := quality.Pair(b, c)
		in := suiteInput{suite: Suite{Name: c.Name, N: len(p.Items), Dropped: p.Dropped, OnlyBaseline: p.OnlyBaseline,
			OnlyCandidate: p.OnlyCandidate, Changed: p.Changed}}
		s := &in.suite
		s.Baseline = accuracy(p.BaselinePass, p.BaselineFailed, kinds(b, p.Common))
		s.Candidate = accuracy(p.CandidatePass, p.CandidateFailed, kinds(c, p.Common))
		s.Drift = Drift{Identical: p.Drift.Identical, Differ: p.Drift.Differ,
			FirstDiffChar: p.Drift.FirstDiffChar, FirstDiffWord: p.Drift.FirstDiffWord}
		lo, hi := stat.Wilson(p.Drift.Identical, s.N, MedianConfidence)
		s.Drift.Share = Interval{Num(ratio(p.Drift.Identical, s.N)), Num(lo), Num(hi)}
		s.Examples = p.Examples[:min(len(p.Examples), MaxExamples)]
		if n := p.OnlyBaseline + p.OnlyCandidate + p.Changed; n > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf(
				"the suite differs between the sides: %d items only in the baseline, %d only in the candidate, %d changed; %d compared",
				p.OnlyBaseline, p.OnlyCandidate, p.Changed, s.N))
		}
		unjudged := ""
		if common := len(p.Common); p.Dropped > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf(
				"%d of %d items failed to answer (%d in the baseline, %d in the candidate) and were dropped: accuracy and the paired tests are over the other %d, and the failures are the error rate's",
				p.Dropped, common, s.Baseline.Failed, s.Candidate.Failed, s.N))
			if float64(p.Dropped) > MaxDroppedShare*float64(common) {
				unjudged = fmt.Sprintf("%d of %d items failed to answer (%.0f%%, over %.0f%%): the %d answered cannot speak for the suite",
					p.Dropped, common, 100*float64(p.Dropped)/float64(common), 100*MaxDroppedShare, s.N)
			}
		}
		for _, side := range []struct {
			name string
			r    *result.SuiteResult
		}{{"baseline", b}, {"candidate", c}} {
			if side.r.Mode == config.QualityInterleaved && side.r.Interleaved < len(side.r.Items) {
				s.Warnings = append(s.Warnings, fmt.Sprintf("the %s answered %d of %d items amid the load and the rest alone: raise quality.share to interleave them all",
					side.name, side.r.Interleaved, len(side.r.Items)))
			}
		}
		if b.Mode != c.Mode {
			s.Warnings = append(s.Warnings, fmt.Sprintf("the baseline answered in %s mode and the candidate in %s mode: batching differs", b.Mode, c.Mode))
		}
		suiteGates := gates
		if suiteGates == nil && c.Gates != nil {
			var notGated []string
			suiteGates, notGated = storedGates(c.Gates, true)
			s.Warnings = append(s.Warnings, notGated...)
		}
		if suiteGates == nil {
			suiteGates = (&config.Config{}).QualityGates()
		}
		for _, g := range suiteGates {
			m, err := metric.Lookup(g.Metric)
			if err != nil || !m.Quality {
				continue
			}
			pg := stat.PairedGate{Tolerance: g.Tolerance.Value}
			test, why := "", unjudged
			switch m.Name {
			case "accuracy":
				pg.Kind, pg.Baseline, pg.Candidate, test = stat.PassRate, p.BaselinePass, p.CandidatePass, "mcnemar"
			case "score":
				if !c.Continuous {
					continue // a pass/fail suite's mean score is its accuracy
				}
				pg.Kind, pg.Baseline, pg.Candidate, test = stat.MeanScore, p.BaselineScore, p.CandidateScore, "wilcoxon"
			case "identical":
				pg.Kind, pg.Candidate, test = stat.Agreement, p.Identical, "binomial"
			case "eval_error_rate":
				pg.Kind, pg.Baseline, pg.Candidate, test = stat.FailRate, p.BaselineFailed, p.CandidateFailed, "mcnemar"
				why = "" // it judges the failures themselves
			default:
				continue
			}
			s.Gates = append(s.Gates, QualityGate{Metric: m.Name, Title: m.Title, Tolerance: g.Tolerance.Text, Test: test,
				N: len(pg.Candidate), unjudged: why})
			in.gates = append(in.gates, pg)
		}
		out = append(out, in)
	}
	return out, warnings
}

// fillQuality copies a paired decision into a quality gate.
func fillQuality(g *QualityGate, d stat.PairedDecision) {
	g.Baseline = Interval{Num(d.Baseline.Mean), Num(d.Baseline.Lo), Num(d.Baseline.Hi)}
	g.Candidate = Interval{Num(d.Candidate.Mean), Num(d.Candidate.Lo), Num(d.Candidate.Hi)}
	g.Change = Interval{Num(d.Change.Estimate), Num(d.Change.Lo), Num(d.Change.Hi)}
	g.Confidence = Num(1 - 2*d.Level)
	g.Losses, g.Gains, g.NeedItems = d.Losses, d.Gains, d.NeedItems
	g.P, g.PAdjusted, g.Level = Num(d.P), Num(d.PAdjusted), Num(d.Level)
	g.Outcome, g.Reason, g.Warnings = d.Outcome, d.Reason, d.Warnings
	if g.unjudged == "" {
		return
	}
	// Too many items failed for the answered ones to speak for the suite:
	// what they show is reported, but it cannot pass. A regression stands:
	// the items it lost are real losses.
	switch g.Outcome {
	case stat.Regression:
		g.Warnings = append(g.Warnings, g.unjudged)
	default:
		g.Outcome, g.Reason = stat.Inconclusive, g.unjudged
		if d.Outcome == stat.Pass {
			g.Warnings = append(g.Warnings, "on the answered items alone: "+d.Reason)
		}
	}
}

// accuracy is one side's accuracy over the compared items (pass, 1 for a
// pass), and its failures over the items on both sides (failed, 1 for a
// failed request), counted by kind.
func accuracy(pass, failed []float64, kinds map[string]int) Accuracy {
	k, f := 0, 0
	for _, v := range pass {
		if v == 1 {
			k++
		}
	}
	for _, v := range failed {
		if v == 1 {
			f++
		}
	}
	lo, hi := stat.Wilson(k, len(pass), MedianConfidence)
	flo, fhi := stat.Wilson(f, len(failed), MedianConfidence)
	return Accuracy{Pass: k, N: len(pass), Rate: Interval{Num(ratio(k, len(pass))), Num(lo), Num(hi)},
		Failed: f, FailedKinds: kinds, ErrorRate: Interval{Num(ratio(f, len(failed))), Num(flo), Num(fhi)}}
}

// kinds counts the failed items among ids by error kind; nil when none
// failed.
func kinds(s *result.SuiteResult, ids []string) map[string]int {
	in := make(map[string]bool, len(ids))
	for _, id := range ids {
		in[id] = true
	}
	var out map[string]int
	for i := range s.Items {
		it := &s.Items[i]
		if k := it.FailureKind(); k != "" && in[it.ID] {
			if out == nil {
				out = map[string]int{}
			}
			out[k]++
		}
	}
	return out
}

func ratio(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

func findSuite(s *result.ScenarioResult, name string) *result.SuiteResult {
	for i := range s.Quality {
		if s.Quality[i].Name == name {
			return &s.Quality[i]
		}
	}
	return nil
}
