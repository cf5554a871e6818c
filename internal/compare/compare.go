package compare

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/perf/benchmath"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// MedianConfidence is the confidence of each side's median interval, as
// benchstat shows it.
const MedianConfidence = 0.95

// Options configure a comparison.
type Options struct {
	// Alpha is the false-regression rate over the run; 0 takes the
	// candidate's compare.alpha, else config.DefaultAlpha.
	Alpha float64
	// OnInconclusive is fail or pass; "" takes the candidate's, else fail.
	OnInconclusive string
	// AllowMismatch compares results that measured different things or ran
	// on different hardware, listing the differences as mismatches.
	AllowMismatch bool
	// Gates, if set, gives each scenario's gates (from a config); otherwise
	// the gates recorded in the candidate result, else the defaults.
	Gates func(scenario string) []config.Gate
	// QualityGates, if set, are the eval suites' gates (from a config);
	// otherwise those recorded with each suite, else the defaults.
	QualityGates []config.Gate
	// AB, if set, compares pair by pair (perfgate ab): repetition r of the
	// baseline and of the candidate were measured in the same round, so
	// each gate tests the paired differences (stat.DecideRounds) rather
	// than two independent samples, and cold starts pair by their order.
	// The verdict carries it.
	AB *AB
	// Levels, if set, is each scenario's level: its share of alpha
	// (PerScenario), spent over looks by a sequential gate; Holm then runs
	// within each scenario. Unset: one family, Holm across every gate of the
	// run at Alpha (perfgate compare, gate and validate all use per-scenario
	// levels).
	Levels map[string]float64
	// Detectable, if set, gives each per-repetition gate its detectable
	// change (Gate.Detectable), as a final verdict's report shows it; the
	// looks of a sequential gate leave it out (it costs a simulation).
	Detectable bool
	// Estimator is compare.estimator: how a gate takes a latency
	// percentile of each repetition (GateValues); "" takes the
	// candidate's, else config.DefaultEstimator.
	Estimator string
	// Tail is compare.tail: the lowest latency percentile whose gates get
	// a tail test of their requests beside the per-repetition test (p99),
	// or off; "" takes the candidate's, else config.DefaultTail. Not in an
	// A/B, nor for a capacity scenario (see Compare).
	Tail string
}

// Compare compares candidate with the baselines: each scenario of the
// candidate with the first baseline result that has a scenario of that name
// (one result holding every scenario, or one baselines/<scenario>.json each).
// Identities are checked first: a *MismatchError unless AllowMismatch.
func Compare(baselines []*result.Result, candidate *result.Result, o Options) (*Verdict, error) {
	if o.Alpha == 0 {
		o.Alpha = config.DefaultAlpha
		if candidate.Compare != nil && candidate.Compare.Alpha > 0 {
			o.Alpha = candidate.Compare.Alpha
		}
	}
	if o.OnInconclusive == "" {
		o.OnInconclusive = config.DefaultOnInconclusive
		if candidate.Compare != nil && candidate.Compare.OnInconclusive != "" {
			o.OnInconclusive = candidate.Compare.OnInconclusive
		}
	}
	tailLowest, err := o.tailSetting(candidate)
	if err != nil {
		return nil, err
	}
	estimator, err := o.estimator(candidate)
	if err != nil {
		return nil, err
	}
	// An A/B has no tail gates: its design is the pairing of round r's
	// repetitions, and the tail test permutes repetitions as exchangeable,
	// which drift across rounds (what the pairing cancels) is not. A
	// capacity scenario has none either: its latency is measured at each
	// side's own capacity, not at one load.
	if o.AB != nil {
		tailLowest = 0
	}
	v := &Verdict{OnInconclusive: o.OnInconclusive, Alpha: o.Alpha, Sequential: o.Levels != nil, Estimator: estimator}
	if o.AB != nil {
		ab := *o.AB
		ab.Order = slices.Clone(ab.Order)
		v.AB = &ab
	}

	// Pair scenarios with their baselines and check identities.
	type pair struct {
		base, cand *result.ScenarioResult
		baseRes    *result.Result
	}
	var pairs []pair
	var mismatches []Difference
	seenChange := map[Difference]bool{}
	checked := map[*result.Result]bool{}
	for i := range candidate.Scenarios {
		c := &candidate.Scenarios[i]
		br, b := find(baselines, c.Name)
		if b == nil {
			v.Scenarios = append(v.Scenarios, Scenario{Name: c.Name, NoBaseline: true, CandidateN: len(c.Repetitions)})
			v.Warnings = append(v.Warnings, fmt.Sprintf("scenario %s has no baseline: not compared", c.Name))
			continue
		}
		if !checked[br] {
			checked[br] = true
			mm, ch := identityDifferences(&br.Identity, &candidate.Identity)
			if bc, cc := priceString(br.Cost), priceString(candidate.Cost); bc != cc {
				ch = append(ch, Difference{Field: "GPU price", Baseline: bc, Candidate: cc})
			}
			mismatches = append(mismatches, mm...)
			for _, d := range ch {
				if !seenChange[d] {
					seenChange[d] = true
					v.Changes = append(v.Changes, d)
				}
			}
		}
		mismatches = append(mismatches, ScenarioMismatches(b, c)...)
		pairs = append(pairs, pair{base: b, cand: c, baseRes: br})
	}
	if len(mismatches) > 0 {
		if !o.AllowMismatch {
			return nil, &MismatchError{Differences: mismatches}
		}
		v.Mismatches = mismatches
		v.Warnings = append(v.Warnings, fmt.Sprintf("compared despite %d identity mismatches (--allow-mismatch): the numbers may not be about this change", len(mismatches)))
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("no scenario of the result (%s) has a baseline", scenarioNames(candidate))
	}

	// Build the gates of each scenario, and the families they are tested
	// in: a slot is a latency gate (suite < 0) or a quality gate of a suite.
	families := map[string][]slot{} // family key → its gates
	var inputs = map[slot]stat.Gate{}
	var pairedInputs = map[slot]stat.PairedGate{}
	var tailInputs = map[slot]stat.TailGate{} // slot.suite is tailSuite
	var tailQ = map[slot]float64{}
	// pairings are the capacity gates' (pairCapacity), decided with their
	// family's size and level.
	var pairings = map[slot]*capacityPairing{}
	var scenarios []Scenario
	// starts are an A/B's per-start gates, gated once their families' sizes
	// are known (see gateStarts).
	var starts []startGate
	for _, p := range pairs {
		if o.AB != nil && len(p.base.Repetitions) != len(p.cand.Repetitions) {
			return nil, fmt.Errorf("scenario %s: the base arm has %d repetitions and the candidate %d: an A/B compares them round by round and needs as many on both sides",
				p.cand.Name, len(p.base.Repetitions), len(p.cand.Repetitions))
		}
		sc := Scenario{Name: p.cand.Name, BaselineN: len(p.base.Repetitions), CandidateN: len(p.cand.Repetitions)}
		sc.Warnings = scenarioWarnings(p.base, p.cand)
		key := "" // one family for the run, or one per scenario (sequential)
		if o.Levels != nil {
			key = sc.Name
		}
		gates, notGated := o.gatesOf(p.cand)
		sc.Warnings = append(sc.Warnings, notGated...)
		var recorded []string // gates whose percentiles could not be estimated
		var recordedWhy string
		for _, g := range gates {
			m, err := metric.Lookup(g.Metric)
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", p.cand.Name, err)
			}
			bv, cv, note, baseErr, candErr := sideValues(p.base, p.cand, m, estimator)
			if m.Name == config.StructuredGate || m.Subset != "" {
				// A side with no structured answer to count, or without the
				// subset (a baseline from before perfgate checked or kept
				// them), is shown, not an error.
				if why := notMeasuredSide(m, baseErr, candErr); why != "" {
					sc.NotGated = append(sc.NotGated, NotGated{Metric: m.Name, Title: m.Title, Unit: m.Unit(), Reason: why})
					continue
				}
			}
			if baseErr != nil {
				return nil, fmt.Errorf("baseline scenario %s: %w%s", p.base.Name, baseErr, unavailable(p.baseRes, m))
			}
			if candErr != nil {
				if m.Subset != "" {
					// Its requests of that kind produced nothing to time
					// (each failed, or answered wrong), or it sent none:
					// the candidate's run failed, not the comparison's
					// input.
					return nil, exit.RunError(fmt.Errorf("candidate scenario %s: %w", p.cand.Name, candErr))
				}
				return nil, fmt.Errorf("candidate scenario %s: %w%s", p.cand.Name, candErr, unavailable(candidate, m))
			}
			if note != "" {
				if len(recorded) == 0 {
					recordedWhy = note
				}
				recorded = append(recorded, m.Title)
			}
			if m.PerStart && o.AB != nil {
				if len(bv) == 0 || len(cv) == 0 {
					sc.NotGated = append(sc.NotGated, NotGated{Metric: m.Name, Title: m.Title, Unit: m.Unit(),
						Baseline: nums(bv), Candidate: nums(cv), Reason: notMeasuredStarts})
					continue
				}
				pb, pc := startPairs(bv, cv)
				starts = append(starts, startGate{scenario: len(scenarios), key: key, metric: m, gate: g,
					baseline: bv, candidate: cv, in: stat.Gate{Baseline: pb, Candidate: pc,
						HigherIsBetter: m.HigherIsBetter, Relative: g.Tolerance.Relative, Tolerance: g.Tolerance.Value}})
				continue
			}
			if m.PerStart {
				if reason := perStartReason(bv, cv); reason != "" {
					sc.NotGated = append(sc.NotGated, NotGated{Metric: m.Name, Title: m.Title, Unit: m.Unit(),
						Baseline: nums(bv), Candidate: nums(cv), Reason: reason})
					continue
				}
			}
			s := slot{len(scenarios), -1, len(sc.Gates)}
			sc.Gates = append(sc.Gates, Gate{Metric: m.Name, Title: m.Title, Unit: m.Unit(), Better: m.Better(), Tolerance: g.Tolerance.Text})
			inputs[s] = stat.Gate{Baseline: bv, Candidate: cv, HigherIsBetter: m.HigherIsBetter,
				Relative: g.Tolerance.Relative, Tolerance: g.Tolerance.Value, Points: m.Points()}
			if o.AB == nil { // an A/B pairs every gate by its rounds
				if pc := pairCapacity(m.Name, p.base, p.cand, inputs[s]); pc != nil {
					pairings[s] = pc
				}
			}
			families[key] = append(families[key], s)
			if q, ok := tailQuantile(m, tailLowest); ok && p.cand.Capacity == nil {
				name, title := m.Name+TailSuffix, m.Title+" tail"
				hist := tailHistograms[strings.SplitN(m.Name, ".", 2)[0]]
				bd, why := tailDistributions(p.base, hist, "baseline")
				var cd [][]stat.Bar
				if why == "" {
					cd, why = tailDistributions(p.cand, hist, "candidate")
				}
				if why == "" {
					why = tailTooFew(bd, q)
				}
				if why != "" {
					sc.NotGated = append(sc.NotGated, NotGated{Metric: name, Title: title, Reason: why})
					continue
				}
				ts := slot{len(scenarios), tailSuite, len(sc.Gates)}
				sc.Gates = append(sc.Gates, Gate{Metric: name, Title: title, Unit: "%", Better: m.Better(), Tolerance: g.Tolerance.Text})
				tailInputs[ts] = stat.TailGate{Baseline: bd, Candidate: cd, Quantile: q, Relative: g.Tolerance.Relative,
					Tolerance: g.Tolerance.Value, Seed: tailSeed(sc.Name, name)}
				tailQ[ts] = q
				families[key] = append(families[key], ts)
			}
		}
		if len(recorded) > 0 {
			sc.Warnings = append(sc.Warnings, recordedNote(recorded, recordedWhy))
		}
		suites, warnings := compareSuites(p.base, p.cand, o.QualityGates)
		sc.Warnings = append(sc.Warnings, warnings...)
		for k, in := range suites {
			sc.Quality = append(sc.Quality, in.suite)
			for j, g := range in.gates {
				s := slot{len(scenarios), k, j}
				pairedInputs[s] = g
				families[key] = append(families[key], s)
			}
		}
		scenarios = append(scenarios, sc)
	}

	// An A/B's per-start gates join their families when they can reach
	// the family's level.
	if len(starts) > 0 {
		size := map[string]int{}
		for key, slots := range families {
			size[key] = len(slots)
		}
		for _, st := range gateStarts(starts, size, o.familyLevel) {
			sc := &scenarios[st.scenario]
			if st.notGated != "" {
				sc.NotGated = append(sc.NotGated, NotGated{Metric: st.metric.Name, Title: st.metric.Title, Unit: st.metric.Unit(),
					Baseline: nums(st.baseline), Candidate: nums(st.candidate), Reason: st.notGated})
				continue
			}
			s := slot{st.scenario, -1, len(sc.Gates)}
			sc.Gates = append(sc.Gates, Gate{Metric: st.metric.Name, Title: st.metric.Title, Unit: st.metric.Unit(),
				Better: st.metric.Better(), Tolerance: st.gate.Tolerance.Text})
			inputs[s] = st.in
			families[st.key] = append(families[st.key], s)
		}
	}

	// Decide each family at its level: as two samples, or, in an A/B, as
	// pairs.
	decide := stat.DecideAll
	if o.AB != nil {
		decide = stat.DecideRounds
	}
	for key, slots := range families {
		level, err := o.familyLevel(key)
		if err != nil {
			return nil, err
		}
		var latency, paired, tails []slot
		var in []stat.Gate
		var pin []stat.PairedGate
		var tin []stat.TailGate
		for _, s := range slots {
			switch {
			case s.suite == tailSuite:
				tails, tin = append(tails, s), append(tin, tailInputs[s])
			case s.suite < 0:
				latency, in = append(latency, s), append(in, inputs[s])
			default:
				paired, pin = append(paired, s), append(pin, pairedInputs[s])
			}
		}
		// A capacity gate's samples are pairs when both sides drew the
		// same fresh arrivals for each repetition and the pairs can reach
		// the family's level (capacityPairing).
		notes := make([]string, len(latency))
		for i, s := range latency {
			if pc := pairings[s]; pc != nil {
				notes[i] = pc.decide(&in[i], len(slots), level)
			}
		}
		var decisions []stat.Decision
		var pairedDecisions []stat.PairedDecision
		var tailDecisions []stat.TailDecision
		if len(tin) > 0 { // never in an A/B
			decisions, pairedDecisions, tailDecisions = stat.DecideWithTails(in, pin, tin, level)
		} else {
			decisions, pairedDecisions = decide(in, pin, level)
		}
		for i, d := range tailDecisions {
			s := tails[i]
			fillTail(&scenarios[s.scenario].Gates[s.gate], d, tailQ[s])
			scenarios[s.scenario].Level = level
		}
		for i, d := range decisions {
			s := latency[i]
			g := &scenarios[s.scenario].Gates[s.gate]
			fill(g, in[i], d)
			withholdBounds(g, pairs[s.scenario].base, pairs[s.scenario].cand)
			if notes[i] != "" {
				g.Reason += "; " + notes[i]
			}
			if o.AB != nil {
				g.Drift = drift(in[i].Baseline)
			}
			scenarios[s.scenario].Level = level
		}
		for i, d := range pairedDecisions {
			s := paired[i]
			fillQuality(&scenarios[s.scenario].Quality[s.suite].Gates[s.gate], d)
			scenarios[s.scenario].Level = level
		}
	}
	if o.Detectable {
		detectable(scenarios, families, inputs, o)
	}
	for i := range scenarios {
		sc := &scenarios[i]
		if sc.Level == 0 {
			sc.Level = o.Alpha
		}
		sortGates(sc.Gates)
		for j := range sc.Quality {
			sortQualityGates(sc.Quality[j].Gates)
		}
	}
	// Keep the candidate's scenario order, with the uncompared ones in place.
	v.Scenarios = append(v.Scenarios, scenarios...)
	order := map[string]int{}
	for i, s := range candidate.Scenarios {
		order[s.Name] = i
	}
	slices.SortStableFunc(v.Scenarios, func(a, b Scenario) int { return order[a.Name] - order[b.Name] })

	v.Outcome = overall(v.Scenarios)
	return v, nil
}

// detectable sets the detectable change of every per-repetition gate of the
// families (stat.DetectableChange): the noise the gate's own samples show
// (their spread within each side, pooled; in an A/B, the spread of the
// pairs' differences), at the family's level and size, for an unchanged
// candidate to pass in all but AAMiss over the run's gates.
func detectable(scenarios []Scenario, families map[string][]slot, inputs map[slot]stat.Gate, o Options) {
	total := 0
	for _, slots := range families {
		total += len(slots)
	}
	miss := AAMiss / float64(max(1, total))
	for key, slots := range families {
		level, err := o.familyLevel(key)
		if err != nil {
			continue
		}
		for _, s := range slots {
			in, ok := inputs[s]
			if !ok {
				continue // a tail or quality gate
			}
			g := &scenarios[s.scenario].Gates[s.gate]
			noise, ok := sampleNoise(in, o.AB != nil)
			if !ok {
				continue
			}
			looks := []stat.Look{{Baseline: len(in.Baseline), Candidate: len(in.Candidate), Level: level}}
			change := stat.DetectableChange(noise, looks, len(slots), miss)
			if noise.Falls && noise.Relative && change >= 1 {
				change = math.Inf(1) // a fall of -100% or more: no tolerance allows it
			}
			d := Num(change)
			g.Detectable = &d
			if float64(d) > in.Tolerance && !math.IsInf(float64(d), 1) && g.Outcome != stat.Regression {
				g.Warnings = append(g.Warnings, fmt.Sprintf("at these samples an unchanged candidate passes this gate reliably only from a tolerance of %s: %s is within its noise (more requests a repetition, more repetitions, or a steadier statistic would confirm it)",
					toleranceTerms(float64(d), in, g.Tolerance), g.Tolerance))
			}
		}
	}
}

// toleranceTerms writes a detectable change d as the gate's tolerance
// (written tol) is written: a percentage, points or the metric's unit,
// with the bad direction's sign; "none" when nothing can be confirmed.
func toleranceTerms(d float64, in stat.Gate, tol string) string {
	if math.IsInf(d, 1) || math.IsNaN(d) {
		return "none"
	}
	sign := "+"
	if strings.HasPrefix(strings.TrimSpace(tol), "-") {
		sign = "-"
	}
	switch {
	case in.Relative:
		return sign + strconv.FormatFloat(100*d, 'f', 1, 64) + "%"
	case in.Points:
		return sign + strconv.FormatFloat(100*d, 'f', 2, 64) + " points"
	}
	return sign + strconv.FormatFloat(d, 'g', 3, 64)
}

// AAMiss is the share of A/A comparisons a whole run's gates may fail
// together, for a detectable change: each of a run's G gates may fail an
// unchanged candidate in AAMiss/G of them (Bonferroni), so that an
// unchanged pull request passes at least 95% of the time.
const AAMiss = 0.05

// sampleNoise is the noise of a gate's samples: the pooled spread of each
// side about its own mean (of the log values, for a relative tolerance),
// or, paired, the spread of the pairs' differences (log-ratios). ok is
// false when it cannot be had (a value <= 0 under a relative tolerance,
// too few values).
func sampleNoise(in stat.Gate, paired bool) (stat.Noise, bool) {
	tr := func(v float64) (float64, bool) {
		if !in.Relative {
			return v, true
		}
		if !(v > 0) {
			return 0, false
		}
		return math.Log(v), true
	}
	n := stat.Noise{Relative: in.Relative, Paired: paired, Falls: in.HigherIsBetter}
	if paired {
		if len(in.Baseline) != len(in.Candidate) || len(in.Baseline) < 2 {
			return n, false
		}
		d := make([]float64, len(in.Baseline))
		for i := range d {
			b, ok1 := tr(in.Baseline[i])
			c, ok2 := tr(in.Candidate[i])
			if !ok1 || !ok2 {
				return n, false
			}
			d[i] = c - b
		}
		n.Within = sd(d, 1)
		return n, !math.IsNaN(n.Within)
	}
	var ss float64
	df := 0
	for _, side := range [][]float64{in.Baseline, in.Candidate} {
		xs := make([]float64, len(side))
		for i, v := range side {
			x, ok := tr(v)
			if !ok {
				return n, false
			}
			xs[i] = x
		}
		if len(xs) < 2 {
			continue
		}
		s := sd(xs, 1)
		ss += s * s * float64(len(xs)-1)
		df += len(xs) - 1
	}
	if df == 0 {
		return n, false
	}
	n.Within = math.Sqrt(ss / float64(df))
	return n, true
}

// sd is the standard deviation of xs with ddof degrees of freedom taken
// (1: the sample's), NaN for too few.
func sd(xs []float64, ddof int) float64 {
	if len(xs) <= ddof {
		return math.NaN()
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-ddof))
}

// slot places a gate of a comparison: a latency gate of scenario's Gates
// (suite < 0; tailSuite for a tail gate) or a quality gate of one of its
// suites.
type slot struct{ scenario, suite, gate int }

// tailSuite marks a tail gate's slot: a gate of the scenario's Gates
// (suite < 0, like a latency gate) decided by the tail test.
const tailSuite = -2

// familyLevel is the level a family of gates is tested at: Alpha for the
// run's one family, or the scenario's level at this look.
func (o Options) familyLevel(key string) (float64, error) {
	if o.Levels == nil {
		return o.Alpha, nil
	}
	l, ok := o.Levels[key]
	if !ok {
		return 0, fmt.Errorf("no level for scenario %s", key)
	}
	return l, nil
}

// startGate is an A/B's gate of a metric measured once per stack start
// (cold start), its starts paired by order.
type startGate struct {
	scenario int    // the scenario's index among those compared
	key      string // its family
	metric   metric.Info
	gate     config.Gate
	// baseline and candidate are every start's value; in holds the pairs,
	// as many as the side with fewer starts has.
	baseline, candidate []float64
	in                  stat.Gate
	// notGated, when set, is why the gate is shown and not tested.
	notGated string
}

// startPairs pairs an A/B's stack starts. Swap mode starts the arms by
// turns, the base first (base 1, candidate 1, base 2, candidate 2, ...), so
// the candidate's start i came between the base's starts i and i+1: it is
// paired with their mean, which cancels a drift linear in time as ABBA
// cancels it for the rounds (pairing it with the base's start i alone
// would put the base first in every pair). n pairs need n+1 base starts.
func startPairs(base, cand []float64) (pb, pc []float64) {
	n := max(0, min(len(base)-1, len(cand)))
	pb = make([]float64, n)
	for i := range n {
		pb[i] = (base[i] + base[i+1]) / 2
	}
	return pb, cand[:n]
}

// gateStarts decides which per-start gates are tested: those whose pairs
// can reach their family's level. A family of m gates at level shows a
// regression with n pairs only when 2^−n·m < level (every pair worse), and
// a gate that could not would leave the verdict inconclusive for a
// measurement that was never meant to be repeated enough: it is shown, not
// gated, with the starts it would need. size is each family's number of
// other gates. Gates with fewer pairs are left out first, each one out
// making the family smaller for the rest.
func gateStarts(starts []startGate, size map[string]int, level func(key string) (float64, error)) []startGate {
	byKey := map[string][]int{}
	for i, st := range starts {
		byKey[st.key] = append(byKey[st.key], i)
	}
	for key, idx := range byKey {
		l, err := level(key)
		if err != nil {
			continue // the family's decision reports the missing level
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(len(starts[a].in.Baseline), len(starts[b].in.Baseline))
		})
		m := size[key] + len(idx)
		for _, i := range idx {
			st := &starts[i]
			n := len(st.in.Baseline)
			need := stat.RoundsToReach(l / float64(m))
			if n >= need {
				break // every later gate has at least as many pairs
			}
			over := ""
			if m > 1 {
				over = fmt.Sprintf(" (alpha %.3g over %d gates)", l, m)
			}
			pairs := "pairs"
			if n == 1 {
				pairs = "pair"
			}
			st.notGated = fmt.Sprintf("measured once per stack start: %d and %d starts, %d %s; the paired test needs >= %d starts a side to reach level %.3g%s; shown, not gated",
				len(st.baseline), len(st.candidate), n, pairs, need, l/float64(m), over)
			m--
		}
	}
	return starts
}

// drift is an A/B gate's Drift: the Theil-Sen slope of the baseline arm's
// values against the round, times the rounds less one (the trend from the
// first round to the last), relative to their median's magnitude. NaN with
// fewer than 2 rounds or a median of 0.
func drift(baseline []float64) Num {
	n := len(baseline)
	median := math.Abs(stat.SortedMedian(sortedCopy(baseline)))
	if n < 2 || median == 0 {
		return Num(math.NaN())
	}
	return Num(stat.TheilSen(baseline) * float64(n-1) / median)
}

// sortedCopy returns values sorted, leaving values as they were.
func sortedCopy(values []float64) []float64 {
	s := slices.Clone(values)
	slices.Sort(s)
	return s
}

// overall is the verdict of every gate of every scenario.
func overall(scenarios []Scenario) stat.Outcome {
	return worst(func(yield func(stat.Outcome) bool) {
		for _, sc := range scenarios {
			for o := range sc.outcomes {
				if !yield(o) {
					return
				}
			}
		}
	})
}

// sortGates puts regressions first, then inconclusive gates, then passes,
// keeping report order within each.
func sortGates(gates []Gate) {
	slices.SortStableFunc(gates, func(a, b Gate) int { return cmp.Compare(rank(a.Outcome), rank(b.Outcome)) })
}

// sortQualityGates puts regressions first, as sortGates does.
func sortQualityGates(gates []QualityGate) {
	slices.SortStableFunc(gates, func(a, b QualityGate) int { return cmp.Compare(rank(a.Outcome), rank(b.Outcome)) })
}

// gatesOf is the gates of a candidate scenario: the options', else those
// the candidate recorded (with a warning for each it cannot apply), else
// the defaults.
func (o Options) gatesOf(s *result.ScenarioResult) ([]config.Gate, []string) {
	if o.Gates != nil {
		return o.Gates(s.Name), nil
	}
	if s.Gates != nil {
		return storedGates(s.Gates, false)
	}
	return (&config.Config{}).GatesOf(config.Scenario{}), nil
}

// rank orders gates in a report: regressions first, then inconclusive, then
// passes.
func rank(o stat.Outcome) int {
	switch o {
	case stat.Regression:
		return 0
	case stat.Inconclusive:
		return 1
	}
	return 2
}

// fill copies a decision into a gate, with both sides' summaries.
func fill(g *Gate, in stat.Gate, d stat.Decision) {
	g.Baseline = summarise(in.Baseline)
	g.Candidate = summarise(in.Candidate)
	g.Shift = Interval{Num(d.Shift.Estimate), Num(d.Shift.Lo), Num(d.Shift.Hi)}
	g.Change = Interval{Num(d.Change.Estimate), Num(d.Change.Lo), Num(d.Change.Hi)}
	if in.Points {
		// A share's change is in points, the unit of its tolerance: the
		// relative change of an error rate (+100% from 2% to 4%) says
		// nothing the gate decides on.
		g.Change = Interval{Num(math.NaN()), Num(math.NaN()), Num(math.NaN())}
		g.ChangePoints = &Interval{Num(100 * d.Shift.Estimate), Num(100 * d.Shift.Lo), Num(100 * d.Shift.Hi)}
	}
	g.Paired = d.Paired
	g.Confidence = Num(d.Shift.Confidence)
	g.IntervalNeeds = d.IntervalNeeds
	g.P, g.PAdjusted, g.Level = Num(d.P), Num(d.PAdjusted), Num(d.Level)
	g.Outcome, g.Reason = d.Outcome, d.Reason
	for _, w := range d.Warnings {
		if !isIntervalWarning(w, d.IntervalNeeds) {
			g.Warnings = append(g.Warnings, w)
		}
	}
}

// isIntervalWarning reports whether w is stat's warning that the change
// has no interval ("need >= 6 samples a side for a 90% interval"), which
// IntervalNeeds says in a field: the report says it once per table.
func isIntervalWarning(w string, needs int) bool {
	return needs > 0 && strings.HasPrefix(w, fmt.Sprintf("need >= %d ", needs)) && strings.HasSuffix(w, " interval")
}

// summarise is benchmath's median summary of one side, with its warnings.
func summarise(values []float64) Summary {
	s := Summary{N: len(values), Values: nums(values), Median: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN())}
	if len(values) == 0 {
		s.Warnings = []string{"no samples"}
		return s
	}
	sample := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(sample, MedianConfidence)
	s.Median, s.Lo, s.Hi = Num(sum.Center), Num(sum.Lo), Num(sum.Hi)
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		// benchmath's only warning says this ("need >= 6 samples for
		// confidence interval at level 0.95"): the field says it once.
		s.IntervalNeeds = MedianIntervalNeeds()
		return s
	}
	for _, w := range sum.Warnings {
		s.Warnings = append(s.Warnings, w.Error())
	}
	return s
}

// MedianIntervalNeeds is the fewest values a side for a finite interval of
// its median at MedianConfidence (6 at 95%): benchmath's own threshold,
// found by asking it.
var MedianIntervalNeeds = sync.OnceValue(func() int {
	for n := 2; n <= 50; n++ {
		values := make([]float64, n)
		for i := range values {
			values[i] = float64(i)
		}
		sum := benchmath.AssumeNothing.Summary(benchmath.NewSample(values, &benchmath.DefaultThresholds), MedianConfidence)
		if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
			return n
		}
	}
	return 51
})

// notMeasuredSide says which side measured nothing of a metric (a
// *result.NotMeasuredError), or "" when both did or the error is another.
func notMeasuredSide(m metric.Info, baseErr, candErr error) string {
	var nm *result.NotMeasuredError
	if m.Subset != "" {
		switch {
		case errors.As(baseErr, &nm):
			return "not measured on the baseline (" + nm.Why + "; results from before subsets have none): promote a new baseline to gate it"
		}
		// A candidate without it is an error, not a pass: its requests of
		// that kind failed, or it sent none.
		return ""
	}
	switch {
	case errors.As(baseErr, &nm):
		return "not measured on the baseline (a result from before perfgate checked structured output, or one without such requests): promote a new baseline to gate it"
	case baseErr == nil && errors.As(candErr, &nm):
		return "not measured on the candidate: it answered no structured request"
	}
	return ""
}

// notMeasuredStarts is why a per-start metric that a side did not measure
// is not gated.
const notMeasuredStarts = "not measured on both sides (an external stack has no cold start)"

// perStartReason says why a metric measured once per stack start cannot be
// gated here, or "" when it can.
func perStartReason(b, c []float64) string {
	if len(b) == 0 || len(c) == 0 {
		return notMeasuredStarts
	}
	need := stat.SamplesToReach(0.05)
	if len(b) < need || len(c) < need {
		return fmt.Sprintf("measured once per stack start: %d+%d starts, and a test needs >= %d a side; shown, not gated", len(b), len(c), need)
	}
	return ""
}

// scenarioWarnings notes what makes a scenario's numbers less trustworthy.
func scenarioWarnings(b, c *result.ScenarioResult) []string {
	var out []string
	for _, side := range []struct {
		name string
		s    *result.ScenarioResult
	}{{"baseline", b}, {"candidate", c}} {
		if w := side.s.Warmup; w != nil && w.Method != config.WarmupNone && !w.Steady {
			if w.Overload != nil && w.Overload.Overloaded {
				out = append(out, fmt.Sprintf("the %s's warm-up never reached steady state: the server could not keep up with the offered rate (%s)", side.name, w.Overload.Sentence()))
			} else {
				out = append(out, fmt.Sprintf("the %s's warm-up never reached steady state: its first repetitions may still be warming up", side.name))
			}
		}
		missed := 0
		for _, r := range side.s.Repetitions {
			if r.Schedule != nil && !r.Schedule.Achieved {
				missed++
			}
		}
		if missed > 0 {
			out = append(out, fmt.Sprintf("the %s's client fell behind its arrival schedule in %d of %d repetitions: the offered load was not achieved", side.name, missed, len(side.s.Repetitions)))
		}
	}
	if (b.Salt == "") != (c.Salt == "") {
		old := "baseline"
		if c.Salt == "" {
			old = "candidate"
		}
		out = append(out, fmt.Sprintf("the %s was measured by a perfgate from before prompt salting: its repeated prompts may have been served from the engine's prompt cache, so the two sides' TTFT may differ for that alone; promote a new baseline", old))
	}
	if w := seedWarning(b, c); w != "" {
		out = append(out, w)
	}
	if tb, tc := tokensFrom(b), tokensFrom(c); tb != tc {
		out = append(out, fmt.Sprintf("token counts come from %s in the baseline and %s in the candidate: throughputs may not be comparable", tb, tc))
	}
	return out
}

// seedWarning says when the two sides of an open loop that replays one
// schedule in every repetition (load.arrivals: same) ran with different
// seeds: each side's repetitions replayed its own schedule, so the sides
// differ by their schedules as well as by their servers, and their samples,
// spread by the server's noise alone, do not show it. On the simulator of
// bench/capacity_test.go the seed alone moved a capacity from 137 to 206
// req/s. "" when the seeds are the same or either is unknown.
func seedWarning(b, c *result.ScenarioResult) string {
	if b.Seed == nil || c.Seed == nil || *b.Seed == *c.Seed || c.Load.Arrivals == config.ArrivalsFresh ||
		(c.Load.Type != config.LoadPoisson && c.Load.Type != config.LoadGamma && c.Load.Type != config.LoadStep) {
		return ""
	}
	return fmt.Sprintf("the baseline ran with seed %d and the candidate with seed %d: every repetition of a side replayed that side's one arrival schedule (load.arrivals: same), so the two differ by their schedules as well as their servers; keep the seed, or draw arrivals afresh for each repetition (load.arrivals: fresh)",
		*b.Seed, *c.Seed)
}

func tokensFrom(s *result.ScenarioResult) string {
	if len(s.Repetitions) == 0 {
		return ""
	}
	return s.Repetitions[0].TokensFrom
}

func find(results []*result.Result, name string) (*result.Result, *result.ScenarioResult) {
	for _, r := range results {
		for i := range r.Scenarios {
			if r.Scenarios[i].Name == name {
				return r, &r.Scenarios[i]
			}
		}
	}
	return nil, nil
}

func scenarioNames(r *result.Result) string {
	var names []string
	for _, s := range r.Scenarios {
		names = append(names, s.Name)
	}
	return fmt.Sprint(names)
}

// unavailable says why a result has no telemetry for m, when the result
// recorded why: "; GPU telemetry was unavailable: nvidia-smi: not found".
func unavailable(r *result.Result, m metric.Info) string {
	if r == nil || r.Telemetry == nil {
		return ""
	}
	var src result.SourceInfo
	var name string
	switch m.Group {
	case metric.GroupEngine:
		src, name = r.Telemetry.Engine, "engine"
	case metric.GroupGPU:
		src, name = r.Telemetry.GPU, "GPU"
	default:
		return ""
	}
	if src.Unavailable == "" {
		return ""
	}
	return fmt.Sprintf("; %s telemetry was unavailable: %s", name, src.Unavailable)
}
