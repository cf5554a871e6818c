package run

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

// textSender records the text of every request it is handed, by request id.
type textSender struct {
	clk  *fakeClock
	mu   sync.Mutex
	text map[string]string // X-Request-Id → the request's text as sent (fullText)
}

func (s *textSender) Do(ctx context.Context, req *workload.Request, id string) *client.Response {
	s.mu.Lock()
	if s.text == nil {
		s.text = map[string]string{}
	}
	s.text[id] = fullText(*req)
	s.mu.Unlock()
	return (&instantSender{clk: s.clk}).Do(ctx, req, id)
}

// TestSaltEachPass: every pass over the workload (here 7 requests over a
// workload of 3: passes of 3, 3 and 1) starts each request with its own
// pass's salt, the rest of the text untouched; no text is sent twice; the
// same seed gives the same texts (both sides of a comparison); eval items are
// never salted; and a zero Salt sends the workload as it is.
func TestSaltEachPass(t *testing.T) {
	reqs := []workload.Request{
		{ID: "a", Messages: []workload.Message{{Role: "system", Content: "Shared."}, {Role: "user", Content: "one"}}, MaxTokens: 2},
		{ID: "b", Messages: []workload.Message{{Role: "system", Content: "Shared."}, {Role: "user", Content: "two"}}, MaxTokens: 2},
		{ID: "c", Prompt: "three", MaxTokens: 2},
	}
	evalReq := workload.Request{ID: "q1", Prompt: "What is 2+2?", MaxTokens: 2}
	run := func(salt uint64) map[string]string {
		clk := newFakeClock(0)
		s := &textSender{clk: clk}
		d := &Dispatcher{Sender: s, Clock: clk}
		p := Plan{Scenario: "chat", Repetition: 1, Requests: reqs, Count: 7, RunID: "r",
			Load: config.Load{Type: config.LoadClosed, Concurrency: 1}, Salt: salt,
			Evals: &EvalMix{Queue: NewEvalQueue([]EvalItem{{Suite: "s", Request: &evalReq}}), Share: 0.5}}
		recs := collect(t, d, p)
		require.Len(t, recs, 8)
		return s.text
	}

	plain := run(0)
	for i := range 7 {
		assert.Equal(t, fullText(reqs[i%3]), plain[fmt.Sprintf("r-chat-r1-%06d", i)], "unsalted request %d", i)
	}

	seed := SaltSeed(1, "chat", 1, 1)
	got := run(seed)
	assert.Equal(t, got, run(seed), "the same seed must send the same texts")
	assert.Equal(t, "What is 2+2?", got["r-chat-r1-e000000"], "eval items are never salted")
	salts := map[string]int{} // salt → pass
	texts := map[string]bool{}
	for i := range 7 {
		text := got[fmt.Sprintf("r-chat-r1-%06d", i)]
		want := fullText(reqs[i%3])
		require.True(t, strings.HasSuffix(text, want) && len(text) > len(want), "request %d = %q, want a salt before %q", i, text, want)
		salt := strings.TrimSuffix(text, want)
		pass := i / 3
		if p, seen := salts[salt]; seen {
			assert.Equal(t, pass, p, "request %d (pass %d) reuses pass %d's salt", i, pass, p)
		}
		salts[salt] = pass
		assert.False(t, texts[text], "request %d's text %q was sent before", i, text)
		texts[text] = true
	}
	assert.Len(t, salts, 3, "three passes, three salts")
	assert.NotEqual(t, got, run(SaltSeed(2, "chat", 1, 1)), "another seed, other salts")
}

// fullText is a request's prompt, or its messages' contents joined.
func fullText(r workload.Request) string {
	if len(r.Messages) == 0 {
		return r.Prompt
	}
	parts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

func TestSaltSeedsDiffer(t *testing.T) {
	seen := map[uint64]string{}
	for _, k := range []struct {
		seed      int64
		scenario  string
		rep, plan int
	}{{1, "a", 0, 1}, {1, "a", 0, 2}, {1, "a", 1, 1}, {1, "a", 2, 1}, {1, "b", 1, 1}, {2, "a", 1, 1}} {
		s := SaltSeed(k.seed, k.scenario, k.rep, k.plan)
		name := fmt.Sprint(k)
		require.NotZero(t, s, name)
		if prev, dup := seen[s]; dup {
			t.Errorf("SaltSeed%v = SaltSeed%v", name, prev)
		}
		seen[s] = name
	}
}

// TestSaltDefeatsThePrefixCache runs a warm-up and two repetitions against
// the simulator, whose prefix cache is on, and reads from its ground truth
// how many prompt tokens of each measured request the cache served. Salted,
// a request can only hit what it shares with the requests of its own pass
// (the salt and the shared system prompt: 80 tokens, five 16-token blocks);
// unsalted, every request of repetition 2 is served from the cache as far as
// whole blocks go (128 of its 139 tokens), which is what made perfgate
// measure a cache, not a prefill.
func TestSaltDefeatsThePrefixCache(t *testing.T) {
	const (
		systemWords = 75 // with the 5-word salt: 80 tokens, 5 whole blocks
		userWords   = 64
		n           = 8
	)
	system := strings.TrimSpace(strings.Repeat("shared ", systemWords))
	reqs := make([]workload.Request, n)
	for i := range reqs {
		user := strings.TrimSpace(strings.Repeat(fmt.Sprintf("u%d ", i), userWords))
		reqs[i] = workload.Request{ID: fmt.Sprint(i), MaxTokens: 4,
			Messages: []workload.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}}
	}
	for _, salted := range []bool{true, false} {
		t.Run(fmt.Sprintf("salt=%v", salted), func(t *testing.T) {
			srv, c, truth := cachingSim(t)

			sc := scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 2}, reqs)
			sc.Salt = salted
			d := &Dispatcher{Sender: c}
			w := &Warmup{Dispatcher: d, Seed: 3, RunID: "w",
				Config: config.Warmup{Method: config.WarmupWindows, Window: 200 * time.Millisecond, Windows: 2, Tolerance: 10,
					Max: 400 * time.Millisecond, OnUnsteady: "warn"}}
			_, err := w.Run(t.Context(), sc)
			require.NoError(t, err)
			var records []*result.Record
			m := &Measurement{Dispatcher: d, Repetitions: config.Repetitions{Min: 2, Max: 2}, Seed: 3, RunID: "m",
				OnRecord: func(r *result.Record) { records = append(records, r) }}
			_, err = m.Measure(t.Context(), sc)
			require.NoError(t, err)
			require.NoError(t, srv.Close())

			got := truth.records(t)
			require.Len(t, records, 2*n)
			for _, r := range records {
				tr, ok := got[r.RequestID]
				require.True(t, ok, "no truth for %s", r.RequestID)
				require.Empty(t, tr.Error)
				if salted {
					assert.LessOrEqual(t, tr.CachedTokens, 80, "%s: %d of %d prompt tokens from the cache", r.RequestID, tr.CachedTokens, tr.PromptTokens)
				} else if r.Repetition == 2 {
					// Every whole 16-token block of the prompt: 128 of 139 tokens.
					assert.Equal(t, tr.PromptTokens/16*16, tr.CachedTokens, "%s: unsalted, repetition 1 filled the cache", r.RequestID)
				}
			}
		})
	}
}

// cachingSim starts a simulator with its prefix cache on, writing its
// ground truth to the buffer returned, and a client of it; both stop with
// the test.
func cachingSim(t *testing.T) (*sim.Server, *client.Client, *truthBuffer) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.PrefixCache = true
	return truthSim(t, cfg, 2)
}

// truthSim starts a simulator of cfg that writes its ground truth, and a
// chat client of maxConns connections to it.
func truthSim(t *testing.T, cfg sim.Config, maxConns int) (*sim.Server, *client.Client, *truthBuffer) {
	t.Helper()
	truth := &truthBuffer{}
	cfg.Truth = truth
	srv, err := sim.Start(t.Context(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	c, err := client.New(client.Options{BaseURL: srv.URL(), API: client.APIChat, Model: cfg.Model, MaxConns: maxConns})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return srv, c, truth
}

// truthBuffer collects the simulator's ground truth; read it after the
// simulator is closed (which flushes it).
type truthBuffer struct{ bytes.Buffer }

func (b *truthBuffer) records(t *testing.T) map[string]sim.TruthRecord {
	t.Helper()
	got, err := sim.ReadTruth(&b.Buffer)
	require.NoError(t, err)
	return got
}

// TestSaltTagDefeatsTheCacheAcrossProbes measures repetition 1 of one
// scenario twice against the simulator, as a capacity search does at two
// loads: with the same SaltTag (or none) the second measurement sends the
// first one's texts and the prefix cache serves every whole block of them;
// with a tag of its own it sends new text, and the cache serves only what a
// request shares with its own pass (the salt and the system prompt).
func TestSaltTagDefeatsTheCacheAcrossProbes(t *testing.T) {
	system := strings.TrimSpace(strings.Repeat("shared ", 75)) // with the 5-word salt: 80 tokens
	reqs := make([]workload.Request, 4)
	for i := range reqs {
		reqs[i] = workload.Request{ID: fmt.Sprint(i), MaxTokens: 4, Messages: []workload.Message{
			{Role: "system", Content: system}, {Role: "user", Content: strings.TrimSpace(strings.Repeat(fmt.Sprintf("u%d ", i), 64))}}}
	}
	for _, tags := range [][2]string{{"probe-1", "probe-2"}, {"", ""}} {
		t.Run(fmt.Sprintf("tags=%q", tags), func(t *testing.T) {
			srv, c, truth := cachingSim(t)

			var second []*result.Record
			for i, tag := range tags {
				sc := scenario("chat", config.Load{Type: config.LoadClosed, Concurrency: 2}, reqs)
				sc.Salt, sc.SaltTag = true, tag
				m := &Measurement{Dispatcher: &Dispatcher{Sender: c}, Seed: 3, RunID: fmt.Sprintf("m%d", i),
					OnRecord: func(r *result.Record) {
						if i == 1 {
							second = append(second, r)
						}
					}}
				_, err := m.Repetition(t.Context(), sc, 1, "rep")
				require.NoError(t, err)
			}
			require.NoError(t, srv.Close())
			got := truth.records(t)
			require.Len(t, second, len(reqs))
			for _, r := range second {
				tr := got[r.RequestID]
				if tags[0] != tags[1] {
					assert.LessOrEqual(t, tr.CachedTokens, 80, "%s: %d of %d prompt tokens from the cache", r.RequestID, tr.CachedTokens, tr.PromptTokens)
				} else {
					assert.Greater(t, tr.CachedTokens, 128, "%s: %d of %d prompt tokens from the cache; the same salt, the first measurement should have filled it", r.RequestID, tr.CachedTokens, tr.PromptTokens)
				}
			}
		})
	}
}
