package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLockstep runs n sequences of prompt and output tokens through an
// engine of cfg, all submitted before its loop starts, so that they arrive
// in one step (the lockstep worst case), and returns the engine, its loop
// stopped, and the sequences, ended.
func runLockstep(t *testing.T, cfg Config, n, prompt, output int) (*engine, []*seq) {
	t.Helper()
	cfg.recordSteps = true
	e := newEngine(cfg, time.Now(), newMetrics(cfg))
	seqs := make([]*seq, n)
	for i := range seqs {
		seqs[i] = newSeq(prompt, nil, filler{}.generate(genRequest{MaxTokens: output}), output)
		e.submit <- seqs[i] // buffered: the loop takes them all in at its first step
	}
	go e.run()
	deadline := time.After(10 * time.Second)
	for i, s := range seqs {
		for !s.snapshot().ended {
			select {
			case <-s.notify:
			case <-deadline:
				t.Fatalf("sequence %d did not end", i)
			}
		}
	}
	close(e.stop)
	<-e.done // the loop's state is the test's from here
	return e, seqs
}

// counterValue reads a counter.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, c.Write(&m))
	return m.GetCounter().GetValue()
}

// TestKVPolicies: users arriving together in one step are preempted, under
// --kv-policy preempt, exactly when their contexts do not fit
// (HeadroomUsers), and each preemption is recomputed, its prefill paid
// again; under reserve the last waits instead. The figures are worked out
// step by step in each case's comment: a sequence holds its prompt and its
// output but the newest token, and a step first grows the running
// sequences, preempting the most recently admitted while they do not fit,
// then admits.
func TestKVPolicies(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		policy                string
		kv                    int
		users, prompt, output int
		preemptions           int
		// preempted is how many times each sequence was, in arrival order.
		preempted []int
		// peak is the most KV tokens held at once; prefill, the tokens
		// prefilled in all (each step is PerPrefillToken×prefill, 1 ns a
		// token: the modelled steps add up to it).
		peak, prefill int
	}{
		// Four hold 200 + 49 tokens each at their last step: 996.
		{"four users fit", KVPreempt, 1000, 4, 200, 50, 0, []int{0, 0, 0, 0}, 996, 800},
		{"four users at the headroom", KVPreempt, 996, 4, 200, 50, 0, []int{0, 0, 0, 0}, 996, 800},
		// Step 50 would need 4 × 249 = 996: the last admitted, at
		// 200 + 48, goes, and recomputes its 249 tokens after the rest.
		{"four users a token short", KVPreempt, 995, 4, 200, 50, 1, []int{0, 0, 0, 1}, 992, 800 + 249},
		// Five prompts fill the cache; the second step needs 5 more
		// tokens: the fifth, one token out, goes and recomputes 201.
		{"five users do not fit", KVPreempt, 1000, 5, 200, 50, 1, []int{0, 0, 0, 0, 1}, 1000, 1000 + 201},
		// 5 × (100 + g) fits until g = 100; at step 102 the fifth goes
		// with 101 tokens out, and comes back for 201 tokens of prefill.
		{"preempted mid-answer", KVPreempt, 1000, 5, 100, 150, 1, []int{0, 0, 0, 0, 1}, 1000, 500 + 201},
		// The fifth goes at step 82 (5 × 180 = 900 full), the fourth at
		// step 127 (4 × 226 > 900); both come back when the first three
		// end, in their admission order: 226 + 181 tokens of prefill.
		{"two preempted", KVPreempt, 900, 5, 100, 150, 2, []int{0, 0, 0, 1, 1}, 900, 500 + 226 + 181},
		// Reserve: four reservations of 250 fill the cache, the fifth
		// waits for one to end.
		{"reserve waits", KVReserve, 1000, 5, 200, 50, 0, []int{0, 0, 0, 0, 0}, 1000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.KVPolicy, cfg.KVCacheTokens = tc.policy, tc.kv
			cfg.StepBase, cfg.PerPrefillToken = 0, time.Nanosecond
			// The ground truth agrees: preempted iff more users than the
			// headroom, or a longer context.
			users := cfg.HeadroomUsers(tc.prompt+tc.output, tc.output)
			require.Equal(t, tc.preemptions > 0, tc.users > users, "HeadroomUsers = %d", users)
			context := cfg.HeadroomContext(tc.users, tc.output)
			require.Equal(t, tc.preemptions > 0, tc.prompt+tc.output > context, "HeadroomContext = %d", context)
			e, seqs := runLockstep(t, cfg, tc.users, tc.prompt, tc.output)
			assert.Equal(t, float64(tc.preemptions), counterValue(t, e.m.preemptions), "vllm:num_preemptions_total")
			for i, s := range seqs {
				st := s.snapshot()
				assert.Empty(t, st.err, "sequence %d", i)
				assert.Equal(t, tc.output, st.emitted, "sequence %d: every token, none twice", i)
				assert.Equal(t, tc.preempted[i], st.preempted, "sequence %d preempted", i)
			}
			assert.Equal(t, tc.peak, e.kvPeak, "most KV tokens held at once")
			assert.LessOrEqual(t, e.kvPeak, tc.kv, "never more than the cache")
			assert.Zero(t, e.kvUsed, "all KV freed")
			var prefill time.Duration
			for _, d := range e.plan {
				prefill += d
			}
			assert.Equal(t, tc.prefill, int(prefill/cfg.PerPrefillToken), "tokens prefilled, recomputation included")
		})
	}
}

// TestPreemptionOverHTTP: the same through the server. Users of 200 + 50
// tokens in a cache of 1000: HeadroomUsers of them run with no preemption;
// one more, and /metrics counts a preemption, yet every stream gets its 50
// tokens once each, and the truth records say which request was preempted.
func TestPreemptionOverHTTP(t *testing.T) {
	const prompt, output = 200, 50
	base := testConfig()
	base.KVPolicy, base.KVCacheTokens = KVPreempt, 1000
	headroom := base.HeadroomUsers(prompt+output, output)
	require.Equal(t, 4, headroom)
	for _, tc := range []struct {
		users       int
		preemptions float64
	}{{headroom, 0}, {headroom + 1, 1}} {
		t.Run(fmt.Sprintf("%d users", tc.users), func(t *testing.T) {
			cfg := base
			hold := make(chan struct{})
			cfg.holdStart = hold
			s := startSim(t, cfg)
			var wg sync.WaitGroup
			for i := range tc.users {
				id := fmt.Sprint(i)
				wg.Go(func() {
					events := streamChat(t, s.Server, id, prompt, output)
					var text []string
					var done bool
					for _, e := range events {
						if e.data == "[DONE]" {
							done = true
							continue
						}
						c := parseChunk(t, e.data)
						assert.Nil(t, c.Error, "request %s", id)
						if tx := c.contentText(); tx != "" {
							text = append(text, tx)
						}
						if c.Usage != nil {
							assert.Equal(t, output, c.Usage.CompletionTokens, "request %s usage", id)
						}
					}
					assert.True(t, done, "request %s ends with [DONE]", id)
					assert.Len(t, text, output, "request %s: one chunk a token, none sent twice", id)
				})
				// One at a time into the held engine, so that arrival order
				// is request order: the last is the most recently admitted.
				require.Eventually(t, func() bool { return len(s.eng.submit) == i+1 }, 5*time.Second, time.Millisecond)
			}
			close(hold) // all admitted in the engine's first step
			wg.Wait()
			waitIdle(t, s.Server)
			mfs := scrape(t, s.Server)
			assert.Equal(t, tc.preemptions, value(mfs, "vllm:num_preemptions_total"))
			assert.Zero(t, gauge(mfs, "vllm:kv_cache_usage_perc"))
			assert.Equal(t, float64(tc.users), value(mfs, "vllm:request_success_total", "finished_reason", "length"))
			assert.Equal(t, float64(tc.users*output), value(mfs, "vllm:generation_tokens_total"))

			recs := s.records(t)
			require.Len(t, recs, tc.users)
			for i := range tc.users {
				r := recs[fmt.Sprint(i)]
				assert.Empty(t, r.Error, "request %d", i)
				assert.Equal(t, output, r.OutputTokens, "request %d", i)
				assert.Len(t, r.TokenNS, output, "request %d", i)
				assert.Equal(t, "length", r.FinishReason, "request %d", i)
				want := 0
				if i == tc.users-1 {
					want = int(tc.preemptions) // the most recently admitted
				}
				assert.Equal(t, want, r.Preemptions, "request %d preemptions", i)
			}
		})
	}
}

// TestPreemptKVGauge: under preempt the KV gauge is the tokens held, which
// grow with the answer, not the reservation of prompt + max_tokens.
func TestPreemptKVGauge(t *testing.T) {
	cfg := testConfig()
	cfg.KVPolicy = KVPreempt
	s := startSim(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const prompt, maxTokens = 3, 100000
	resp := post(t, ctx, s.URL()+"/v1/completions", "", map[string]any{"prompt": "a b c", "max_tokens": maxTokens, "stream": true})
	defer resp.Body.Close()
	br := readUntilContent(t, resp.Body)
	held := func() int {
		u := gauge(scrape(t, s.Server), "vllm:kv_cache_usage_perc") * float64(cfg.KVCacheTokens)
		require.InDelta(t, math.Round(u), u, 1e-6, "a whole number of tokens")
		return int(math.Round(u))
	}
	first := held()
	const more = 20
	for read := 0; read < more; {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && parseChunk(t, data).contentText() != "" {
			read++
		}
	}
	second := held()
	// Once the client has read n tokens the engine holds prompt + n - 1 at
	// least; a reservation would be prompt + max_tokens.
	assert.GreaterOrEqual(t, first, prompt)
	assert.GreaterOrEqual(t, second, prompt+more)
	assert.Less(t, second, prompt+maxTokens/10, "tokens held, not reserved")
	cancel()
	waitIdle(t, s.Server)
	assert.Zero(t, gauge(scrape(t, s.Server), "vllm:kv_cache_usage_perc"), "freed when the client left")
}

// TestMaxModelLen: a request past --max-model-len, or past the whole KV
// cache when that is shorter, is refused as vLLM refuses it; one at the
// limit is served. Refusals count in no metric and have a truth record.
func TestMaxModelLen(t *testing.T) {
	for _, tc := range []struct {
		name             string
		kv, maxModelLen  int
		path             string
		maxTokens, limit int // limit: 0 is served
	}{
		{"at --max-model-len", 1000, 100, "/v1/completions", 97, 0},
		{"past --max-model-len", 1000, 100, "/v1/completions", 98, 100},
		{"past --max-model-len, chat", 1000, 100, "/v1/chat/completions", 98, 100},
		{"past the cache, shorter", 50, 100, "/v1/completions", 48, 50},
		{"no --max-model-len", 1000, 0, "/v1/completions", 997, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.StepBase = 0 // zero-delay: the answers served take no time
			cfg.KVCacheTokens, cfg.MaxModelLen = tc.kv, tc.maxModelLen
			s := startSim(t, cfg)
			body := map[string]any{"prompt": "a b c", "max_tokens": tc.maxTokens}
			if strings.Contains(tc.path, "chat") {
				body = map[string]any{"messages": []map[string]string{{"role": "user", "content": "a b c"}}, "max_tokens": tc.maxTokens}
			}
			resp := post(t, context.Background(), s.URL()+tc.path, "r", body)
			defer resp.Body.Close()
			b := readAll(t, resp)
			if tc.limit == 0 {
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
				require.GreaterOrEqual(t, cfg.HeadroomContext(1, tc.maxTokens), 3+tc.maxTokens, "the ground truth says it is served")
				return
			}
			require.Less(t, cfg.HeadroomContext(1, tc.maxTokens), 3+tc.maxTokens, "the ground truth says it is refused")
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (3 in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				tc.limit, 3+tc.maxTokens, tc.maxTokens)
			require.JSONEq(t, fmt.Sprintf(`{"error":{"message":%q,"type":"BadRequestError","param":null,"code":400}}`, msg), b)
			mfs := scrape(t, s.Server)
			assert.Zero(t, value(mfs, "vllm:request_success_total"), "a refusal is no request of the engine's")
			assert.Zero(t, value(mfs, "vllm:prompt_tokens_total"))
			r := s.records(t)["r"]
			assert.Equal(t, "HTTP 400: "+msg, r.Error)
			assert.Equal(t, 3, r.PromptTokens)
			assert.Zero(t, r.OutputTokens)
		})
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
