package sim

import (
	"context"
	"sync"
	"testing"
)

// BenchmarkZeroDelayStreams measures how fast the sim serves tokens when
// steps cost nothing: the ceiling of the client throughput benchmark.
func BenchmarkZeroDelayStreams(b *testing.B) {
	cfg := testConfig()
	cfg.StepBase = 0
	s, err := Start(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const streams, tokens = 16, 1000
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				resp := post(b, context.Background(), s.URL()+"/v1/completions", "",
					map[string]any{"prompt": "a b c", "max_tokens": tokens, "stream": true})
				defer resp.Body.Close()
				readSSE(b, resp.Body)
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(streams*tokens*b.N)/b.Elapsed().Seconds(), "tokens/s")
}
