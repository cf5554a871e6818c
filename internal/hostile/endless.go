package hostile

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// pour writes the pieces next gives, one every `every`, until the client
// goes away, Options.CapBytes or Options.CapTime (ctx) is reached, or the
// server closes; then it cuts the connection: an endless answer never ends
// the way a complete one does.
func (s *Server) pour(ctx context.Context, out sink, next func() []byte, every func() bool) {
	var sent int64
	for sent < s.opts.CapBytes {
		p := next()
		if err := out.write(p); err != nil {
			break
		}
		sent += int64(len(p))
		if !every() {
			break
		}
	}
	panic(http.ErrAbortHandler)
}

// noWait is pour's pace for an answer written as fast as the client reads.
func (s *Server) noWait(ctx context.Context) func() bool {
	return func() bool { return s.wait(ctx, 0) }
}

func (s *Server) every(ctx context.Context) func() bool {
	return func() bool { return s.wait(ctx, s.opts.KeepAliveEvery) }
}

// pourPiece is the size of each write of an endless answer.
const pourPiece = 64 << 10

func repeat(b []byte) func() []byte { return func() []byte { return b } }

// endlessStream writes one of the SSE streams that never end.
func (s *Server) endlessStream(ctx context.Context, out sink, mode Mode) {
	switch mode {
	case EndlessEvent:
		// 1 KiB data: lines, never a blank line.
		line := "data: " + strings.Repeat("x", 1017) + "\n"
		s.pour(ctx, out, repeat([]byte(strings.Repeat(line, pourPiece/len(line)))), s.noWait(ctx))
	case EndlessLine:
		first := true
		data := bytes.Repeat([]byte("x"), pourPiece)
		s.pour(ctx, out, func() []byte {
			if first {
				first = false
				return []byte("data: ")
			}
			return data
		}, s.noWait(ctx))
	case EndlessComments:
		s.pour(ctx, out, repeat([]byte(": keep-alive\n\n")), s.every(ctx))
	}
}

// trickleStream writes a chat or completions stream that never finishes
// (its tokens go on forever), a byte every Options.TrickleEvery.
func (s *Server) trickleStream(ctx context.Context, w http.ResponseWriter, f *format) {
	out := startSSE(w)
	var pending []byte
	i := 0
	if f.chat {
		pending = f.role()
	}
	s.pour(ctx, out, func() []byte {
		if len(pending) == 0 {
			pending = f.content(token(i))
			i++
		}
		b := pending[:1]
		pending = pending[1:]
		return b
	}, func() bool { return s.wait(ctx, s.opts.TrickleEvery) })
}

// trickleWhole answers a path other than a completion endpoint as Healthy
// would, its body a byte every Options.TrickleEvery.
func (s *Server) trickleWhole(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	s.answer(ctx, rec, r, nil, nil, Healthy)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	out := responseSink{w: w, rc: http.NewResponseController(w)}
	_ = out.rc.Flush()
	body := rec.Body.Bytes()
	for i := range body {
		if out.write(body[i:i+1]) != nil || !s.wait(ctx, s.opts.TrickleEvery) {
			panic(http.ErrAbortHandler)
		}
	}
}

// hugeErrorBody answers 500 with a JSON error whose message never ends.
func (s *Server) hugeErrorBody(ctx context.Context, w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	out := responseSink{w: w, rc: http.NewResponseController(w)}
	first := true
	data := bytes.Repeat([]byte("x"), pourPiece)
	s.pour(ctx, out, func() []byte {
		if first {
			first = false
			return []byte(`{"error":{"code":500,"type":"server_error","message":"`)
		}
		return data
	}, s.noWait(ctx))
}

// noHeaders never answers: it waits for the client to go away, the cap or
// Close, and cuts the connection.
func (s *Server) noHeaders(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.done:
	}
	panic(http.ErrAbortHandler)
}

// metrics answers /metrics.
func (s *Server) metrics(ctx context.Context, w http.ResponseWriter, mode Mode) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	switch mode {
	case MetricsNotProm:
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{}"))
		return
	case MetricsEndless:
		w.WriteHeader(http.StatusOK)
		out := responseSink{w: w, rc: http.NewResponseController(w)}
		replica := 0
		s.pour(ctx, out, func() []byte {
			var b bytes.Buffer
			if replica == 0 {
				b.WriteString("# HELP vllm:num_requests_running Number of requests in model execution batches.\n" +
					"# TYPE vllm:num_requests_running gauge\n")
			}
			for b.Len() < pourPiece {
				fmt.Fprintf(&b, "vllm:num_requests_running{replica=\"%d\"} 1\n", replica)
				replica++
			}
			return b.Bytes()
		}, s.noWait(ctx))
		return
	}
	running := s.inflight.Load()
	m := promLabel(s.opts.Model)
	var b strings.Builder
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"+
		"# TYPE vllm:num_requests_running gauge\n"+
		"vllm:num_requests_running{model_name=\"%s\"} %d\n", m, running)
	fmt.Fprintf(&b, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"+
		"# TYPE vllm:num_requests_waiting gauge\n"+
		"vllm:num_requests_waiting{model_name=\"%s\"} 0\n", m)
	fmt.Fprintf(&b, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"+
		"# TYPE vllm:kv_cache_usage_perc gauge\n"+
		"vllm:kv_cache_usage_perc{model_name=\"%s\"} %g\n", m, min(1, float64(running)/100))
	fmt.Fprintf(&b, "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"+
		"# TYPE vllm:prompt_tokens_total counter\n"+
		"vllm:prompt_tokens_total{model_name=\"%s\"} %d\n", m, s.prompt.Load())
	fmt.Fprintf(&b, "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n"+
		"# TYPE vllm:generation_tokens_total counter\n"+
		"vllm:generation_tokens_total{model_name=\"%s\"} %d\n", m, s.output.Load())
	fmt.Fprintf(&b, "# HELP vllm:request_success_total Count of successfully processed requests.\n"+
		"# TYPE vllm:request_success_total counter\n"+
		"vllm:request_success_total{model_name=\"%s\"} %d\n", m, s.answers.Load())
	fmt.Fprintf(&b, "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n"+
		"# TYPE vllm:num_preemptions_total counter\n"+
		"vllm:num_preemptions_total{model_name=\"%s\"} 0\n", m)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(b.String()))
}

// promLabel escapes a label value for the Prometheus text format.
func promLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// identity answers the engines' identity endpoints: /version as
// {"version":...,"engine":"hostile"}, the others 404, or, in VersionDeep,
// all of them a bomb of nested arrays.
func (s *Server) identity(w http.ResponseWriter, path string, mode Mode) {
	if mode == VersionDeep {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(bytes.Repeat([]byte("["), DeepJSONBytes))
		return
	}
	if path != pathVersion {
		writeError(w, http.StatusNotFound, "no such endpoint: "+path)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"version": s.opts.Version, "engine": "hostile"})
}
