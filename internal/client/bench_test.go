package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/workload"
)

// cannedStream is a chat stream of n one-token chunks shaped like llama.cpp's
// (about 250 bytes each), with a role chunk, a finish chunk, usage and [DONE].
func cannedStream(n int) []byte {
	var b bytes.Buffer
	const head = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":`
	const tail = `}}],"created":1795275843,"id":"chatcmpl-vXZB5D9yWWyYlcxv9m5QegNyvU7xGqUh","model":"tiny-llama-small","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"}` + "\n\n"
	b.WriteString(roleChunk)
	for i := range n {
		b.WriteString(head)
		b.WriteString(strconv.Quote(fmt.Sprintf(" tok%d", i%1000)))
		b.WriteString(tail)
	}
	b.WriteString(`data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}]}` + "\n\n")
	fmt.Fprintf(&b, `data: {"choices":[],"usage":{"completion_tokens":%d,"prompt_tokens":43,"total_tokens":%d}}`+"\n\n", n, n+43)
	b.WriteString(doneChunk)
	return b.Bytes()
}

// BenchmarkEventReader parses a canned 10,000-token stream: the SSE reader
// alone, and the reader with the per-chunk decoding Do does.
func BenchmarkEventReader(b *testing.B) {
	const n = 10000
	data := cannedStream(n)
	b.Run("sse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		r := NewEventReader(nil)
		for b.Loop() {
			r.reset(bytes.NewReader(data))
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
	b.Run("sse+decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		r := NewEventReader(nil)
		for b.Loop() {
			r.reset(bytes.NewReader(data))
			s := newStream(&Response{}, n)
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				if e := s.event(ev, time.Now()); e != nil {
					b.Fatal(e)
				}
			}
			s.close()
			if s.resp.OutputTokens != n {
				b.Fatalf("OutputTokens = %d, want %d", s.resp.OutputTokens, n)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	})
}

// BenchmarkDoStream sends requests to a local server that writes a canned
// stream of 1,000 token chunks as fast as it can, one write and flush per
// chunk (as a real server does). The server shares the CPUs, so the figures
// are a floor for the client alone.
func BenchmarkDoStream(b *testing.B) {
	const n = 1000
	data := cannedStream(n)
	parts := bytes.SplitAfter(data, []byte("\n\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, p := range parts {
			_, _ = w.Write(p)
			f.Flush()
		}
	}))
	defer srv.Close()
	req := &workload.Request{Messages: []workload.Message{{Role: "user", Content: "hi"}}, MaxTokens: n}

	for _, conc := range []int{1, 64} {
		b.Run(fmt.Sprintf("streams=%d", conc), func(b *testing.B) {
			c, err := New(Options{BaseURL: srv.URL, API: APIChat, MaxConns: conc})
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdleConnections()
			b.ReportAllocs()
			var wg sync.WaitGroup
			jobs := make(chan struct{})
			for range conc {
				wg.Go(func() {
					for range jobs {
						resp := c.Do(context.Background(), req, "bench")
						if resp.Err != nil || resp.OutputTokens != n {
							b.Errorf("Do: err %v, %d tokens", resp.Err, resp.OutputTokens)
						}
					}
				})
			}
			for b.Loop() {
				jobs <- struct{}{}
			}
			close(jobs)
			wg.Wait()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkTimingError256 measures what the timing is worth under load: 256
// concurrent streams, each paced by the server at 200 tokens/s (51,200
// tokens/s in all, 100 tokens a stream). Every chunk carries the time the
// server wrote it; the client's read time minus that is the timing error
// (kernel, scheduling and parsing delay), reported at p50, p99 and max. Each
// iteration is one round of 256 streams.
func BenchmarkTimingError256(b *testing.B) {
	const (
		streams  = 256
		tokens   = 100
		interval = 5 * time.Millisecond
	)
	base := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		f.Flush()
		start := time.Now()
		buf := make([]byte, 0, 256)
		for k := range tokens {
			time.Sleep(time.Until(start.Add(time.Duration(k+1) * interval)))
			stamp := time.Since(base).Nanoseconds()
			buf = append(buf[:0], `data: {"choices":[{"index":0,"delta":{"content":"`...)
			buf = strconv.AppendInt(buf, stamp, 10)
			buf = append(buf, ` "}}],"object":"chat.completion.chunk","model":"m","id":"chatcmpl-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`+"\n\n"...)
			_, _ = w.Write(buf)
			f.Flush()
		}
		_, _ = io.WriteString(w, finishChunk+doneChunk)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: APIChat, MaxConns: streams})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	req := &workload.Request{Messages: []workload.Message{{Role: "user", Content: "hi"}}, MaxTokens: tokens}

	var delays []time.Duration
	var mu sync.Mutex
	total := 0
	var busy time.Duration
	for b.Loop() {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range streams {
			wg.Go(func() {
				resp := c.Do(context.Background(), req, "")
				if resp.Err != nil {
					b.Error(resp.Err)
					return
				}
				stamps := strings.Fields(resp.Text)
				if len(stamps) != len(resp.ChunkTimes) {
					b.Errorf("%d stamps, %d chunk times", len(stamps), len(resp.ChunkTimes))
					return
				}
				local := make([]time.Duration, len(stamps))
				for k, s := range stamps {
					ns, _ := strconv.ParseInt(s, 10, 64)
					local[k] = resp.ChunkTimes[k].Sub(base) - time.Duration(ns)
				}
				mu.Lock()
				delays = append(delays, local...)
				total += len(stamps)
				mu.Unlock()
			})
		}
		wg.Wait()
		busy += time.Since(t0)
	}
	if len(delays) == 0 {
		return
	}
	slices.Sort(delays)
	q := func(p float64) float64 { return float64(delays[int(p*float64(len(delays)-1))].Microseconds()) }
	b.ReportMetric(float64(total)/busy.Seconds(), "tokens/s")
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(delays[len(delays)-1].Microseconds()), "max-µs")
}
