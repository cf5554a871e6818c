package stat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// PairedKind is what a quality gate compares.
type PairedKind int

// The kinds of quality gate.
const (
	// PassRate: Baseline and Candidate are 0/1 per item (the item passed):
	// McNemar's exact test, the Agresti–Min interval of the difference.
	PassRate PairedKind = iota
	// MeanScore: Baseline and Candidate are scores in [0, 1] per item: the
	// Wilcoxon signed-rank test, the paired mean difference with a t
	// interval.
	MeanScore
	// Agreement: Candidate is 1 where the item's output is identical to the
	// baseline's, 0 where it differs (Baseline is unused): the exact
	// binomial test of the identical share against 1 − Tolerance, the
	// Wilson interval.
	Agreement
	// FailRate: Baseline and Candidate are 1 per item whose request failed,
	// 0 per item answered; lower is better. McNemar's exact test on the
	// items that failed on one side only, the Agresti–Min interval of the
	// difference of the error rates; Tolerance is how many points the
	// candidate's error rate may rise above the baseline's.
	FailRate
)

// String returns the kind as reports write it.
func (k PairedKind) String() string {
	switch k {
	case PassRate:
		return "pass rate"
	case MeanScore:
		return "mean score"
	case Agreement:
		return "agreement"
	case FailRate:
		return "error rate"
	}
	return "PairedKind(" + strconv.Itoa(int(k)) + ")"
}

// PairedGate is one quality gate's input, items aligned by index: item i of
// Baseline and item i of Candidate are the two sides' results on the same
// eval item.
type PairedGate struct {
	Kind                PairedKind
	Baseline, Candidate []float64
	// Tolerance is how many points, as a fraction (0.02 = 2 points), the
	// candidate's mean may fall below the baseline's (Agreement: the
	// identical share below 1; FailRate: rise above the baseline's). >= 0.
	Tolerance float64
}

// Proportion is a mean of per-item values with its interval.
type Proportion struct{ Mean, Lo, Hi float64 }

// PairedDecision is one quality gate's outcome and evidence, for the
// report.
type PairedDecision struct {
	Outcome Outcome
	// P is the raw one-sided p-value (McNemar, Wilcoxon signed-rank, or
	// Agreement's binomial test against the tolerance); NaN when the gate
	// could not be tested.
	P float64
	// PAdjusted is P after Holm's adjustment over the whole family, latency
	// and quality gates together; it is what is compared with Level. NaN
	// when P is.
	PAdjusted float64
	// Level is the level the family was tested at.
	Level float64
	// N is the number of items.
	N int
	// Baseline and Candidate are the two sides' means with 95% intervals:
	// Wilson for PassRate and Agreement, t (clipped to [0, 1]) for
	// MeanScore. Agreement's Baseline is {1, 1, 1}: the baseline agrees
	// with itself. NaN when the gate could not be tested.
	Baseline, Candidate Proportion
	// Change is candidate − baseline (Agreement: the identical share − 1;
	// FailRate: a rise is a loss)
	// as a fraction (0.01 is a point), with its interval at confidence
	// 1 − 2·Level, so that each bound alone is a one-sided (1 − Level)
	// bound, as Decision.Shift's. NaN when the gate could not be tested.
	Change struct{ Estimate, Lo, Hi float64 }
	// Losses and Gains count the items that got worse and better: PassRate
	// the pass→fail and fail→pass items, MeanScore the items whose score
	// fell and rose, FailRate the items that failed only in the candidate
	// and only in the baseline; Agreement's Losses are the items that
	// differ.
	Losses, Gains int
	// NeedItems is > 0 when the suite is too small to detect a drop of the
	// tolerance (at least 1 point) with 80% power at the family's per-gate
	// level (level/m): the number of items it would need, ItemsToDetect
	// with the observed mean square of the per-item differences as ψ (for
	// PassRate and FailRate the discordant share; for MeanScore the same
	// generalised to scores, since a share of items whose score moved by a
	// little would overstate the noise). Not for Agreement; it is set
	// whatever the outcome, and warned of unless the gate regressed (then
	// the suite was big enough for this drop).
	NeedItems int
	// Reason is one short line saying why this outcome; changes are written
	// in points, and the p-value it quotes is PAdjusted.
	Reason string
	// Warnings are what the user can do about an inconclusive or fragile
	// outcome: a suite too small, an input that cannot be decided.
	Warnings []string
}

// scoreRound is the grid paired score differences are rounded to, so that
// the rounding of the subtraction does not break ties between equal
// differences (0.7 − 0.6 and 0.8 − 0.7) or hide a zero.
const scoreRound = 1e12

// testPaired validates g, fills d's evidence (N, proportions, Change,
// counts) and returns its raw p-value, NaN when g cannot be tested (then d
// is decided: inconclusive with a warning), and psi, the mean square of
// the per-item differences: the discordant share for PassRate, the ψ of
// ItemsToDetect.
func testPaired(d *PairedDecision, g PairedGate, level float64) (p, psi float64) {
	nan := math.NaN()
	d.P, d.PAdjusted, d.Level = nan, nan, level
	d.Baseline = Proportion{nan, nan, nan}
	d.Candidate = d.Baseline
	d.Change.Estimate, d.Change.Lo, d.Change.Hi = nan, nan, nan
	if g.Kind == Agreement {
		d.Baseline = Proportion{1, 1, 1}
	}
	d.N = len(g.Candidate)
	if reason, warning := untestablePaired(g, level); reason != "" {
		d.Outcome, d.Reason, d.Warnings = Inconclusive, reason, []string{warning}
		return nan, nan
	}
	n := len(g.Candidate)
	confidence := 1 - 2*level
	switch g.Kind {
	case PassRate, FailRate:
		kb, kc := 0, 0
		for i, b := range g.Baseline {
			c := g.Candidate[i]
			kb += int(b)
			kc += int(c)
			worse, better := b > c, b < c
			if g.Kind == FailRate {
				worse, better = better, worse
			}
			switch {
			case worse:
				d.Losses++
			case better:
				d.Gains++
			}
		}
		d.Baseline = wilsonProportion(kb, n)
		d.Candidate = wilsonProportion(kc, n)
		// The difference of the pass rates, (gains − losses)/n: for
		// FailRate that is minus the rise of the error rate.
		est, lo, hi := PairedDifference(n, d.Losses, d.Gains, confidence)
		if g.Kind == FailRate {
			est, lo, hi = -est, -hi, -lo
		}
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = est, lo, hi
		d.P = McNemar(d.Losses, d.Gains)
		psi = float64(d.Losses+d.Gains) / float64(n)
	case MeanScore:
		diffs := make([]float64, n)
		for i, b := range g.Baseline {
			diff := math.Round((g.Candidate[i]-b)*scoreRound) / scoreRound
			diffs[i] = diff
			psi += diff * diff / float64(n)
			switch {
			case diff < 0:
				d.Losses++
			case diff > 0:
				d.Gains++
			}
		}
		d.Baseline = meanProportion(g.Baseline)
		d.Candidate = meanProportion(g.Candidate)
		est, lo, hi := MeanDifference(diffs, confidence)
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = est, max(-1, lo), min(1, hi)
		d.P = WilcoxonSignedRank(diffs)
	case Agreement:
		same := 0
		for _, c := range g.Candidate {
			same += int(c)
		}
		d.Losses = n - same
		d.Candidate = wilsonProportion(same, n)
		lo, hi := Wilson(same, n, confidence)
		d.Change.Estimate, d.Change.Lo, d.Change.Hi = float64(-d.Losses)/float64(n), lo-1, hi-1
		d.P = BinomialAtMost(same, n, max(0, 1-g.Tolerance))
		psi = float64(d.Losses) / float64(n)
	}
	return d.P, psi
}

func wilsonProportion(k, n int) Proportion {
	lo, hi := Wilson(k, n, 0.95)
	return Proportion{float64(k) / float64(n), lo, hi}
}

// meanProportion is the mean of scores in [0, 1] with its 95% t interval,
// clipped to [0, 1] (so a single item's interval is [0, 1]).
func meanProportion(xs []float64) Proportion {
	mean, lo, hi := MeanDifference(xs, 0.95)
	return Proportion{mean, max(0, lo), min(1, hi)}
}

// untestablePaired returns why g cannot be tested at level, and a warning
// saying so; "" when it can be.
func untestablePaired(g PairedGate, level float64) (reason, warning string) {
	const cannot = ": the gate cannot be decided"
	binary := func(v float64) bool { return v != 0 && v != 1 }
	score := func(v float64) bool { return !(v >= 0 && v <= 1) }
	switch {
	case !(level > 0 && level < 0.5):
		return "invalid level", fmt.Sprintf("level %g is not in (0, 0.5): no gate can be decided", level)
	case g.Kind != PassRate && g.Kind != MeanScore && g.Kind != Agreement && g.Kind != FailRate:
		return "unknown kind", fmt.Sprintf("%v is not a kind of quality gate%s", g.Kind, cannot)
	case len(g.Candidate) == 0:
		return "no items", "the candidate has no items" + cannot
	case g.Kind != Agreement && len(g.Baseline) != len(g.Candidate):
		return "mismatched items", fmt.Sprintf("the baseline has %d items and the candidate %d: items must be paired%s",
			len(g.Baseline), len(g.Candidate), cannot)
	case g.Kind == PassRate && slices.ContainsFunc(g.Baseline, binary):
		return "a baseline value is not 0 or 1", "a baseline pass is not 0 or 1" + cannot
	case g.Kind == PassRate && slices.ContainsFunc(g.Candidate, binary):
		return "a candidate value is not 0 or 1", "a candidate pass is not 0 or 1" + cannot
	case g.Kind == FailRate && slices.ContainsFunc(g.Baseline, binary):
		return "a baseline value is not 0 or 1", "a baseline failure is not 0 or 1" + cannot
	case g.Kind == FailRate && slices.ContainsFunc(g.Candidate, binary):
		return "a candidate value is not 0 or 1", "a candidate failure is not 0 or 1" + cannot
	case g.Kind == Agreement && slices.ContainsFunc(g.Candidate, binary):
		return "a candidate value is not 0 or 1", "an agreement value (1: identical output) is not 0 or 1" + cannot
	case g.Kind == MeanScore && slices.ContainsFunc(g.Baseline, score):
		return "a baseline score is not in [0, 1]", "a baseline score is NaN or outside [0, 1]" + cannot
	case g.Kind == MeanScore && slices.ContainsFunc(g.Candidate, score):
		return "a candidate score is not in [0, 1]", "a candidate score is NaN or outside [0, 1]" + cannot
	case !(g.Tolerance >= 0) || math.IsInf(g.Tolerance, 1):
		return "invalid tolerance", fmt.Sprintf("tolerance %g is not a number of points >= 0%s", g.Tolerance, cannot)
	}
	return "", ""
}

// itemsToReach returns the smallest n whose most extreme outcome, pAll(n)
// (every item worse), is below target: the "need >= N items" of a suite
// that could not show a regression however large. searchCap when none up
// to it is.
func itemsToReach(pAll func(n int) float64, target float64) int {
	for n := 1; n < searchCap; n++ {
		if pAll(n) < target {
			return n
		}
	}
	return searchCap
}

// classifyPaired sets d's Outcome, Reason, Warnings and NeedItems from its
// evidence and PAdjusted; m is the family's size, latency and quality gates
// together, conf the interval's confidence as the reasons write it (90%),
// psi testPaired's mean square difference.
func classifyPaired(d *PairedDecision, g PairedGate, level float64, m int, conf string, psi float64) {
	perGate := level / float64(m)
	over := ""
	if m > 1 {
		over = fmt.Sprintf(" (alpha %.3g over %d gates)", level, m)
	}
	// pAll is the p-value of n items all worse: the most the suite can show.
	var pAll func(n int) float64
	switch g.Kind {
	case PassRate, FailRate:
		pAll = func(n int) float64 { return McNemar(n, 0) }
	case MeanScore:
		pAll = wilcoxonAllWorse
	case Agreement:
		q := max(0, 1-g.Tolerance)
		pAll = func(n int) float64 { return BinomialAtMost(0, n, q) }
	}
	needDetect := 0
	// An Agreement tolerance of 100 points or more accepts any output: there
	// is no regression to detect.
	if pAll(d.N)*float64(m) >= level && !(g.Kind == Agreement && g.Tolerance >= 1) {
		needDetect = itemsToReach(pAll, perGate)
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"need >= %d items to detect a regression at level %.3g%s", needDetect, perGate, over))
	}
	sizeWarning := ""
	if g.Kind != Agreement {
		drop := min(1, max(g.Tolerance, 0.01))
		if need := ItemsToDetect(drop, psi, perGate, 0.8); need > d.N {
			d.NeedItems = need
			what := "drop"
			if g.Kind == FailRate {
				what = "rise"
			}
			sizeWarning = fmt.Sprintf(
				"the suite's %d items cannot reliably detect a %s of %s: about %d items would (80%% power at level %.3g%s)",
				d.N, what, points(strconv.FormatFloat(100*drop, 'g', 4, 64)), need, perGate, over)
		}
	}
	defer func() {
		// A regression was detected: the suite was big enough for this one.
		if sizeWarning != "" && d.Outcome != Regression {
			d.Warnings = append(d.Warnings, sizeWarning)
		}
	}()

	// est, lo and hi are the change in the direction where higher is
	// better, and show writes such a value as the report does: FailRate's
	// change is the rise of the error rate, so its bounds swap and its
	// signs flip, and its interval's near end is where it starts, not
	// where it ends.
	est, lo, hi := d.Change.Estimate, d.Change.Lo, d.Change.Hi
	show := func(v float64) string { return points(signed(100*v, 'f', 1)) }
	showTol := "0 points"
	if g.Tolerance != 0 {
		showTol = points(signed(-100*g.Tolerance, 'g', 4))
	}
	upTo := "up to "
	if g.Kind == FailRate {
		est, lo, hi = -est, -d.Change.Hi, -d.Change.Lo
		show = func(v float64) string { return points(signed(-100*v, 'f', 1)) }
		if g.Tolerance != 0 {
			showTol = points(signed(100*g.Tolerance, 'g', 4))
		}
		upTo = "from "
	}
	p := "(p=" + pval(d.PAdjusted) + ")"
	significant := d.PAdjusted < level
	// A pass/fail or score gate regresses only when the whole one-sided
	// interval lies beyond the tolerance, not merely the estimate: item
	// sampling noise is large next to a tolerance of a few points, and a
	// drop within the tolerance must not be called a regression (with the
	// estimate alone, a true 2-point drop on 200 items crosses a 5-point
	// tolerance in about one draw in nine). Agreement's p-value already
	// tests against the tolerance.
	beyond := est < -g.Tolerance
	confidentlyBeyond := beyond
	if g.Kind != Agreement {
		confidentlyBeyond = hi < -g.Tolerance
	}
	// Agreement's reasons say how many outputs differ.
	differ := ""
	if g.Kind == Agreement {
		differ = fmt.Sprintf("%d of %d outputs differ: ", d.Losses, d.N)
	}
	switch {
	case significant && confidentlyBeyond:
		d.Outcome = Regression
		if g.Kind == Agreement {
			d.Reason = "significant " + p + ": " + differ + show(est) + " is beyond " + showTol
		} else {
			d.Reason = "significant " + p + " and " + show(est) + " is beyond " + showTol +
				", as is the whole " + conf + " interval (" + upTo + show(hi) + ")"
		}
	case g.Kind == Agreement && d.Losses == 0:
		d.Outcome = Pass
		d.Reason = "every output is identical to the baseline's"
	case g.Kind == FailRate && d.Losses == 0:
		// No item failed in the candidate that the baseline answered: the
		// error rate did not rise on any item, and no interval is needed
		// to say so. Without this a clean A/A of a small suite could
		// never pass: with no failures on either side the Agresti–Min
		// bound of the rise is still about z/(n+2), 8.9 points for 20
		// items at level 0.025, beyond any tolerance of a few points.
		d.Outcome = Pass
		if d.Gains == 0 {
			d.Reason = "no item failed on one side only"
		} else {
			d.Reason = fmt.Sprintf("no item failed that the baseline answered (%d answered that it failed)", d.Gains)
		}
	case needDetect > 0:
		// A suite that could not show a regression however large cannot
		// show a pass either.
		d.Outcome = Inconclusive
		d.Reason = fmt.Sprintf("too few items: need >= %d", needDetect)
	case lo >= -g.Tolerance:
		d.Outcome = Pass
		switch {
		case g.Tolerance == 0 && g.Kind == FailRate:
			d.Reason = "the " + conf + " interval rules out any rise"
		case g.Tolerance == 0:
			d.Reason = "the " + conf + " interval rules out any drop"
		default:
			d.Reason = "the " + conf + " interval rules out worse than " + showTol
		}
	case significant && beyond:
		d.Outcome = Inconclusive
		d.Reason = "significant " + p + " and " + show(est) + " is beyond " + showTol +
			", but the " + conf + " interval reaches " + show(hi) + ", within it"
	case significant:
		d.Outcome = Inconclusive
		d.Reason = "significant " + p + " but " + differ + show(est) + " is within " + showTol +
			", and the " + conf + " interval reaches " + show(lo)
	case beyond:
		d.Outcome = Inconclusive
		d.Reason = differ + show(est) + " is beyond " + showTol + " but not significant " + p +
			", and the " + conf + " interval reaches " + show(lo)
	default:
		d.Outcome = Inconclusive
		d.Reason = differ + "the " + conf + " interval reaches " + show(lo) + ", beyond " + showTol
	}
}

// points writes a number of points: "2 points", "-1 point".
func points(v string) string {
	switch v {
	case "1", "+1", "-1":
		return v + " point"
	}
	return v + " points"
}
