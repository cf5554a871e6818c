package sim

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readCut reads a stream that may be cut, returning its data payloads.
func readCut(r io.Reader) []string {
	var out []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			out = append(out, data)
		}
		if err != nil {
			return out
		}
	}
}

// TestOOM: prefill of a context past --oom-tokens crashes the engine: the
// server cuts every stream in flight (no [DONE], no error event: a dying
// process says nothing), stops serving and reports the crash on Crashed;
// a context of exactly --oom-tokens is served.
func TestOOM(t *testing.T) {
	const limit, output = 1000, 10
	for _, tc := range []struct {
		name    string
		context int
		crash   bool
	}{
		{"at --oom-tokens", limit, false},
		{"past --oom-tokens", limit + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.KVCacheTokens, cfg.OOMTokens = 2*limit, limit
			require.Equal(t, limit, cfg.HeadroomContext(1, output), "the ground truth")
			s := startSim(t, cfg)
			if !tc.crash {
				streamChat(t, s.Server, "x", tc.context-output, output)
				select {
				case <-s.Crashed():
					t.Fatalf("crashed: %v", s.CrashError())
				default:
				}
				require.NoError(t, s.CrashError())
				require.Equal(t, output, s.records(t)["x"].OutputTokens)
				return
			}

			// A stream in flight, well within the limit (900 steps long).
			resp := post(t, context.Background(), s.URL()+"/v1/chat/completions", "inflight", chatBody(3, 900, true))
			defer resp.Body.Close()
			br := readUntilContent(t, resp.Body)

			var wg sync.WaitGroup
			wg.Go(func() {
				req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(
					`{"messages":[{"role":"user","content":"`+nWords(tc.context-output)+`"}],"max_tokens":10,"stream":true}`))
				require.NoError(t, err)
				req.Header.Set("X-Request-Id", "oom")
				r, err := httpClient.Do(req)
				if err != nil {
					return // cut before its headers: as good
				}
				defer r.Body.Close()
				assert.NotContains(t, readCut(r.Body), "[DONE]", "the request that crashed the engine")
			})
			select {
			case <-s.Crashed():
			case <-time.After(10 * time.Second):
				t.Fatal("the engine did not crash")
			}
			var oom *OOMError
			require.ErrorAs(t, s.CrashError(), &oom)
			require.Equal(t, OOMError{Tokens: tc.context, Limit: limit}, *oom)
			msg := s.CrashError().Error()
			assert.True(t, strings.HasPrefix(msg, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "), msg)
			assert.True(t, strings.HasSuffix(msg, " (simulated: a request of 1001 tokens, past --oom-tokens 1000)"), msg)

			rest := readCut(br)
			assert.NotContains(t, rest, "[DONE]", "the stream in flight is cut")
			for _, d := range rest {
				assert.Nil(t, parseChunk(t, d).Error, "no orderly error event: the process died")
			}
			wg.Wait()
			httpClient.CloseIdleConnections()
			_, err := httpClient.Get(s.URL() + "/health")
			require.Error(t, err, "a crashed server serves nothing")

			recs := s.records(t) // Close still releases the rest
			assert.NotEmpty(t, recs["inflight"].Error)
			assert.Less(t, recs["inflight"].OutputTokens, 900)
			assert.NotEmpty(t, recs["oom"].Error)
			require.Eventually(t, func() bool { return !strings.Contains(stacks(), "internal/sim.(*") }, 5*time.Second, 5*time.Millisecond,
				"goroutines left:\n%s", stacks())
		})
	}
}

// A server that never crashed: Crashed stays open through Close.
func TestCloseIsNoCrash(t *testing.T) {
	s := startSim(t, testConfig())
	require.NoError(t, s.Close())
	select {
	case <-s.Crashed():
		t.Fatal("Close closed Crashed")
	default:
	}
	require.NoError(t, s.CrashError())
}
