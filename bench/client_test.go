// Package bench holds perfgate's end-to-end benchmarks: figures that are
// targets, not pass/fail tests (`make bench`, or the command in README.md).
package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/workload"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// BenchmarkClientCeiling measures the most streamed tokens per second the
// client consumes from a zero-delay simulator (every engine step takes no
// time), with `streams` requests in flight, and the client's timing error:
// the p99 of |client-measured − server-written| inter-token gaps and TTFT,
// per request, against the simulator's truth.
//
// Target (issue 2): >= 50,000 tokens/s and p99 timing error <= 1 ms at 256 streams.
//
//	go test -run '^$' -bench ClientCeiling -benchtime 3x ./bench/
func BenchmarkClientCeiling(b *testing.B) {
	for _, streams := range []int{64, 256} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) { benchCeiling(b, streams) })
	}
}

func benchCeiling(b *testing.B, streams int) {
	const tokensPerRequest = 200
	cfg := sim.DefaultConfig()
	cfg.StepBase, cfg.PerSeq, cfg.PerPrefillToken, cfg.Jitter = 0, 0, 0, 0
	cfg.MaxBatch = streams
	var truth syncBuffer
	cfg.Truth = &truth
	s, err := sim.Start(context.Background(), "127.0.0.1:0", cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, err := client.New(client.Options{BaseURL: s.URL(), API: client.APICompletions, Model: cfg.Model, MaxConns: streams})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]workload.Request, streams)
	for i := range reqs {
		reqs[i] = workload.Request{ID: fmt.Sprint(i), Prompt: "benchmark the client ceiling", MaxTokens: tokensPerRequest}
	}
	d := &run.Dispatcher{Sender: c}
	var recs []*result.Record
	var tokens int
	var elapsed time.Duration
	b.ResetTimer()
	for i := range b.N {
		plan := run.Plan{Scenario: "ceiling", Repetition: i + 1, Requests: reqs, Count: streams,
			Load: config.Load{Type: config.LoadClosed, Concurrency: streams}, RunID: "bench"}
		start := time.Now()
		if err := d.Run(context.Background(), plan, func(r *result.Record) {
			recs = append(recs, r)
			tokens += r.OutputTokens
		}); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
	}
	b.StopTimer()
	_ = s.Close()

	truths, err := sim.ReadTruth(bytes.NewReader(truth.b.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	var itlErr, ttftErr []float64
	for _, r := range recs {
		if r.Error != "" {
			b.Fatalf("request %s failed: %s", r.RequestID, r.Error)
		}
		t, ok := truths[r.RequestID]
		if !ok || len(t.TokenNS) != len(r.ITLUS)+1 {
			b.Fatalf("request %s: no matching truth", r.RequestID)
		}
		ttftErr = append(ttftErr, math.Abs(float64(r.FirstTokenNS-r.SentNS-(t.FirstTokenNS-t.ArrivalNS))/1e6))
		for k, g := range r.ITLUS {
			itlErr = append(itlErr, math.Abs(float64(g)/1e3-float64(t.TokenNS[k+1]-t.TokenNS[k])/1e6))
		}
	}
	b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tokens/s")
	b.ReportMetric(p99(itlErr), "p99-itl-err-ms")
	b.ReportMetric(p99(ttftErr), "p99-ttft-err-ms")
}

func p99(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}
