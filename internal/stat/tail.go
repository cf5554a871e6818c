package stat

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/aclements/go-moremath/mathx"
)

// The tail test: a request-level test of a latency percentile, with the
// repetitions as the units.
//
// A per-repetition gate (ttft.p99) sees one value per repetition, that
// repetition's p99, and throws the rest of its requests away. The tail test
// asks of every request: what share of the candidate's requests lies beyond
// the baseline's pooled q-quantile (the baseline's p99 over all its
// requests)? A candidate like the baseline puts about 1−q of them there; a
// candidate with rare stalls puts many more.
//
// Requests are not independent (a stall delays every request in flight at
// once), so the test does not count them as independent draws: it permutes
// whole repetitions. For every split of the repetitions into a
// pseudo-baseline and a pseudo-candidate it takes the pseudo-baseline's
// pooled q-quantile as the threshold and, as the statistic, the
// pseudo-candidate's pooled share of requests beyond it. Under the null
// hypothesis at the tolerance boundary (the candidate is the baseline
// scaled by 1+tolerance), the candidate's repetitions scaled back are
// exchangeable with the baseline's, so the permutation p-value of any
// statistic of the split, this one included, over every split is exact
// whatever the correlation within a repetition.

// Bar is one value of a repetition's distribution of request values and how
// many requests had it (a histogram's bucket).
type Bar struct {
	Value float64
	Count int64
}

// TailGate is one tail test's input: each repetition's distribution of
// request values (in the tolerance's unit, milliseconds for latency) on
// both sides, the quantile q, and how much worse the candidate may be.
// Latency is lower-is-better: a larger value is worse.
type TailGate struct {
	// Baseline and Candidate hold one distribution per repetition, its bars
	// in any order (TailDecision sorts copies). A bar of count 0 is ignored.
	Baseline, Candidate [][]Bar
	// Quantile is q in (0, 1): 0.99 tests the share beyond the baseline's
	// pooled p99, expected 1−q = 1%.
	Quantile float64
	// Relative is true when Tolerance is a fraction: the candidate's values
	// are divided by 1+Tolerance before the test. Otherwise Tolerance is in
	// the values' unit and is subtracted.
	Relative bool
	// Tolerance is how much worse the candidate may be, a magnitude >= 0.
	Tolerance float64
	// Seed seeds the Monte Carlo splits when there are more than
	// TailExactSplits; a fixed seed makes the verdict reproducible.
	Seed uint64
}

// TailExactSplits is the most splits the tail test enumerates; with more it
// draws this many at random (and the p-value is (b+1)/(B+1)).
const TailExactSplits = 20000

// TailDecision is one tail test's outcome and evidence.
type TailDecision struct {
	Outcome Outcome
	// P is the permutation p-value of "the candidate has more requests
	// beyond the baseline's quantile than an exchangeable one would": the
	// share of splits whose statistic (the pseudo-candidate's pooled share
	// beyond the pseudo-baseline's quantile) is at least the observed one.
	// NaN when the gate could not be tested.
	P float64
	// PLower is the mirror: the share of splits whose statistic is at most
	// the observed one, the evidence for a pass.
	PLower float64
	// PAdjusted is P after Holm over the family; Level what it is compared
	// with.
	PAdjusted, Level float64
	// Expected is 1−q, the share beyond a quantile q of like data.
	Expected float64
	// Threshold is the baseline's pooled q-quantile, in the values' unit.
	Threshold float64
	// Share is the candidate's pooled share of requests beyond Threshold,
	// as measured; AdjustedShare is after the tolerance (the statistic).
	Share, AdjustedShare float64
	// BaselineShares and CandidateShares are each repetition's share of
	// requests beyond Threshold (the candidate's as measured): the
	// baseline's give the statistic's scale.
	BaselineShares, CandidateShares []float64
	// Splits is how many splits of the repetitions the p-value counts over;
	// Exact is false when they were drawn at random.
	Splits int
	Exact  bool
	// Reason is one short line saying why this outcome.
	Reason string
	// Warnings are what the user can do about an inconclusive or fragile
	// outcome.
	Warnings []string
}

// MinP is the smallest p-value the test could have given: 1/Splits when
// exact, 1/(Splits+1) when drawn. NaN when untested.
func (d TailDecision) MinP() float64 {
	switch {
	case d.Splits == 0:
		return math.NaN()
	case d.Exact:
		return 1 / float64(d.Splits)
	}
	return 1 / float64(d.Splits+1)
}

// DecideWithTails decides latency, quality and tail gates as one family at
// level: every p-value goes through one Holm adjustment over m = len(gates)
// + len(paired) + len(tails), so the chance that any gate of the family is a
// false regression is at most level. The gates and quality gates are
// decided as DecideAll decides them (with m counting the tail gates too).
// A tail gate is:
//
//   - regression when PAdjusted < level and the adjusted share beyond the
//     baseline's quantile is above 1−q;
//   - inconclusive when no regression could have been detected at all
//     (MinP·m >= level: too few repetitions);
//   - pass when the mirror test rejects: PLower < level, the adjusted
//     candidate has significantly fewer requests beyond the baseline's
//     quantile than an exchangeable one would, so its tail is within the
//     tolerance at one-sided confidence 1−level (as a latency gate's pass
//     uses its interval's one-sided bound, not Holm's adjustment);
//   - inconclusive otherwise.
//
// A tail gate with no repetitions on a side, a repetition with no requests,
// a value that is not finite, a negative count, a quantile outside (0, 1),
// or a negative or NaN tolerance is inconclusive with a warning, never a
// pass; it still counts in the family. DecideWithTails never panics.
func DecideWithTails(gates []Gate, paired []PairedGate, tails []TailGate, level float64) ([]Decision, []PairedDecision, []TailDecision) {
	return decideFamily(gates, paired, tails, level, false)
}

// testTail runs the permutation test of g, filling d's evidence, and
// returns P (NaN when g cannot be tested: then d is decided).
func testTail(d *TailDecision, g TailGate, level float64) float64 {
	nan := math.NaN()
	d.P, d.PLower, d.PAdjusted, d.Level = nan, nan, nan, level
	d.Expected, d.Threshold, d.Share, d.AdjustedShare = 1-g.Quantile, nan, nan, nan
	if reason, warning := tailUntestable(g, level); reason != "" {
		d.Outcome, d.Reason, d.Warnings = Inconclusive, reason, []string{warning}
		if !(g.Quantile > 0 && g.Quantile < 1) {
			d.Expected = nan
		}
		return nan
	}
	kb := len(g.Baseline)
	adjust := func(v float64) float64 {
		if g.Relative {
			return v / (1 + g.Tolerance)
		}
		return v - g.Tolerance
	}
	clusters := make([][]Bar, 0, kb+len(g.Candidate))
	for _, r := range g.Baseline {
		clusters = append(clusters, r)
	}
	for _, r := range g.Candidate {
		adj := make([]Bar, len(r))
		for i, b := range r {
			adj[i] = Bar{Value: adjust(b.Value), Count: b.Count}
		}
		clusters = append(clusters, adj)
	}
	t := newTailTable(clusters, g.Quantile)
	obs := make([]bool, len(clusters)) // true: in the pseudo-baseline
	for i := range kb {
		obs[i] = true
	}
	j := t.threshold(obs)
	beyond, total := t.pooledBeyond(obs, j)
	d.Threshold = t.grid[j]
	d.AdjustedShare = float64(beyond) / float64(total)
	d.BaselineShares = make([]float64, kb)
	for i := range kb {
		d.BaselineShares[i] = float64(t.beyond(i, j)) / float64(t.total[i])
	}
	var sum, over int64
	d.CandidateShares = make([]float64, len(g.Candidate))
	for i, r := range g.Candidate {
		var n, o int64
		for _, b := range r {
			n += b.Count
			if b.Value > d.Threshold {
				o += b.Count
			}
		}
		d.CandidateShares[i] = float64(o) / float64(n)
		sum, over = sum+n, over+o
	}
	d.Share = float64(over) / float64(sum)

	// Count the splits whose statistic is at least (ge) and at most (le)
	// the observed one, comparing beyond/total ratios exactly.
	ge, le := 0, 0
	count := func(in []bool) {
		b, n := t.pooledBeyond(in, t.threshold(in))
		s := compareFractions(uint64(b), uint64(n), uint64(beyond), uint64(total))
		if s >= 0 {
			ge++
		}
		if s <= 0 {
			le++
		}
	}
	n := len(clusters)
	if splits := mathx.Choose(n, kb); splits <= TailExactSplits {
		d.Exact, d.Splits = true, int(splits)
		forEachSplit(n, kb, count)
		d.P, d.PLower = float64(ge)/float64(d.Splits), float64(le)/float64(d.Splits)
	} else {
		d.Splits = TailExactSplits
		r := rand.New(rand.NewPCG(g.Seed, 0x7a11))
		perm := make([]int, n)
		in := make([]bool, n)
		for range TailExactSplits {
			for i := range perm {
				perm[i] = i
			}
			clear(in)
			for i := range kb { // a partial Fisher-Yates shuffle
				k := i + r.IntN(n-i)
				perm[i], perm[k] = perm[k], perm[i]
				in[perm[i]] = true
			}
			count(in)
		}
		d.P = float64(ge+1) / float64(TailExactSplits+1)
		d.PLower = float64(le+1) / float64(TailExactSplits+1)
	}
	if few := float64(t.baseN) * (1 - g.Quantile); few < TailMinBeyond {
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"the baseline has %d requests, so about %.3g beyond its p%s: the tail test has little to see; longer repetitions give it more",
			t.baseN, few, percentileName(g.Quantile)))
	}
	return d.P
}

// TailMinBeyond is how many of the baseline's requests a tail test wants
// beyond its quantile (requests × (1−q)); with fewer it warns that it has
// little to see. Below it the statistic is mostly ties at 0 and a pass is
// out of reach, so a caller may leave such a gate out rather than leave it
// inconclusive.
const TailMinBeyond = 10

// tailUntestable returns why g cannot be tested at level, and a warning
// saying so; "" when it can be.
func tailUntestable(g TailGate, level float64) (reason, warning string) {
	switch {
	case !(level > 0 && level < 0.5):
		return "invalid level", fmt.Sprintf("level %g is not in (0, 0.5): no gate can be decided", level)
	case !(g.Quantile > 0 && g.Quantile < 1):
		return "invalid quantile", fmt.Sprintf("quantile %g is not in (0, 1): the tail test cannot be decided", g.Quantile)
	case !(g.Tolerance >= 0) || math.IsInf(g.Tolerance, 0):
		return "invalid tolerance", fmt.Sprintf("tolerance %g is not a finite magnitude >= 0: the gate cannot be decided", g.Tolerance)
	case len(g.Baseline) == 0:
		return "no baseline repetitions", "the baseline has no repetitions with request values: the tail test cannot be decided"
	case len(g.Candidate) == 0:
		return "no candidate repetitions", "the candidate has no repetitions with request values: the tail test cannot be decided"
	}
	var pooled int64 // every repetition's requests: any split's pool is at most this
	for _, side := range []struct {
		name string
		reps [][]Bar
	}{{"baseline", g.Baseline}, {"candidate", g.Candidate}} {
		for i, r := range side.reps {
			var n int64
			for _, b := range r {
				if notFinite(b.Value) || b.Count < 0 {
					return "a " + side.name + " value is not a number",
						fmt.Sprintf("the %s's repetition %d holds a value that is not finite or a negative count: the tail test cannot be decided", side.name, i+1)
				}
				if n += b.Count; n < 0 {
					return "a " + side.name + " count overflows",
						fmt.Sprintf("the %s's repetition %d counts more requests than can be added: the tail test cannot be decided", side.name, i+1)
				}
			}
			if n == 0 {
				return "a " + side.name + " repetition has no requests",
					fmt.Sprintf("the %s's repetition %d has no request values: the tail test cannot be decided", side.name, i+1)
			}
			if pooled += n; pooled < 0 {
				return "a " + side.name + " count overflows",
					fmt.Sprintf("the repetitions up to the %s's repetition %d count more requests than can be added: the tail test cannot be decided", side.name, i+1)
			}
		}
	}
	return "", ""
}

// tailTable is every repetition's cumulative count on one grid of values,
// so that a split's pooled quantile and the counts beyond it are a binary
// search and a few sums.
type tailTable struct {
	q    float64
	grid []float64 // every distinct value, ascending
	// cum[i][j] is how many of repetition i's requests are <= grid[j];
	// total[i] is its requests.
	cum   [][]int64
	total []int64
	baseN int64 // the first split's pseudo-baseline size, for warnings
}

func newTailTable(clusters [][]Bar, q float64) *tailTable {
	t := &tailTable{q: q, cum: make([][]int64, len(clusters)), total: make([]int64, len(clusters))}
	var all []float64
	sorted := make([][]Bar, len(clusters))
	for i, c := range clusters {
		s := slices.DeleteFunc(slices.Clone(c), func(b Bar) bool { return b.Count == 0 })
		slices.SortFunc(s, func(a, b Bar) int { return cmp.Compare(a.Value, b.Value) })
		sorted[i] = s
		for _, b := range s {
			all = append(all, b.Value)
		}
	}
	slices.Sort(all)
	t.grid = slices.Compact(all)
	for i, s := range sorted {
		cum := make([]int64, len(t.grid))
		var run int64
		k := 0
		for j, v := range t.grid {
			for k < len(s) && s[k].Value <= v {
				run += s[k].Count
				k++
			}
			cum[j] = run
		}
		t.cum[i], t.total[i] = cum, run
	}
	return t
}

// threshold is, for the split in (true: the pseudo-baseline), the grid
// index of the pseudo-baseline's pooled q-quantile: the smallest value with
// at least ⌈q·N⌉ of its N requests at or below it.
func (t *tailTable) threshold(in []bool) int {
	var nb int64
	for i, b := range in {
		if b {
			nb += t.total[i]
		}
	}
	if t.baseN == 0 {
		t.baseN = nb
	}
	rank := max(1, min(nb, int64(math.Ceil(t.q*float64(nb)-1e-9))))
	lo, hi := 0, len(t.grid)-1
	for lo < hi {
		mid := (lo + hi) / 2
		var c int64
		for i, b := range in {
			if b {
				c += t.cum[i][mid]
			}
		}
		if c >= rank {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// beyond is how many of repetition i's requests lie beyond grid[j].
func (t *tailTable) beyond(i, j int) int64 {
	return t.total[i] - t.cum[i][j]
}

// pooledBeyond is the test's statistic for the split in (true: the
// pseudo-baseline) at the threshold grid[j], as a fraction: how many of the
// pseudo-candidate's requests lie beyond it, and how many it has in all.
// tailUntestable has checked that every repetition's requests together fit
// in an int64, so neither sum overflows.
func (t *tailTable) pooledBeyond(in []bool, j int) (beyond, total int64) {
	for i, b := range in {
		if !b {
			beyond += t.beyond(i, j)
			total += t.total[i]
		}
	}
	return beyond, total
}

// compareFractions compares a/b with c/d for counts with b, d > 0, exactly:
// the cross products a·d and c·b are compared as 128-bit numbers, so that
// no count, however large, overflows.
func compareFractions(a, b, c, d uint64) int {
	hi1, lo1 := bits.Mul64(a, d)
	hi2, lo2 := bits.Mul64(c, b)
	if c := cmp.Compare(hi1, hi2); c != 0 {
		return c
	}
	return cmp.Compare(lo1, lo2)
}

// forEachSplit calls f with every way of choosing k of n items, in[i] true
// for the chosen ones (lexicographic order of the chosen indices). The
// slice is reused between calls.
func forEachSplit(n, k int, f func(in []bool)) {
	if k < 0 || k > n {
		return
	}
	idx := make([]int, k)
	in := make([]bool, n)
	for i := range idx {
		idx[i] = i
		in[i] = true
	}
	for {
		f(in)
		// The rightmost index that can still move right.
		i := k - 1
		for i >= 0 && idx[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		in[idx[i]] = false
		idx[i]++
		in[idx[i]] = true
		for l := i + 1; l < k; l++ {
			in[idx[l]] = false
			idx[l] = idx[l-1] + 1
			in[idx[l]] = true
		}
	}
}

// classifyTail sets d's Outcome, Reason and Warnings from its P, PLower and
// PAdjusted; m is the family's size, tol the tolerance as the reasons write
// it ("×1.15", "+5 ms").
func classifyTail(d *TailDecision, g TailGate, level float64, m int) {
	pct := "p" + percentileName(g.Quantile)
	adj := "beyond the baseline's " + pct
	switch {
	case g.Relative && g.Tolerance > 0:
		adj += " ×" + strconv.FormatFloat(1+g.Tolerance, 'g', 4, 64)
	case !g.Relative && g.Tolerance > 0:
		adj += " +" + strconv.FormatFloat(g.Tolerance, 'g', 4, 64)
	}
	share := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }
	expected := strconv.FormatFloat(100*d.Expected, 'g', 4, 64) + "%"

	needDetect := 0
	if d.MinP()*float64(m) >= level {
		needDetect = SamplesToReach(level / float64(m))
		over := ""
		if m > 1 {
			over = fmt.Sprintf(" (alpha %.3g over %d gates)", level, m)
		}
		d.Warnings = append(d.Warnings, fmt.Sprintf(
			"need >= %d repetitions a side for the tail test to detect a regression at level %.3g%s",
			needDetect, level/float64(m), over))
	}
	significant := d.PAdjusted < level
	above := d.AdjustedShare > d.Expected
	switch {
	case significant && above:
		d.Outcome = Regression
		d.Reason = "significant (p=" + pval(d.PAdjusted) + "): " + share(d.AdjustedShare) + " of the candidate's requests " + adj +
			", expected " + expected
	case needDetect > 0:
		d.Outcome = Inconclusive
		d.Reason = fmt.Sprintf("too few repetitions: need >= %d a side", needDetect)
	case d.PLower < level:
		d.Outcome = Pass
		d.Reason = share(d.AdjustedShare) + " of the candidate's requests " + adj + ", significantly fewer than " + expected +
			" (p=" + pval(d.PLower) + ")"
	default:
		d.Outcome = Inconclusive
		d.Reason = share(d.AdjustedShare) + " of the candidate's requests " + adj + ", expected " + expected +
			": neither significantly more (p=" + pval(d.PAdjusted) + ") nor fewer (p=" + pval(d.PLower) + ")"
	}
}

// percentileName writes a quantile as a percentile's name: 0.99 → "99",
// 0.999 → "99.9".
func percentileName(q float64) string {
	return strconv.FormatFloat(100*q, 'g', 6, 64)
}
