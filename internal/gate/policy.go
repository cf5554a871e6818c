package gate

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// Design is how a comparison's samples are tested: as two independent
// samples (a stored baseline: perfgate gate, compare, validate) or as
// rounds, pair by pair (perfgate ab).
type Design int

// The two designs.
const (
	// TwoSamples tests each gate's repetitions with the one-sided U test
	// and the Hodges-Lehmann interval (stat.Decide).
	TwoSamples Design = iota
	// Rounds tests round r of the base with round r of the candidate: the
	// signed-rank test and the Walsh-average interval (stat.DecideRounds).
	Rounds
)

// String names the design as messages do: "repetitions" or "rounds".
func (d Design) String() string {
	if d == Rounds {
		return "rounds"
	}
	return "repetitions"
}

// Family is one scenario's gates, tested together: its latency and
// throughput gates, compare.tail's tail gates (not in an A/B, nor for a
// capacity search) and, for the quality scenario, its suites' gates, under
// one Holm adjustment at the scenario's share of alpha. A gate on a
// metric measured once per stack start (cold start) is not counted: with
// one start a side it is shown, not tested, and in an A/B it joins only
// when its starts can reach the family's level (see compare).
type Family struct {
	Scenario string
	// Gates is the family's size: Holm's m.
	Gates int
	// Samples, for a capacity search, is its capacity.repetitions: its
	// samples a side, compared at one look with the scenario's whole share;
	// 0 for a scenario measured in repetitions.
	Samples int
	// Fresh is set for a capacity search under load.arrivals: fresh: a
	// comparison with a baseline of the same seed tests its samples as
	// pairs, repetition by repetition, where the pairs can reach the
	// family's level, and unpaired otherwise.
	Fresh bool
	// Search names the search whose samples they are, capacity or
	// headroom, for the messages; empty for repetitions.
	Search string
}

// Policy is perfgate's one rule of evidence, which every command that
// judges gates applies: gate, compare, validate, ab, compare --aa and the
// capacity gate. It says
//
//   - the families: one per scenario with at least one gate (Family);
//   - the share of alpha each gets: alpha split evenly across the families
//     (Bonferroni), since the scenarios run one after another and Holm
//     cannot see them all at once; a sweep's points, ungated by default,
//     take no share;
//   - the looks of a sequential gate: at repetitions.min and in even steps
//     to repetitions.max (stat.Looks), each spending part of its family's
//     share with the Pocock-type function (stat.LookLevels);
//   - whether a family can decide: at one of its looks a candidate far
//     beyond the tolerance would be a regression and one well within it a
//     pass (stat.Reachable, stat.ReachablePairs run the decision itself
//     on those extremes), with a stored baseline of repetitions.max (what
//     perfgate run measures) against the look's candidate.
//
// A Policy is built from a config (ConfigPolicy) or from the families a
// comparison found (families of results, for compare without a config).
type Policy struct {
	// Alpha is the false-regression rate of the whole run (compare.alpha).
	Alpha float64
	// Min and Max are the repetitions (or, in an A/B, the rounds).
	Min, Max int
	// Design is how the samples are tested.
	Design Design
	// Families are the scenarios with gates, in the order they run.
	Families []Family
}

// ConfigPolicy is cfg's policy for a comparison of the given design: a
// family for each measured scenario with a gate, of those for which has
// says true (nil: all of them; perfgate gate passes the scenarios that have
// a baseline, the others being measured but not compared).
func ConfigPolicy(cfg *config.Config, design Design, has func(scenario string) bool) Policy {
	p := Policy{Alpha: cfg.Compare.Alpha, Min: cfg.Repetitions.Min, Max: cfg.Repetitions.Max, Design: design}
	if design == Rounds {
		p.Min, p.Max = cfg.AB.Rounds.Min, cfg.AB.Rounds.Max // an A/B's own
	}
	if p.Alpha == 0 {
		p.Alpha = config.DefaultAlpha
	}
	for _, s := range cfg.Measured() {
		if has != nil && !has(s.Name) {
			continue
		}
		if f, ok := family(cfg, s, design); ok {
			p.Families = append(p.Families, f)
		}
	}
	return p
}

// family is scenario s's family under cfg, and whether it has any gate.
func family(cfg *config.Config, s config.Scenario, design Design) (Family, bool) {
	f := Family{Scenario: s.Name}
	gates := cfg.GatesOf(s)
	for _, g := range gates {
		if m, err := metric.Lookup(g.Metric); err == nil && !m.PerStart {
			f.Gates++
		}
	}
	if !s.Searched() && design == TwoSamples {
		f.Gates += tailGates(gates, cfg.Compare.Tail)
	}
	if cfg.Quality.Enabled() && s.Name == cfg.QualityScenario() {
		for _, path := range cfg.SuitePaths() {
			f.Gates += cfg.SuiteGates(config.SuiteContinuous(path))
		}
	}
	switch {
	case s.Capacity != nil:
		f.Search = "capacity"
	case s.Headroom != nil:
		f.Search = "headroom"
	}
	if s.Searched() {
		// A headroom search's samples pair when they can, and are tested
		// unpaired otherwise with nothing lost: its users send the same
		// requests every repetition, so its samples spread by what the
		// server did alone. Advise's warning is for fresh arrivals.
		f.Samples, f.Fresh = s.SearchRepetitions(), s.Load.FreshArrivals() && s.Headroom == nil
	}
	return f, f.Gates > 0
}

// tailGates is how many tail gates compare.tail adds beside gates: one
// beside each latency percentile gate (ttft, tpot, itl, e2e) at or above
// its percentile; none when it is off or not a percentile (config
// validation reports that).
func tailGates(gates []config.Gate, tail string) int {
	lowest, err := config.ParseTail(tail)
	if err != nil || lowest <= 0 {
		return 0
	}
	n := 0
	for _, g := range gates {
		_, st, ok := metric.LatencyPercentile(g.Metric)
		if !ok {
			continue
		}
		if q, err := config.ParseTail(st); err == nil && q >= lowest-1e-12 {
			n++
		}
	}
	return n
}

// FromFamilies is the policy of a comparison made without a config: the
// families are the scenarios a first comparison found gates in (sizes by
// scenario, as compare.FamilySizes gives them), each compared at one look.
func FromFamilies(alpha float64, sizes map[string]int) Policy {
	p := Policy{Alpha: alpha, Min: 1, Max: 1}
	for name, m := range sizes {
		if m > 0 {
			p.Families = append(p.Families, Family{Scenario: name, Gates: m})
		}
	}
	return p
}

// Share is each family's share of alpha: alpha over the families (all of
// alpha when there are none, so that a level is never 0).
func (p Policy) Share() float64 { return p.Alpha / float64(max(1, len(p.Families))) }

// Levels is every family's level when its samples are compared at once
// (no looks): its share.
func (p Policy) Levels() map[string]float64 {
	out := make(map[string]float64, len(p.Families))
	for _, f := range p.Families {
		out[f.Scenario] = p.Share()
	}
	return out
}

// Looks are the repetition counts at which a sequential gate compares.
func (p Policy) Looks() []int { return stat.Looks(p.Min, p.Max) }

// LookLevels are the levels of Looks: the share spent over them.
func (p Policy) LookLevels() []float64 { return stat.LookLevels(p.Share(), p.Min, p.Max) }

// FirstLevel is the level of the first look.
func (p Policy) FirstLevel() float64 { return p.LookLevels()[0] }

// Sequential is the sequential test of the policy's looks for a
// comparison with options o (alpha, gates, the A/B's pairing): each
// family spends its share over its looks.
func (p Policy) Sequential(o compare.Options) *compare.Sequential {
	o.Alpha = p.Alpha
	return &compare.Sequential{Options: o, Min: p.Min, Max: p.Max, Share: p.Share()}
}

// Reach is which outcomes one gate of a family of m gates can reach with n
// samples a side (rounds, in an A/B) at level, under the policy's design.
func (p Policy) Reach(n, m int, level float64) stat.Reach {
	if p.Design == Rounds {
		return stat.ReachablePairs(n, m, level)
	}
	return stat.Reachable(n, n, m, level)
}

// Decides reports whether family f can reach both outcomes: at one of its
// looks (a capacity search: with its samples, at its whole share).
func (p Policy) Decides(f Family) bool {
	if f.Samples > 0 {
		return p.Reach(f.Samples, f.Gates, p.Share()).Decides()
	}
	return p.decides(stat.Looks(p.Min, p.Max), stat.LookLevels(p.Share(), p.Min, p.Max), f.Gates)
}

// decides says whether a family of m gates reaches both outcomes at one of
// looks, tested at levels. Against a stored baseline, the baseline holds
// the last look's count (perfgate run measures repetitions.max) while the
// candidate's grows look by look; in an A/B both arms have the look's
// rounds.
func (p Policy) decides(looks []int, levels []float64, m int) bool {
	last := looks[len(looks)-1]
	for i, n := range looks {
		reach := p.Reach(n, m, levels[i])
		if p.Design == TwoSamples {
			reach = stat.Reachable(last, n, m, levels[i])
		}
		if reach.Decides() {
			return true
		}
	}
	return false
}

// needed is the smallest fixed count (from, up to limit) with which a
// family of m gates decides at the whole share; limit+1 when none does.
func (p Policy) needed(from, limit, m int) int {
	for n := max(1, from); n <= limit; n++ {
		if p.Reach(n, m, p.Share()).Decides() {
			return n
		}
	}
	return limit + 1
}

// Undecided is a set of families of one size that cannot decide, and why.
type Undecided struct {
	// Families are the families concerned (one size, so one need).
	Families []Family
	// Capacity is true for capacity searches (capacity.repetitions is what
	// to raise).
	Capacity bool
	// Msg says why, and what would decide: the repetitions (or rounds, or
	// capacity.repetitions) needed, or to gate fewer metrics.
	Msg string
}

// Undecidable lists the families that cannot decide, grouped by size and
// kind, each with the message that says what would: one whose every gate
// would only ever be inconclusive, neither a regression nor a pass,
// whatever is measured.
func (p Policy) Undecidable() []Undecided {
	type key struct {
		gates, samples int
	}
	var order []key
	groups := map[key][]Family{}
	for _, f := range p.Families {
		if p.Decides(f) {
			continue
		}
		k := key{f.Gates, f.Samples}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	var out []Undecided
	for _, k := range order {
		fams := groups[k]
		u := Undecided{Families: fams, Capacity: k.samples > 0}
		u.Msg = p.undecidable(fams, k.gates, k.samples)
		out = append(out, u)
	}
	return out
}

// undecidable says why the families named, each of m gates, cannot decide,
// and the repetitions (rounds, capacity samples) they need: the smallest
// fixed count and, for a range, the smallest max with which the range
// decides.
func (p Policy) undecidable(fams []Family, m, samples int) string {
	unit, test := "repetitions", "the U test's smallest p with %d a side is %.3g"
	minP := func(n int) float64 { return stat.MinP(n, n) }
	if p.Design == Rounds {
		unit, test = "rounds", "the signed-rank test's smallest p with %d pairs is %.3g"
		minP = func(n int) float64 { return stat.MinPPairs(n) }
	}
	names := make([]string, len(fams))
	for i, f := range fams {
		names[i] = f.Scenario
	}
	of := "scenario " + names[0]
	if len(names) > 1 {
		of = "each of scenarios " + strings.Join(names, ", ")
	}
	alphaIs := fmt.Sprintf("alpha %g", p.Alpha)
	if len(p.Families) > 1 {
		alphaIs = fmt.Sprintf("alpha %g shared by %d scenarios with gates", p.Alpha, len(p.Families))
	}
	if samples > 0 {
		need := p.needed(samples, config.MaxRepetitions, m)
		search := cmp.Or(fams[0].Search, "capacity")
		msg := fmt.Sprintf("%d %s samples a side cannot show a significant difference on %s of %s: Holm's first step needs p < %.3g (%s), and "+test+": every gate would be inconclusive.",
			samples, search, theGates(m), of, p.Share()/float64(m), alphaIs, samples, minP(samples))
		if need > config.MaxRepetitions {
			return msg + " Gate fewer metrics, or raise compare.alpha"
		}
		return msg + fmt.Sprintf(" Set %s.repetitions: %d or more, or gate fewer metrics", search, need)
	}
	key := p.key()
	levels := p.LookLevels()
	n, last := p.Max, levels[len(levels)-1]
	what := "neither a regression nor a pass"
	if p.Reach(n, m, last).Regression {
		what = "never a pass"
	}
	reps := config.Repetitions{Min: p.Min, Max: p.Max}.String()
	step := fmt.Sprintf("Holm's first step needs p < %.3g (%s)", p.Share()/float64(m), alphaIs)
	if p.Max != p.Min {
		step = fmt.Sprintf("at the last look, %d, Holm's first step needs p < %.3g (%s, spent over %d looks)",
			n, last/float64(m), alphaIs, len(levels))
	}
	msg := fmt.Sprintf("%s %s cannot show a significant difference on %s of %s: %s, and "+test+": every gate would be inconclusive, %s.",
		reps, unit, theGates(m), of, step, n, minP(n), what)
	need := p.needed(p.Max, config.MaxRepetitions, m)
	if need > config.MaxRepetitions {
		return msg + " Gate fewer metrics, or raise compare.alpha"
	}
	if p.Max != p.Min {
		// The range with the same first look and the fewest more at its
		// last that decides: the looks spend alpha, so it may need more
		// than the fixed count.
		for hi := p.Max + 1; hi <= min(config.MaxRepetitions, 4*need); hi++ {
			if p.decides(stat.Looks(p.Min, hi), stat.LookLevels(p.Share(), p.Min, hi), m) {
				return msg + fmt.Sprintf(" Set %s: {min: %d, max: %d} or %s: %d, or gate fewer metrics", key, p.Min, hi, key, need)
			}
		}
	}
	return msg + fmt.Sprintf(" Set %s: %d or more, or gate fewer metrics", key, need)
}

// key is the config key of the policy's counts: repetitions, or ab.rounds
// for an A/B's.
func (p Policy) key() string {
	if p.Design == Rounds {
		return "ab.rounds"
	}
	return "repetitions"
}

// theGates is "the gate" or "the 7 gates".
func theGates(m int) string {
	if m == 1 {
		return "the gate"
	}
	return fmt.Sprintf("the %d gates", m)
}

// Check is cfg's undecidable families under design as config problems,
// located at repetitions (a capacity search's at its
// capacity.repetitions): what perfgate validate refuses (exit 2), perfgate
// ab refuses before it starts anything, and run and gate warn of.
func Check(cfg *config.Config, design Design) []config.Problem {
	p := ConfigPolicy(cfg, design, nil)
	if !(p.Alpha > 0 && p.Alpha < 0.5) {
		return nil // config validation reports it
	}
	var out []config.Problem
	for _, u := range p.Undecidable() {
		path := p.key()
		if u.Capacity {
			path = capacityPath(cfg, u.Families[0].Scenario)
		}
		out = append(out, cfg.ProblemAt(path, "%s", u.Msg))
	}
	return out
}

// Advise is what cfg's families can decide but not well, as config
// warnings: a capacity search under fresh arrivals whose samples are too
// few as pairs for its family's level, so that its gates test them
// unpaired, where the draws spread them and an A/A seldom passes.
func Advise(cfg *config.Config) []config.Problem {
	p := ConfigPolicy(cfg, TwoSamples, nil)
	if !(p.Alpha > 0 && p.Alpha < 0.5) {
		return nil
	}
	var out []config.Problem
	for _, f := range p.Families {
		if !f.Fresh || f.Samples == 0 || !p.Decides(f) || stat.ReachablePairs(f.Samples, f.Gates, p.Share()).Decides() {
			continue
		}
		out = append(out, cfg.ProblemAt(capacityPath(cfg, f.Scenario),
			"%d repetitions give %d capacity samples a side, drawn afresh (load.arrivals: fresh): against a baseline of the same seed they are %d pairs, and Holm's first step needs p < %.3g, below the smallest p of %d pairs, 2^-%d = %.3g; so the capacity gates test them unpaired, where the draws spread them and an A/A seldom passes: set capacity.repetitions: %d or more",
			f.Samples, f.Samples, f.Samples, p.Share()/float64(f.Gates), f.Samples, f.Samples, stat.MinPPairs(f.Samples),
			stat.PairsToDecide(f.Samples, config.MaxRepetitions, f.Gates, p.Share())))
	}
	return out
}

// capacityPath is the field path of the capacity.repetitions of the
// scenario named.
func capacityPath(cfg *config.Config, name string) string {
	for i, s := range cfg.Scenarios {
		if s.Name == name && s.Headroom != nil {
			return fmt.Sprintf("scenarios[%d].headroom.repetitions", i)
		}
		if s.Name == name {
			return fmt.Sprintf("scenarios[%d].capacity.repetitions", i)
		}
	}
	return "repetitions"
}

// Compare compares candidate with the baselines at one look, as perfgate
// compare does (and gate, for a finished run with a fixed repetition
// count): a first comparison finds the scenarios' families, and the
// second tests each at its share of alpha (FromFamilies), Holm within it.
// o.Levels is replaced. The verdict is not marked Sequential: it took no
// looks.
func Compare(baselines []*result.Result, candidate *result.Result, o compare.Options) (*compare.Verdict, error) {
	o.Levels = nil
	probe, err := compare.Compare(baselines, candidate, o)
	if err != nil {
		return nil, err
	}
	o.Alpha = probe.Alpha // resolved from the candidate when unset
	o.Levels = FromFamilies(o.Alpha, compare.FamilySizes(probe)).Levels()
	o.Detectable = true
	v, err := compare.Compare(baselines, candidate, o)
	if err != nil {
		return nil, err
	}
	v.Sequential = false
	return v, nil
}

// Calibrate is compare.Calibrate at the levels the policy gives the
// families its A/A comparisons find: what perfgate compare --aa reports.
func Calibrate(results []*result.Result, alpha float64, gates func(string) []config.Gate) (*compare.Calibration, error) {
	return compare.Calibrate(results, alpha, gates, func(alpha float64, sizes map[string]int) map[string]float64 {
		return FromFamilies(alpha, sizes).Levels()
	})
}
