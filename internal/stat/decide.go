package stat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Outcome is the verdict on one gate. There are three, not two, because
// "no significant regression" is not "no regression": a gate passes only
// when its interval rules a regression beyond the tolerance out, and a run
// too short or too noisy to tell either way is inconclusive.
type Outcome string

// The three outcomes of a gate.
const (
	// Regression: the candidate is significantly worse, and by more than
	// the tolerance.
	Regression Outcome = "regression"
	// Pass: the interval rules out being worse by more than the tolerance.
	Pass Outcome = "pass"
	// Inconclusive: neither, for too few samples, too much noise, or an
	// input that cannot be decided (see the Decision's Reason and Warnings).
	Inconclusive Outcome = "inconclusive"
)

// Gate is one gate's input: the samples of one metric on both sides (one
// value per repetition), the metric's direction, and how much worse the
// candidate may be.
type Gate struct {
	// Baseline and Candidate hold one value per repetition.
	Baseline, Candidate []float64
	// HigherIsBetter is true for throughput-like metrics, false for
	// latency-like ones; it sets which direction is "worse".
	HigherIsBetter bool
	// Relative is true when Tolerance is a fraction of the baseline median.
	Relative bool
	// Tolerance is how much worse the candidate may be: a magnitude >= 0,
	// a fraction (0.1 = 10%) when Relative, else in the metric's unit.
	Tolerance float64
	// Points is set for a share (the error rate) gated absolutely: the
	// reasons write its changes and tolerance in percentage points
	// ("+2.00 points is beyond +1 point"), not as the raw fractions.
	Points bool
	// Paired is set when Baseline[i] and Candidate[i] are a pair, measured
	// under something both shared and the other pairs did not (a capacity
	// gate's repetition i on both sides drew the same seeded arrivals, which
	// no other repetition drew):
	// the gate is tested as DecideRounds tests an A/B's rounds, the
	// signed-rank test on the pairs and the Walsh-average interval, in the
	// same Holm family as the unpaired gates beside it. The difference
	// within a pair cancels what the pair shared, which the U test counts as
	// noise. Its warnings count "pairs", and n pairs can show a regression
	// in a family of m gates only when 2^−n·m < level (RoundsToReach).
	Paired bool
}

// Decision is one gate's outcome and the evidence for it, for the report.
type Decision struct {
	Outcome Outcome
	// Paired is true when the gate was tested as pairs (Gate.Paired, or
	// every gate of DecideRounds): P is the signed-rank test's and Shift
	// the Walsh-average interval's.
	Paired bool
	// P is the raw one-sided p-value of "the candidate is worse": the U
	// test's (Decide, DecideAll), the signed-rank test's on the pairs
	// (DecideRounds, and a gate that is Paired). NaN when the gate could not be tested (an empty side,
	// a NaN value, an invalid level, unpaired rounds).
	P float64
	// PAdjusted is P after Holm's adjustment over the family; it is what is
	// compared with Level. NaN when P is.
	PAdjusted float64
	// Level is the level the family was tested at.
	Level float64
	// BaselineMedian and CandidateMedian are the sample medians (NaN for an
	// empty side).
	BaselineMedian, CandidateMedian float64
	// Shift is the Hodges-Lehmann shift candidate − baseline at confidence
	// 1 − 2·Level, so that each bound alone is a one-sided (1 − Level)
	// bound: the bad-side bound is the one-sided test of "worse by more
	// than the tolerance". Two samples: HodgesLehmann; rounds:
	// SignedRankShift of the paired differences.
	Shift Shift
	// Change is the shift relative to the baseline median: Estimate/median,
	// Lo/median, Hi/median, so that the ratio candidate/baseline is
	// 1+Change. The median's magnitude is used, so a negative median does
	// not turn the direction around. All NaN when the baseline median is 0.
	// DecideRounds with a relative tolerance: exp(·) − 1 of the
	// SignedRankShift of the pairs' log-ratios, a ratio's change directly.
	Change struct{ Estimate, Lo, Hi float64 }
	// Worse is the estimated change in the bad direction in tolerance terms
	// (a fraction when Relative, metric units otherwise): positive is
	// worse. NaN when it cannot be computed.
	Worse float64
	// Reason is one short line saying why this outcome; the p-value it
	// quotes is PAdjusted, the one compared with Level.
	Reason string
	// Warnings are what the user can do about an inconclusive or fragile
	// outcome: too few samples for a regression to be detectable, or for
	// an interval; a relative tolerance against a zero median.
	Warnings []string
	// IntervalNeeds, when Shift has no interval (Shift.OK is false: its
	// bounds are infinite), is the samples a side (or the rounds) an
	// interval at Shift's confidence needs; 0 when it has one.
	IntervalNeeds int
}

// Decide tests one family of gates at level and returns one Decision per
// gate, in order. The family's U-test p-values are adjusted with Holm, so
// the chance that any gate of the family is a false regression is at most
// level; over sequential looks, level is the look's LookLevel. It is
// DecideAll with no quality gates.
//
// The rules:
//   - regression: PAdjusted < level and the Hodges-Lehmann estimate is
//     worse than the tolerance (Worse > Tolerance): a significant change
//     that is also a material one;
//   - pass: the interval exists and its bad-side bound is within the
//     tolerance (for lower-is-better Hi, for higher-is-better −Lo, divided
//     by the baseline median when Relative, <= Tolerance): the data rule a
//     regression beyond the tolerance out, at one-sided confidence
//     1 − level;
//   - inconclusive: neither (too few samples, too much noise, or a relative
//     tolerance with a zero baseline median), and also whenever no
//     regression could have been detected at all (MinP(n1, n2)·m >= level,
//     m the size of the whole family): a pass that could not have been a
//     regression would test nothing, so a tight interval does not pass such
//     a gate.
//
// A gate that is Paired is tested as DecideRounds tests its gates, by the
// same rules with the signed-rank test's smallest p, 2^−n for n pairs, in
// place of MinP.
//
// A gate with an empty side, a NaN or infinite value, or a negative or NaN
// tolerance is inconclusive with a warning, never a pass, and so is every
// gate when level is not in (0, 0.5). Decide never panics.
func Decide(gates []Gate, level float64) []Decision {
	out, _ := DecideAll(gates, nil, level)
	return out
}

// DecideAll decides latency gates and quality gates as one family at level:
// every p-value, the U tests' and the paired tests', goes through one Holm
// adjustment over m = len(gates) + len(paired), so the chance that any gate
// of the family is a false regression is at most level, and m is the
// family size in every gate's "could not detect" rule and warnings. The
// gates are decided by Decide's rules; the quality gates by these, which
// mirror them:
//
//   - PassRate and MeanScore: regression when PAdjusted < level and the
//     estimated change is beyond the tolerance (Change.Estimate <
//     −Tolerance); pass when the one-sided bound rules a drop beyond the
//     tolerance out (Change.Lo >= −Tolerance) and a regression could have
//     been detected at all (the p-value of every item worse, times m, is
//     below level); otherwise inconclusive. NeedItems and a warning say
//     when the suite is too small to detect a drop of the tolerance (at
//     least 1 point) with 80% power.
//   - Agreement: P tests the identical share against the tolerance
//     boundary 1 − Tolerance, not against no change (under a changed engine
//     some drift is expected): P(X <= identical), X ~ Binomial(N,
//     1 − Tolerance). Regression when PAdjusted < level and the share is
//     below 1 − Tolerance (with Tolerance 0, any differing output: P is 0);
//     pass when every output is identical, or when a regression could have
//     been detected and the Wilson lower bound at 1 − 2·level is at least
//     1 − Tolerance; otherwise inconclusive.
//
// A quality gate with no items, mismatched sides, a value that is NaN or
// outside [0, 1] (PassRate and Agreement: not 0 or 1), an unknown kind, or
// a negative, NaN or infinite tolerance is inconclusive with a warning,
// never a pass; it still counts in the family. DecideAll never panics, and
// returns empty, non-nil slices for no gates.
func DecideAll(gates []Gate, paired []PairedGate, level float64) ([]Decision, []PairedDecision) {
	out, pout, _ := decideFamily(gates, paired, nil, level, false)
	return out, pout
}

// decideFamily is DecideAll, DecideWithTails and DecideRounds: each gate's
// samples are two independent samples, or pairs (Gate.Paired: Baseline[i]
// and Candidate[i] a pair), tested in one Holm family with the quality and
// tail gates by the same rules of the outcomes. rounds says that the pairs
// are an A/B's rounds (DecideRounds sets Paired on every gate), which the
// warnings and reasons count as rounds rather than pairs.
func decideFamily(gates []Gate, paired []PairedGate, tails []TailGate, level float64, rounds bool) ([]Decision, []PairedDecision, []TailDecision) {
	m := len(gates) + len(paired) + len(tails)
	out := make([]Decision, len(gates))
	pout := make([]PairedDecision, len(paired))
	tout := make([]TailDecision, len(tails))
	ps := make([]float64, m)
	for i, g := range gates {
		d := &out[i]
		nan := math.NaN()
		d.P, d.PAdjusted, d.Level, d.Worse = nan, nan, level, nan
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = nan, nan, nan
		d.Shift = Shift{Estimate: nan, Lo: math.Inf(-1), Hi: math.Inf(1)}
		bs, cs := sortedCopy(g.Baseline), sortedCopy(g.Candidate)
		d.BaselineMedian, d.CandidateMedian = SortedMedian(bs), SortedMedian(cs)
		d.Paired = g.Paired
		if g.Paired {
			ps[i] = testRounds(d, g, level, rounds)
		} else {
			ps[i] = testSamples(d, g, bs, cs, level)
		}
	}
	psis := make([]float64, len(paired))
	for j, g := range paired {
		ps[len(gates)+j], psis[j] = testPaired(&pout[j], g, level)
	}
	for k, g := range tails {
		ps[len(gates)+len(paired)+k] = testTail(&tout[k], g, level)
	}
	adjusted := Holm(ps)
	conf := ""
	if m > 0 {
		conf = strconv.FormatFloat(100*(1-2*level), 'g', 4, 64) + "%"
	}
	for i, g := range gates {
		if math.IsNaN(out[i].P) {
			continue
		}
		out[i].PAdjusted = adjusted[i]
		sz := samplesSizing(len(g.Baseline), len(g.Candidate))
		switch {
		case g.Paired && rounds:
			sz = roundsSizing(len(g.Baseline))
		case g.Paired:
			sz = pairsSizing(len(g.Baseline))
		}
		classify(&out[i], g, level, m, conf, sz)
	}
	for j, g := range paired {
		if math.IsNaN(pout[j].P) {
			continue
		}
		pout[j].PAdjusted = adjusted[len(gates)+j]
		classifyPaired(&pout[j], g, level, m, conf, psis[j])
	}
	for k, g := range tails {
		if math.IsNaN(tout[k].P) {
			continue
		}
		tout[k].PAdjusted = adjusted[len(gates)+len(paired)+k]
		classifyTail(&tout[k], g, level, m)
	}
	return out, pout, tout
}

// testSamples tests g's two independent samples, bs and cs sorted: it
// fills d's Shift and Change and returns the U test's p-value, NaN when g
// cannot be tested (then d is decided: inconclusive with a warning).
func testSamples(d *Decision, g Gate, bs, cs []float64, level float64) float64 {
	if reason, warning := untestable(g, level); reason != "" {
		d.Outcome, d.Reason, d.Warnings = Inconclusive, reason, []string{warning}
		return math.NaN()
	}
	p, err := uSorted(bs, cs, g.HigherIsBetter)
	if err != nil { // not expected once untestable has passed the gate
		d.Outcome, d.Reason, d.Warnings = Inconclusive, "the U test failed", []string{err.Error()}
		return math.NaN()
	}
	d.P = p
	d.Shift = HodgesLehmann(bs, cs, 1-2*level)
	d.Change.Estimate, d.Change.Lo, d.Change.Hi = relativeTo(d.Shift, d.BaselineMedian)
	return p
}

// relativeTo is a shift relative to the magnitude of the baseline median
// (so that a negative median does not turn the direction around): NaNs
// when the median is 0.
func relativeTo(s Shift, median float64) (est, lo, hi float64) {
	base := math.Abs(median)
	if base == 0 {
		nan := math.NaN()
		return nan, nan, nan
	}
	return s.Estimate / base, s.Lo / base, s.Hi / base
}

// untestable returns why g cannot be tested at level, and a warning saying
// so; "" when it can be.
func untestable(g Gate, level float64) (reason, warning string) {
	switch {
	case !(level > 0 && level < 0.5):
		return "invalid level", fmt.Sprintf("level %g is not in (0, 0.5): no gate can be decided", level)
	case len(g.Baseline) == 0 && len(g.Candidate) == 0:
		return "no samples", "neither side has samples: the gate cannot be decided"
	case len(g.Baseline) == 0:
		return "no baseline samples", "the baseline has no samples: the gate cannot be decided"
	case len(g.Candidate) == 0:
		return "no candidate samples", "the candidate has no samples: the gate cannot be decided"
	case slices.ContainsFunc(g.Baseline, notFinite):
		return "a baseline value is not finite", "the baseline holds a NaN or infinite value: the gate cannot be decided"
	case slices.ContainsFunc(g.Candidate, notFinite):
		return "a candidate value is not finite", "the candidate holds a NaN or infinite value: the gate cannot be decided"
	case !(g.Tolerance >= 0):
		return "invalid tolerance", fmt.Sprintf("tolerance %g is not a magnitude >= 0: the gate cannot be decided", g.Tolerance)
	}
	return "", ""
}

func notFinite(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// sizing is what a gate's sample size allows, for the outcome's rules and
// its warnings: two samples (samplesSizing), an A/B's rounds (roundsSizing)
// or other pairs (pairsSizing).
type sizing struct {
	// minP is the smallest p-value the gate's samples can give: a family
	// of m gates can show a regression only when minP·m < level.
	minP float64
	// toReach is the smallest size whose minP is below a level, and
	// forInterval the smallest with an interval at a confidence.
	toReach, forInterval func(float64) int
	// unit is how a warning counts the size ("samples a side", "rounds"),
	// short how a reason does ("too few samples: need >= %d a side").
	unit, short string
}

// samplesSizing is the sizing of two independent samples of n1 and n2
// values (the U test and the Hodges-Lehmann interval).
func samplesSizing(n1, n2 int) sizing {
	return sizing{minP: MinP(n1, n2), toReach: SamplesToReach, forInterval: IntervalSamples,
		unit: "samples a side", short: "too few samples: need >= %d a side"}
}

// roundsSizing is the sizing of n rounds (the signed-rank test and the
// Walsh-average interval).
func roundsSizing(n int) sizing {
	return sizing{minP: wilcoxonAllWorse(n), toReach: RoundsToReach, forInterval: roundsForInterval,
		unit: "rounds", short: "too few rounds: need >= %d"}
}

// pairsSizing is roundsSizing for pairs that are not an A/B's rounds (a
// capacity gate's repetitions paired by their shared seed).
func pairsSizing(n int) sizing {
	sz := roundsSizing(n)
	sz.unit, sz.short = "pairs", "too few pairs: need >= %d"
	return sz
}

// classify sets d's Worse, Outcome, Reason and Warnings from its P,
// PAdjusted, Shift and Change; m is the family's size, conf the interval's
// confidence as the reasons write it (90%), sz what the gate's sample size
// allows.
func classify(d *Decision, g Gate, level float64, m int, conf string, sz sizing) {
	confidence := 1 - 2*level
	base := math.Abs(d.BaselineMedian)
	// In tolerance terms: the estimate, and the interval's bound on the bad
	// side (Hi when lower is better, Lo when higher is), signed as changes.
	est, lo, hi := d.Shift.Estimate, d.Shift.Lo, d.Shift.Hi
	if g.Relative {
		est, lo, hi = d.Change.Estimate, d.Change.Lo, d.Change.Hi
	}
	badBound, sign := hi, 1.0
	if g.HigherIsBetter {
		badBound, sign = lo, -1
	}
	d.Worse = sign * est
	if d.Worse == 0 {
		d.Worse = 0 // not -0 for a higher-is-better metric
	}
	tol := sign * g.Tolerance // the tolerance as a signed change
	// show and showTol write a change and the tolerance for the reasons:
	// +31.2% and +10% when Relative, +2.00 points and +1 point for a share,
	// +20 and +5 in the metric's unit.
	points := g.Points && !g.Relative
	show := func(v float64) string {
		switch {
		case g.Relative:
			return signed(100*v, 'f', 1) + "%"
		case points:
			return signed(100*v, 'f', 2) + " points"
		}
		return signed(v, 'g', 4)
	}
	showTol := func() string {
		switch {
		case g.Relative:
			return signed(100*tol, 'g', 4) + "%"
		case points:
			if t := signed(100*tol, 'g', 4); t != "+1" && t != "-1" {
				return t + " points"
			}
			return signed(100*tol, 'g', 4) + " point"
		}
		return signed(tol, 'g', 4)
	}

	needDetect := 0
	if sz.minP*float64(m) >= level {
		needDetect = sz.toReach(level / float64(m))
		over := ""
		if m > 1 {
			over = fmt.Sprintf(" (alpha %.3g over %d gates)", level, m)
		}
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"need >= %d %s to detect a regression at level %.3g%s",
			needDetect, sz.unit, level/float64(m), over))
	}
	if !d.Shift.OK {
		d.IntervalNeeds = sz.forInterval(confidence)
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"need >= %d %s for a %s interval", sz.forInterval(confidence), sz.unit, conf))
	}
	zeroBase := g.Relative && base == 0
	if zeroBase {
		d.Warnings = append(d.Warnings,
			"baseline median is 0: a relative tolerance cannot be applied; use an absolute one")
	}

	significant := d.PAdjusted < level
	switch {
	case zeroBase:
		d.Outcome = Inconclusive
		d.Reason = "baseline median is 0: a relative tolerance cannot be applied"
	case significant && d.Worse > g.Tolerance:
		d.Outcome = Regression
		d.Reason = "significant (p=" + pval(d.PAdjusted) + ") and " + show(est) + " is beyond " + showTol()
	case needDetect > 0:
		// A family that could not show a regression however large cannot
		// show a pass either: the config is too small to test anything.
		d.Outcome = Inconclusive
		d.Reason = fmt.Sprintf(sz.short, max(sz.forInterval(confidence), needDetect))
	case d.Shift.OK && sign*badBound <= g.Tolerance:
		d.Outcome = Pass
		if g.Tolerance == 0 {
			d.Reason = "the " + conf + " interval rules out any worsening"
		} else {
			d.Reason = "the " + conf + " interval rules out worse than " + showTol()
		}
	case !d.Shift.OK:
		d.Outcome = Inconclusive
		d.Reason = fmt.Sprintf(sz.short, max(sz.forInterval(confidence), needDetect))
	case significant:
		d.Outcome = Inconclusive
		d.Reason = "significant (p=" + pval(d.PAdjusted) + ") but " + show(est) + " is within " + showTol() +
			", and the " + conf + " interval reaches " + show(badBound)
	case d.Worse > g.Tolerance:
		d.Outcome = Inconclusive
		d.Reason = show(est) + " is beyond " + showTol() + " but not significant (p=" + pval(d.PAdjusted) +
			"), and the " + conf + " interval reaches " + show(badBound)
	default:
		d.Outcome = Inconclusive
		d.Reason = "the " + conf + " interval reaches " + show(badBound) + ", beyond " + showTol()
	}
}

// signed formats v as strconv does with format and prec, with a sign
// always (+10, -3.5): the reasons say changes. It is fmt's %+.{prec}{format}
// without fmt's cost, which counts when a sequential run decides thousands
// of gates.
func signed(v float64, format byte, prec int) string {
	s := strconv.FormatFloat(v, format, prec, 64)
	if s[0] == '-' || s[0] == '+' || math.IsNaN(v) {
		return s
	}
	return "+" + s
}

// pval formats a p-value for a reason, as %.2g does.
func pval(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) }

// Median is the median of xs, which it leaves as they are; NaN when there
// are none (a caller that wants another figure for none says so). It is
// perfgate's one median.
func Median(xs []float64) float64 {
	return SortedMedian(slices.Sorted(slices.Values(xs)))
}

// FiniteMedian is the median of the finite values of xs (NaN and the
// infinities left out), NaN when there are none: the median of figures a
// file may have left unmeasured.
func FiniteMedian(xs []float64) float64 {
	s := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !notFinite(x) {
			s = append(s, x)
		}
	}
	return Median(s)
}

// SortedMedian returns the median of sorted values, NaN when there are none.
func SortedMedian(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
