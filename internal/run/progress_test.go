package run

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// The progress line of a repetition mentions sessions when it has any.
func TestProgressMentionsSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sessions int
		want     string
	}{
		{"no sessions", 0, "chat rep 1/3  4/4 requests  "},
		{"sessions", 2, "chat rep 1/3  4/4 requests  2 sessions  "},
	} {
		var out bytes.Buffer
		p := NewProgress(&out, false)
		p.Begin("chat rep 1/3", 4)
		for range 4 {
			p.Add(true)
		}
		for range tc.sessions {
			p.AddSession()
		}
		p.End()
		if got := out.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("progress line (%s) = %q, want it to start %q", tc.name, got, tc.want)
		}
	}
}

// stepSender answers each request at once and then moves the fake clock
// on by step: a server that takes step a request, one at a time.
type stepSender struct {
	clk  *fakeClock
	step time.Duration
}

func (s *stepSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	now := s.clk.Now()
	s.clk.advance(s.step)
	end := s.clk.Now()
	return &client.Response{RequestID: id, Sent: now, FirstToken: now.Add(s.step / 2), End: end,
		ChunkTimes: []time.Time{now.Add(s.step / 2), end}, OutputTokens: 2, TokensFrom: client.TokensFromUsage}
}

// Measure's progress lines say the scenario k of N, the repetition r of R
// and the time left of the scenario, and its summary line what it
// measured; nothing but whole lines reach a log that is no terminal.
func TestProgressScenarioRepetitionETA(t *testing.T) {
	clk := newFakeClock(0)
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.Clock, p.interval = clk, time.Hour // only the lines that end repetitions
	m := &Measurement{
		Dispatcher:  &Dispatcher{Sender: &stepSender{clk: clk, step: time.Second}, Clock: clk},
		Repetitions: config.Repetitions{Min: 3, Max: 3}, Cooldown: 2 * time.Second, Clock: clk, RunID: "t", Progress: p,
	}
	s := Scenario{Config: config.Scenario{Name: "chat-c1", Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, MaxErrorRate: 0.05}, Requests: requests(4)}
	p.Scenario("chat-c1", 1, 2)
	reps, err := m.Measure(context.Background(), s)
	require.NoError(t, err)
	p.ScenarioDone(&result.ScenarioResult{Name: "chat-c1", Repetitions: reps})

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 4, "a line per repetition and the summary:\n%s", out.String())
	// Each repetition takes 4 s and a 2 s cool-down precedes the next.
	for i, want := range []string{
		"chat-c1 repetition 1 of 3 (scenario 1 of 2)  4/4 requests  1.0 req/s  0 errors  4s  ETA ~12s",
		"chat-c1 repetition 2 of 3 (scenario 1 of 2)  4/4 requests  1.0 req/s  0 errors  4s  ETA ~6s",
		"chat-c1 repetition 3 of 3 (scenario 1 of 2)  4/4 requests  1.0 req/s  0 errors  4s  ETA ~0s",
	} {
		assert.Equal(t, want, lines[i])
	}
	assert.Equal(t, "chat-c1 done in 18s: 3 repetitions, 12 requests, 0 errors, TTFT p99 500 ms, 2 tok/s", lines[3])
	assert.NotContains(t, out.String(), "\r")
}

// Mid-repetition, the estimate runs at the rate so far; once a scenario
// has finished, the rest of the run is estimated from it too.
func TestProgressETAMidRepetition(t *testing.T) {
	clk := newFakeClock(0)
	var out bytes.Buffer
	p := NewProgress(&out, false)
	p.Clock, p.interval = clk, time.Hour

	p.Scenario("a", 1, 3)
	clk.advance(30 * time.Second) // its warm-up and measurement
	p.ScenarioDone(&result.ScenarioResult{Name: "a"})

	p.Scenario("b", 2, 3)
	p.repetition(1, 2, 0)
	p.begin("b repetition 1 of 2", 100, 0)
	for range 25 {
		p.Add(true)
	}
	p.Add(false)
	clk.advance(13 * time.Second)
	p.print(false)
	p.End()

	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Equal(t, "a done in 30s", lines[0])
	// 26 of 100 in 13 s: 37 s left of this repetition, 50 s for the next, and
	// a scenario of 30 s after this one.
	assert.Equal(t, "b repetition 1 of 2 (scenario 2 of 3)  26/100 requests  2.0 req/s  1 errors  13s  ETA ~1m27s, run ~1m57s", lines[1])

	// A repetition bounded by time counts down its duration.
	out.Reset()
	q := NewProgress(&out, false)
	q.Clock, q.interval = clk, time.Hour
	q.begin("c", -1, time.Minute)
	clk.advance(20 * time.Second)
	q.print(false)
	q.End()
	assert.Contains(t, out.String(), "0/? requests  0.0 req/s  0 errors  20s  ETA ~40s\n")
}
