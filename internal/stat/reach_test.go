package stat

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Reachable runs Decide on extreme data; its answers must be the closed
// forms Decide's rules imply: a regression needs MinP(n1, n2)·m < level, a
// pass that and a finite interval at 1 − 2·level.
func TestReachableMatchesTheRules(t *testing.T) {
	for _, level := range []float64{0.05, 0.025, 0.0155, 0.00317, 0.001} {
		for m := 1; m <= 20; m++ {
			for n1 := 1; n1 <= 12; n1++ {
				for _, n2 := range []int{n1, n1 + 1} {
					regression := MinP(n1, n2)*float64(m) < level
					_, _, interval := cutoff(n1, n2, 1-2*level)
					want := Reach{Regression: regression, Pass: regression && interval}
					assert.Equal(t, want, Reachable(n1, n2, m, level), "Reachable(%d, %d, %d, %g)", n1, n2, m, level)
				}
			}
		}
	}
	assert.Equal(t, Reach{}, Reachable(0, 5, 7, 0.05), "an empty side")
	assert.Equal(t, Reach{}, Reachable(6, 6, 0, 0.05), "no gates")
	assert.Equal(t, Reach{}, Reachable(6, 6, 7, 0), "an invalid level")
}

// The README's example before issue 22: two scenarios of seven gates, 5
// repetitions, alpha 0.05 split between the scenarios. 1/252·7 is over
// 0.025: neither outcome is within reach, and 6 a side decide.
func TestReachableREADMEShape(t *testing.T) {
	assert.Equal(t, Reach{}, Reachable(5, 5, 7, 0.025))
	assert.True(t, Reachable(6, 6, 7, 0.025).Decides())
	assert.Equal(t, 6, SamplesToDecide(5, 1000, 7, 0.025))
	assert.Equal(t, 6, SamplesToDecide(1, 1000, 7, 0.025))
	assert.Equal(t, 9, SamplesToDecide(9, 1000, 7, 0.025), "from decides already")
}

func TestSamplesToDecide(t *testing.T) {
	for _, level := range []float64{0.05, 0.01, 1e-4} {
		for _, m := range []int{1, 7, 50} {
			n := SamplesToDecide(1, 1000, m, level)
			assert.True(t, Reachable(n, n, m, level).Decides(), "m %d level %g: %d", m, level, n)
			assert.False(t, Reachable(n-1, n-1, m, level).Decides(), "m %d level %g: %d", m, level, n-1)
		}
	}
	assert.Equal(t, 11, SamplesToDecide(1, 10, 7, 1e-12), "none within the limit")
	assert.Equal(t, 11, SamplesToDecide(12, 10, 7, 0.05), "from past the limit")
}

func TestLooksAndLevels(t *testing.T) {
	assert.Equal(t, []int{6}, Looks(6, 6))
	assert.Equal(t, []int{6, 8, 10, 12}, Looks(6, 12))
	assert.Equal(t, []int{5, 7, 9, 10}, Looks(5, 10))
	assert.Equal(t, []float64{0.025}, LookLevels(0.025, 6, 6))
	levels := LookLevels(0.025, 6, 12)
	assert.Len(t, levels, 4)
	sum := 0.0
	for _, l := range levels {
		sum += l
	}
	assert.InDelta(t, 0.025, sum, 1e-12, "the looks spend the whole share")
	assert.InDelta(t, Spend(0.025, 0.5), levels[0], 1e-15)
}

// ReachablePairs runs Decide on extreme pairs; its answers must be the
// closed forms of the signed-rank rules: a regression needs 2^−n·m <
// level, a pass that and a finite Walsh-average interval at 1 − 2·level.
func TestReachablePairsMatchesTheRules(t *testing.T) {
	for _, level := range []float64{0.05, 0.025, 0.0167, 0.01, 0.001} {
		for m := 1; m <= 8; m++ {
			for n := 1; n <= 14; n++ {
				regression := math.Ldexp(1, -n)*float64(m) < level
				_, _, interval := signedRankCutoff(n, 1-2*level)
				want := Reach{Regression: regression, Pass: regression && interval}
				assert.Equal(t, want, ReachablePairs(n, m, level), "ReachablePairs(%d, %d, %g)", n, m, level)
			}
		}
	}
	assert.Equal(t, Reach{}, ReachablePairs(0, 1, 0.05), "no pairs")
	assert.Equal(t, Reach{}, ReachablePairs(6, 0, 0.05), "no gates")
	assert.Equal(t, Reach{}, ReachablePairs(6, 1, 0), "an invalid level")
}

// The capacity figures of docs/gating.md: 5 pairs decide one gate at
// 0.05 (1/32 < 0.05) but not two (2/32), nor one at half the alpha; 6
// pairs decide up to 3 gates at 0.05. The U test decides with fewer
// samples a side than the pairs need.
func TestPairsToDecide(t *testing.T) {
	for _, c := range []struct {
		m     int
		level float64
		want  int
	}{
		{1, 0.05, 5}, {2, 0.05, 6}, {3, 0.05, 6}, {4, 0.05, 7},
		{1, 0.025, 6}, {2, 0.025, 7}, {1, 0.05 / 3, 6}, {1, 0.01, 7},
	} {
		n := PairsToDecide(1, 1000, c.m, c.level)
		assert.Equal(t, c.want, n, "m %d level %g", c.m, c.level)
		assert.True(t, ReachablePairs(n, c.m, c.level).Decides())
		assert.False(t, ReachablePairs(n-1, c.m, c.level).Decides())
		assert.LessOrEqual(t, SamplesToDecide(1, 1000, c.m, c.level), n, "m %d level %g", c.m, c.level)
	}
	assert.Equal(t, 11, PairsToDecide(1, 10, 1, 1e-12), "none within the limit")
	assert.Equal(t, 9, PairsToDecide(9, 1000, 1, 0.05), "from decides already")
}
