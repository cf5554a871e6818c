package gate

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// detectOf is the detectability of gate metric of scenario chat, from a
// baseline whose TTFT p99 (and p95, nine tenths of it) are ttftP99.
func detectOf(t *testing.T, gates string, history []baseline.Entry, ttftP99 ...float64) (Detectability, *result.Result) {
	t.Helper()
	cfg, scenarios := setup(t, gates)
	cfg.Repetitions = config.Repetitions{Min: 6, Max: 6}
	cfg.Scenarios[0].Requests = 200
	s := measured(cfg, scenarios[0], ttftP99...)
	for i := range s.Repetitions {
		s.Repetitions[i].TTFT.P95 = 150 * (1 + 0.002*float64(i%3)) // steady
	}
	b := resultOf(s)
	ds := ConfigPolicy(cfg, TwoSamples, func(n string) bool { return n == "chat" }).Detect(cfg, map[string]*result.Result{"chat": b}, history)
	for _, d := range ds {
		if d.Metric == "ttft.p99" {
			return d, b
		}
	}
	t.Fatalf("no detectability of ttft.p99 among %+v", ds)
	return Detectability{}, nil
}

// A gate whose tolerance is within its baseline's noise is not
// confirmable, and says what would confirm it; one well above it is.
func TestDetectability(t *testing.T) {
	noisy := []float64{283, 287, 353, 187, 281, 284} // the README's chat-c8 TTFT p99, one run
	d, _ := detectOf(t, onlyTTFT, nil, noisy...)
	assert.False(t, d.Confirmable)
	assert.True(t, d.Warn())
	assert.False(t, d.Likely(), "at +10% it passes in %.0f%% of runs", 100*d.PassRate)
	assert.InDelta(t, 0.20, d.Noise.Within, 0.03, "the spread of the log values")
	assert.Greater(t, d.Change, 0.3)
	sentence := d.Sentence()
	assert.True(t, strings.HasPrefix(sentence, "TTFT p99 of chat varies ±2"), sentence)
	assert.Contains(t, sentence, "at +10% an unchanged candidate passes in about")
	// Ten times the requests would not do (the noise falls as their
	// square root): the advice is the steadier p95, or the tolerance.
	assert.Equal(t, []string{"ttft.p95", d.niceTolerance()}, d.Advice)

	// Less noisy: more requests a repetition, or more repetitions, would
	// confirm +10%.
	d, _ = detectOf(t, onlyTTFT, nil, 100, 108, 93, 106, 94, 102)
	require.False(t, d.Confirmable, "needs %.3g", d.Change)
	require.Len(t, d.Advice, 4, "%v", d.Advice)
	assert.Regexp(t, `^\d+ requests$`, d.Advice[0], "more requests a repetition come first: %v", d.Advice)
	assert.Regexp(t, `^repetitions: \d+$`, d.Advice[1], "%v", d.Advice)
	assert.Equal(t, []string{"ttft.p95", "+15%"}, d.Advice[2:])

	steady := []float64{100, 101, 99, 100.5, 99.5, 100.2}
	d, _ = detectOf(t, onlyTTFT, nil, steady...)
	assert.True(t, d.Confirmable)
	assert.False(t, d.Warn())
	assert.Empty(t, d.Advice)
	assert.Contains(t, d.Sentence(), "+10% is confirmable")
	assert.Less(t, d.Change, 0.05)
}

// The run-to-run noise comes from history: identical runs (same scenario
// and identity) whose medians vary more than the spread within a run
// explains. Other identities, and fewer than three runs, do not count.
func TestDetectabilityFromHistory(t *testing.T) {
	steady := []float64{100, 101, 99, 100.5, 99.5, 100.2}
	_, b := detectOf(t, onlyTTFT, nil, steady...)
	id := b.Identity.Digest()
	entry := func(identity string, median float64) baseline.Entry {
		return baseline.Entry{Scenario: "chat", Identity: identity, Date: time.Unix(1700000000, 0),
			Metrics: map[string]baseline.Summary{"ttft.p99": {Median: median, N: 6}}}
	}
	var history []baseline.Entry
	for _, m := range []float64{100, 112, 91, 104} {
		history = append(history, entry(id, m), entry("sha256:other", 10*m))
	}
	d, _ := detectOf(t, onlyTTFT, history, steady...)
	assert.Equal(t, 4, d.HistoryRuns)
	assert.InDelta(t, 0.085, d.Noise.Between, 0.02, "the medians' spread, less the within-run part")
	assert.False(t, d.Confirmable, "a ±9%% run-to-run noise against +10%%")
	assert.Contains(t, d.Sentence(), "from run to run (4 identical runs in history)")

	d, _ = detectOf(t, onlyTTFT, history[:4], steady...)
	assert.Equal(t, 2, d.HistoryRuns)
	assert.Zero(t, d.Noise.Between, "two runs are too few")
}

func TestNiceFigures(t *testing.T) {
	for _, tc := range []struct {
		change     float64
		relative   bool
		points     bool
		unit, sign string
		want       string
	}{
		{0.274, true, false, "ms", "+", "+30%"},
		{0.071, true, false, "ms", "+", "+8%"},
		{0.0612, true, false, "tok/s", "-", "-7%"},
		{0.0123, false, true, "%", "+", "+1.3 points"},
		{3.21, false, false, "ms", "+", "+3.3ms"},
		{41.2, false, false, "tok/s", "-", "-42 tok/s"},
	} {
		d := Detectability{Change: tc.change, Noise: stat.Noise{Relative: tc.relative}, Points: tc.points, Unit: tc.unit, Sign: tc.sign}
		assert.Equal(t, tc.want, d.niceTolerance(), "%+v", tc)
	}
	assert.InDelta(t, 1.5, ceilSig(1.41, 2), 1e-12)
	assert.Equal(t, 120, roundUpNice(113))
	assert.Equal(t, 1, roundUpNice(0.2))
	assert.Equal(t, "a, b, or c", orList([]string{"a", "b", "c"}))
	assert.Equal(t, "a or b", orList([]string{"a", "b"}))
	assert.True(t, math.IsNaN(stdDev([]float64{1})))
}

// A prepared gate says, before it measures, what each of its gates can
// confirm against the baseline it read.
func TestGateDetect(t *testing.T) {
	cfg, scenarios := setup(t, onlyTTFT)
	store := baseline.Store{Dir: t.TempDir()}
	promote(t, store, measured(cfg, scenarios[0], 283, 287, 353, 187, 281, 284, 290, 280, 300))
	g, err := Prepare(cfg, scenarios, store, false)
	require.NoError(t, err)
	ds := g.Detect(cfg)
	require.Len(t, ds, 1, "chat's one gate; other has no baseline")
	assert.Equal(t, "ttft.p99", ds[0].Metric)
	assert.True(t, ds[0].Warn(), ds[0].Sentence())
}

// A throughput gate watches a fall: a throughput that varies by more than
// half between repetitions (llama-server on a CPU shared with other work
// read ±63%) cannot be confirmed at any tolerance, and the warning says
// so rather than advise a fall beyond -100%.
func TestDetectabilityOfAFall(t *testing.T) {
	const onlyThroughput = `{ttft.p95: "off", ttft.p99: "off", tpot.p99: "off", e2e.p99: "off", output_throughput: "-5%", goodput: "off", error_rate: "off", cold_start: "off"}`
	detect := func(tput ...float64) Detectability {
		t.Helper()
		cfg, scenarios := setup(t, onlyThroughput)
		cfg.Repetitions = config.Repetitions{Min: 6, Max: 6}
		s := measured(cfg, scenarios[0], 200, 200, 200, 200, 200, 200)
		for i := range s.Repetitions {
			s.Repetitions[i].OutputThroughput = tput[i]
		}
		ds := ConfigPolicy(cfg, TwoSamples, func(n string) bool { return n == "chat" }).Detect(cfg, map[string]*result.Result{"chat": resultOf(s)}, nil)
		require.Len(t, ds, 1)
		return ds[0]
	}
	d := detect(142, 60, 210, 95, 180, 40)
	assert.True(t, math.IsInf(d.Change, 1), "needs %.3g", d.Change)
	assert.True(t, d.Warn())
	assert.Contains(t, d.Sentence(), "no tolerance can be confirmed")
	assert.NotContains(t, d.Sentence(), "-1", "no fall of -100% or more is advised")

	d = detect(100, 101, 99.5, 100.5, 99.8, 100.2)
	assert.Less(t, d.Change, 0.05)
	assert.True(t, d.Confirmable, "needs %.3g", d.Change)
	assert.Contains(t, d.Sentence(), "-5% is confirmable")
}

// A percentile on a cliff of the distribution (init's chat-c8 TTFT p95 at
// 128 requests: the seventh-slowest fell either side of a jump, 163-166 or
// 179-186 ms, while p90 and p99 held within 2%) is steadied by
// another percentile, not by more requests: the advice says so and puts
// the steadier percentile first. A percentile whose noise its neighbours
// share is advised more requests as before.
func TestDetectabilityOfACliff(t *testing.T) {
	detect := func(p95 []float64, p99 func(i int) float64) Detectability {
		cfg, scenarios := setup(t, `{ttft.p95: "+10%", ttft.p99: "off", tpot.p99: "off", e2e.p99: "off", output_throughput: "off", goodput: "off", error_rate: "off", cold_start: "off"}`)
		cfg.Repetitions = config.Repetitions{Min: 4, Max: 12}
		cfg.Scenarios[0].Requests = 128
		s := measured(cfg, scenarios[0], p95...)
		for i := range s.Repetitions {
			s.Repetitions[i].TTFT.P90 = 120 * (1 + 0.01*float64(i%3-1))
			s.Repetitions[i].TTFT.P99 = p99(i)
		}
		ds := ConfigPolicy(cfg, TwoSamples, func(n string) bool { return n == "chat" }).Detect(cfg, map[string]*result.Result{"chat": resultOf(s)}, nil)
		for _, d := range ds {
			if d.Metric == "ttft.p95" {
				return d
			}
		}
		t.Fatalf("no detectability of ttft.p95 among %+v", ds)
		return Detectability{}
	}
	onCliff := []float64{162, 188, 160, 190, 163, 186, 161, 189, 160, 187, 164, 185}
	d := detect(onCliff, func(i int) float64 { return 241 * (1 + 0.005*float64(i%3-1)) })
	require.False(t, d.Confirmable, "needs %.3g", d.Change)
	assert.True(t, d.Cliff)
	require.NotEmpty(t, d.Advice)
	assert.Equal(t, "ttft.p90", d.Advice[0], "%v", d.Advice)
	for _, a := range d.Advice {
		assert.NotRegexp(t, `requests$`, a, "more requests would not steady a cliff: %v", d.Advice)
	}
	assert.Contains(t, d.Sentence(), "it sits where the distribution jumps (ttft.p90 and ttft.p99 hold steadier), so more requests would not steady it: use ttft.p90")

	// The p99 as noisy as the p95: sampling noise, which more requests do steady.
	d = detect(onCliff, func(i int) float64 { return onCliff[i] * 1.4 })
	assert.False(t, d.Cliff)
	assert.Regexp(t, `^\d+ requests$`, d.Advice[0], "%v", d.Advice)
}
