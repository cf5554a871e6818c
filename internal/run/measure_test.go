package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// failingSender answers at once on the fake clock and fails every request
// whose sequence number n (1-based) has n%every == 0 (never when every is 0).
type failingSender struct {
	clk   *fakeClock
	every int64
	n     atomic.Int64
}

func (s *failingSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	n := s.n.Add(1)
	now := s.clk.Now()
	resp := &client.Response{RequestID: id, Sent: now, FirstToken: now.Add(time.Millisecond), End: now.Add(2 * time.Millisecond),
		ChunkTimes: []time.Time{now.Add(time.Millisecond), now.Add(2 * time.Millisecond)}, OutputTokens: 2, TokensFrom: client.TokensFromUsage}
	if s.every > 0 && n%s.every == 0 {
		resp.FirstToken, resp.ChunkTimes, resp.OutputTokens = time.Time{}, nil, 0
		resp.Err = &client.Error{Kind: client.ErrHTTP, Status: 500, Err: errors.New("injected")}
	}
	return resp
}

func TestMeasureErrorRateLimit(t *testing.T) {
	tests := []struct {
		name     string
		every    int64   // fail every n-th request; 0 = none
		max      float64 // max_error_rate
		wantReps int     // repetitions recorded
		broken   bool
	}{
		{"no errors", 0, 0.05, 3, false},
		{"10% errors, limit 5%", 10, 0.05, 1, true},
		{"10% errors, limit 20%", 10, 0.2, 3, false},
		{"all failing, limit 100%", 1, 1, 1, true}, // nothing completed is always broken
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock(0)
			m := &Measurement{
				Dispatcher:  &Dispatcher{Sender: &failingSender{clk: clk, every: tt.every}, Clock: clk},
				Repetitions: config.Repetitions{Min: 3, Max: 3}, Clock: clk, RunID: "t",
			}
			s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: tt.max}, Requests: requests(20)}
			reps, err := m.Measure(context.Background(), s)
			assert.Len(t, reps, tt.wantReps)
			var be *BrokenError
			if !tt.broken {
				require.NoError(t, err)
				return
			}
			require.ErrorAs(t, err, &be)
			assert.Equal(t, 1, be.Repetition)
			assert.Contains(t, err.Error(), "scenario s repetition 1")
			if tt.every == 1 {
				assert.Contains(t, err.Error(), "all 20 requests failed: http ×20; the first: http 500: injected")
			} else {
				assert.Contains(t, err.Error(), "2 of 20 requests failed (10.0%, over max_error_rate 5.0%): http ×2; the first: http 500: injected")
			}
			assert.NotContains(t, err.Error(), "map[", "a sentence, not Go syntax")
		})
	}
}

// The cool-down is an idle pause before every repetition after the first.
func TestMeasureCooldown(t *testing.T) {
	clk := newFakeClock(0)
	m := &Measurement{
		Dispatcher:  &Dispatcher{Sender: &failingSender{clk: clk}, Clock: clk},
		Repetitions: config.Repetitions{Min: 3, Max: 3}, Cooldown: 7 * time.Second, Clock: clk, RunID: "t",
	}
	s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: 0.05}, Requests: requests(4)}
	start := clk.Now()
	reps, err := m.Measure(context.Background(), s)
	require.NoError(t, err)
	require.Len(t, reps, 3)
	for i, r := range reps {
		assert.Equal(t, i+1, r.Index)
	}
	// The instant sender takes no fake time, so all the time that passed is
	// the three cool-downs: before repetition 1 too (after the warm-up).
	assert.Equal(t, 21*time.Second, clk.Now().Sub(start))
}

// A cancelled context ends Measure with the cause (a crashed stack, say).
func TestMeasureCancelledWithCause(t *testing.T) {
	clk := newFakeClock(0)
	crash := errors.New("the stack went down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(crash)
	m := &Measurement{Dispatcher: &Dispatcher{Sender: &failingSender{clk: clk}, Clock: clk}, Repetitions: config.Repetitions{Min: 2, Max: 2}, Clock: clk}
	s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}}, Requests: requests(4)}
	_, err := m.Measure(ctx, s)
	require.ErrorIs(t, err, crash)
}

// A sequential gate measures Min repetitions, then one more each time More
// says so, and never past Max.
func TestMeasureSequential(t *testing.T) {
	tests := []struct {
		name     string
		min, max int
		more     func(n int) bool // given the repetitions so far
		want     int
		asked    []int
	}{
		{"decided at the minimum", 3, 6, func(int) bool { return false }, 3, []int{3}},
		{"one more", 3, 6, func(n int) bool { return n < 4 }, 4, []int{3, 4}},
		{"budget runs out", 3, 6, func(int) bool { return true }, 6, []int{3, 4, 5}},
		{"fixed count never asks", 3, 3, func(int) bool { return true }, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock(0)
			var asked []int
			m := &Measurement{
				Dispatcher:  &Dispatcher{Sender: &failingSender{clk: clk}, Clock: clk},
				Repetitions: config.Repetitions{Min: tt.min, Max: tt.max}, Clock: clk, RunID: "t",
				More: func(reps []result.Repetition) bool {
					asked = append(asked, len(reps))
					for i, r := range reps {
						require.Equal(t, i+1, r.Index)
					}
					return tt.more(len(reps))
				},
			}
			s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: 0.05}, Requests: requests(5)}
			reps, err := m.Measure(context.Background(), s)
			require.NoError(t, err)
			assert.Len(t, reps, tt.want)
			assert.Equal(t, tt.asked, asked)
		})
	}
}

// Prepare keeps exactly the named scenarios (a filter naming the first one
// must not let the later ones through) and refuses an unknown name.
func TestPrepareFilters(t *testing.T) {
	synth := &workload.SynthSpec{Requests: 2, Input: workload.Dist{Type: "fixed", Value: 4}, Output: workload.Dist{Type: "fixed", Value: 4}, API: "chat"}
	cfg := &config.Config{Path: "p.yaml", Scenarios: []config.Scenario{{Name: "a", Synth: synth}, {Name: "b", Synth: synth}, {Name: "c", Synth: synth}}}
	names := func(ss []Scenario) (out []string) {
		for _, s := range ss {
			out = append(out, s.Config.Name)
		}
		return out
	}
	for _, tt := range []struct {
		only, want []string
	}{{nil, []string{"a", "b", "c"}}, {[]string{"a"}, []string{"a"}}, {[]string{"c", "a"}, []string{"a", "c"}}, {[]string{"b"}, []string{"b"}}} {
		got, err := Prepare(cfg, tt.only)
		require.NoError(t, err)
		assert.Equal(t, tt.want, names(got), "only %v", tt.only)
	}
	_, err := Prepare(cfg, []string{"a", "zz"})
	assert.ErrorContains(t, err, `no scenario named "zz" in p.yaml`)
}

// A sweep is prepared as its points: its own name selects them all, a
// point's name that point alone; the points share one workload.
func TestPrepareSweepPoints(t *testing.T) {
	synth := &workload.SynthSpec{Requests: 2, Input: workload.Dist{Type: "fixed", Value: 4}, Output: workload.Dist{Type: "fixed", Value: 4}, API: "chat"}
	cfg := &config.Config{Path: "p.yaml", Scenarios: []config.Scenario{
		{Name: "chat", Synth: synth, Load: config.Load{Type: config.LoadPoisson, Sweep: []float64{0.5, 25}, SweepParam: config.SweepRate}},
		{Name: "b", Synth: synth, Load: config.Load{Type: config.LoadClosed, Concurrency: 1}},
	}}
	names := func(ss []Scenario) (out []string) {
		for _, s := range ss {
			out = append(out, s.Config.Name)
		}
		return out
	}
	for _, tt := range []struct {
		only, want []string
	}{
		{nil, []string{"chat.rate-0.5", "chat.rate-25", "b"}},
		{[]string{"chat"}, []string{"chat.rate-0.5", "chat.rate-25"}},
		{[]string{"chat.rate-25"}, []string{"chat.rate-25"}},
		{[]string{"b", "chat.rate-0.5"}, []string{"chat.rate-0.5", "b"}},
	} {
		got, err := Prepare(cfg, tt.only)
		require.NoError(t, err)
		assert.Equal(t, tt.want, names(got), "Prepare(only %v)", tt.only)
	}
	all, err := Prepare(cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, 25.0, all[1].Config.Load.Rate)
	assert.Equal(t, &config.SweepPoint{Of: "chat", Param: config.SweepRate, Value: 25, Index: 1, Points: 2}, all[1].Config.Point)
	assert.Equal(t, all[0].WorkloadHash, all[1].WorkloadHash)
	assert.Len(t, all[1].Requests, 2)
	_, err = Prepare(cfg, []string{"chat.rate-3"})
	assert.ErrorContains(t, err, `no scenario named "chat.rate-3" in p.yaml`)
}

// Observe brackets every repetition: begun before its first request, ended
// with its own summary, and ended with nil when the repetition fails.
func TestMeasureObserve(t *testing.T) {
	clk := newFakeClock(0)
	sender := &failingSender{clk: clk}
	var begun, ended []int
	var sentAtBegin []int64
	m := &Measurement{
		Dispatcher:  &Dispatcher{Sender: sender, Clock: clk},
		Repetitions: config.Repetitions{Min: 3, Max: 3}, Clock: clk, RunID: "t",
		Observe: func(ctx context.Context) func(*result.Repetition) {
			begun = append(begun, len(begun)+1)
			sentAtBegin = append(sentAtBegin, sender.n.Load())
			return func(rep *result.Repetition) {
				if rep == nil {
					ended = append(ended, -1)
					return
				}
				ended = append(ended, rep.Index)
				rep.Engine = &result.EngineTelemetry{Adapter: "test", Scrapes: rep.Index}
			}
		},
	}
	s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: 0.05}, Requests: requests(5)}
	reps, err := m.Measure(context.Background(), s)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, begun)
	assert.Equal(t, []int{1, 2, 3}, ended)
	assert.Equal(t, []int64{0, 5, 10}, sentAtBegin, "each window begins before its repetition's first request")
	for i, r := range reps {
		require.NotNil(t, r.Engine, "repetition %d keeps what the observer added", i+1)
		assert.Equal(t, i+1, r.Engine.Scrapes)
	}

	// A repetition cut short by cancellation ends its window with nil.
	begun, ended = nil, nil
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("stack crashed"))
	_, err = m.Measure(ctx, s)
	require.Error(t, err)
	assert.Equal(t, []int{1}, begun)
	assert.Equal(t, []int{-1}, ended)
}

// A think time on a workload without sessions would never apply: Prepare
// refuses it, naming the scenario and the workload.
func TestPrepareRefusesThinkTimeWithoutSessions(t *testing.T) {
	synth := &workload.SynthSpec{Requests: 2, Input: workload.Dist{Type: "fixed", Value: 4}, Output: workload.Dist{Type: "fixed", Value: 4}, API: "chat"}
	cfg := &config.Config{Path: "p.yaml", Scenarios: []config.Scenario{{Name: "a", Synth: synth, Load: config.Load{Type: config.LoadClosed, Concurrency: 1, ThinkTime: "fixed:100"}}}}
	_, err := Prepare(cfg, nil)
	assert.EqualError(t, err, "scenario a: load.think_time is set, but workload synth has no sessions (no line has a session_id), so no turn would ever wait it: remove it, or import the workload with sessions")

	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"session_id":"s","turn":1,"messages":[{"role":"user","content":"Hi"}],"max_tokens":4}`+"\n"), 0o644))
	cfg.Scenarios[0].Synth, cfg.Scenarios[0].Workload = nil, path
	_, err = Prepare(cfg, nil)
	assert.NoError(t, err, "Prepare(think_time with a session workload)")
}

// Every repetition of an open loop replays one seeded schedule by default
// (load.arrivals: same), so that the spread between repetitions is the
// server's; load.arrivals: fresh draws each repetition's own. Either way a
// run with the same seed draws the same schedules.
func TestMeasureArrivals(t *testing.T) {
	schedules := func(arrivals string, seed int64) [][]int64 {
		clk := newFakeClock(0)
		got := make([][]int64, 3) // each repetition's scheduled sends, from its start
		m := &Measurement{
			Dispatcher:  &Dispatcher{Sender: &failingSender{clk: clk}, Clock: clk},
			Repetitions: config.Repetitions{Min: 3, Max: 3}, Clock: clk, RunID: "t", Seed: seed,
			OnRecord: func(r *result.Record) {
				got[r.Repetition-1] = append(got[r.Repetition-1], r.ScheduledNS)
			},
		}
		s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadPoisson, Rate: 10, Arrivals: arrivals}, MaxErrorRate: 0.05},
			Requests: requests(20)}
		_, err := m.Measure(context.Background(), s)
		require.NoError(t, err)
		for _, g := range got {
			require.Len(t, g, 20)
			slices.Sort(g)
		}
		return got
	}
	same := schedules("", 1)
	assert.Equal(t, same[0], same[1], "repetition 2 replays repetition 1's arrivals")
	assert.Equal(t, same[0], same[2])
	assert.Equal(t, same, schedules(config.ArrivalsSame, 1), "same is the default")
	assert.NotEqual(t, same[0], schedules("", 2)[0], "another seed, another schedule")

	fresh := schedules(config.ArrivalsFresh, 1)
	assert.Equal(t, same[0], fresh[0], "repetition 1 draws the same either way")
	assert.NotEqual(t, fresh[0], fresh[1], "fresh: each repetition its own")
	assert.NotEqual(t, fresh[1], fresh[2])
	assert.Equal(t, fresh, schedules(config.ArrivalsFresh, 1), "and the same draws in every run with the seed")
}

// A repetition whose every answer was a wrong structured answer has nothing
// left to time: it is broken (exit 3), saying so, never a repetition of
// zero latencies. One right answer among them is measured.
func TestMeasureAllAnswersWrong(t *testing.T) {
	for _, right := range []int{0, 1} {
		clk := newFakeClock(0)
		m := &Measurement{
			Dispatcher:  &Dispatcher{Sender: &failingSender{clk: clk}, Clock: clk},
			Repetitions: config.Repetitions{Min: 1, Max: 1}, Clock: clk, RunID: "t",
		}
		reqs := requests(6)
		for i := range reqs {
			reqs[i].ID = fmt.Sprintf("j%d", i)
			if i >= right {
				reqs[i].ResponseFormat = json.RawMessage(`{"type":"json_object"}`) // the sender answers no JSON
			}
		}
		s := Scenario{Config: config.Scenario{Name: "s", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: 0.05}, Requests: reqs}
		reps, err := m.Measure(context.Background(), s)
		if right > 0 {
			require.NoError(t, err)
			require.Len(t, reps, 1)
			assert.Equal(t, 5, reps[0].StructuredErrors)
			continue
		}
		var be *BrokenError
		require.ErrorAs(t, err, &be)
		assert.Contains(t, err.Error(), "scenario s repetition 1: all 6 answers were wrong (not the JSON or the tool call their requests asked for), so no latency could be measured; the first: j0: not JSON")
	}
}
