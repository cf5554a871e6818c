package sim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running simulator.
type Server struct {
	cfg     Config
	start   time.Time
	readyAt time.Time
	ln      net.Listener
	http    *http.Server
	eng     *engine
	m       *metrics
	truth   *truthWriter
	gen     generator
	nextID  atomic.Uint64
	// loras are the adapters served; nil without adapters.
	loras *loraSet

	handlers  sync.WaitGroup
	served    chan struct{} // closed when Serve has returned
	closed    chan struct{} // closed when Close begins
	closeOnce sync.Once
	closeErr  error
	// crashed is closed when the engine has crashed (Crashed), crashErr
	// set before.
	crashed   chan struct{}
	crashOnce sync.Once
	crashErr  error
}

// shutdownGrace is how long Close waits for streams to end before it closes
// their connections.
const shutdownGrace = 2 * time.Second

// Start validates cfg, listens on addr, starts the step loop and the HTTP
// server, and returns once listening. Cancelling ctx closes the server, as
// Close does.
func Start(ctx context.Context, addr string, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sim: invalid config: %w", err)
	}
	var gen generator = filler{}
	if len(cfg.Answers) > 0 {
		a, err := newAnswerer(cfg.Answers, cfg.answerSeed(), cfg.Accuracy, gen)
		if err != nil { // Validate has built it once already
			return nil, fmt.Errorf("sim: invalid config: %w", err)
		}
		gen = a
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	start := time.Now()
	s := &Server{
		cfg:     cfg,
		start:   start,
		readyAt: start.Add(cfg.ColdStart),
		ln:      ln,
		m:       newMetrics(cfg),
		truth:   newTruthWriter(cfg.Truth),
		gen:     gen,
		loras:   newLoraSet(cfg.Loras),
		served:  make(chan struct{}),
		closed:  make(chan struct{}),
		crashed: make(chan struct{}),
	}
	s.eng = newEngine(cfg, start, s.m)
	s.eng.crash = s.crash
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.keyed(func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, apiChat) }))
	mux.HandleFunc("POST /v1/completions", s.keyed(func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, apiCompletions) }))
	mux.HandleFunc("GET /v1/models", s.keyed(s.models))
	if s.loras != nil { // vLLM's runtime LoRA endpoints
		mux.HandleFunc("POST /v1/load_lora_adapter", s.keyed(s.loadLora))
		mux.HandleFunc("POST /v1/unload_lora_adapter", s.keyed(s.unloadLora))
	}
	if !cfg.NoHealth {
		mux.HandleFunc("GET /health", s.health)
	}
	mux.HandleFunc("GET /version", s.version)
	mux.Handle("GET /metrics", s.m.handler())
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}

	go s.eng.run()
	go func() {
		defer close(s.served)
		_ = s.http.Serve(ln) // returns ErrServerClosed on Close
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.closed:
		}
	}()
	return s, nil
}

// URL is the server's root, e.g. "http://127.0.0.1:PORT" (no /v1). A
// server listening on all interfaces is reached through the loopback.
func (s *Server) URL() string {
	addr := s.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// Close stops accepting connections, ends in-flight streams (with an error
// event), stops the step loop and flushes Truth. It is idempotent and
// returns the Truth writer's error, if any.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- s.http.Shutdown(ctx) }()
		close(s.eng.stop)
		<-s.eng.done
		if err := <-shut; err != nil {
			_ = s.http.Close()
		}
		<-s.served
		s.handlers.Wait()
		if err := s.truth.close(); err != nil {
			s.closeErr = fmt.Errorf("sim: write truth: %w", err)
		}
	})
	return s.closeErr
}

// ns is t in nanoseconds since Start, on the monotonic clock.
func (s *Server) ns(t time.Time) int64 { return t.Sub(s.start).Nanoseconds() }

func (s *Server) ready() bool { return !time.Now().Before(s.readyAt) }

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if !s.ready() {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "model is loading")
		return
	}
	if u := s.cfg.UnhealthyAfter; u > 0 && time.Since(s.start) >= u {
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailableError", "engine is unhealthy (--unhealthy-after)")
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": s.cfg.Version, "engine": "perfgate-sim"})
}

// keyed demands cfg.APIKey on h, when there is one: a request without
// "Authorization: Bearer <key>" gets 401 and an OpenAI-shaped error, as
// vLLM answers with --api-key.
func (s *Server) keyed(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.APIKey == "" {
		return h
	}
	want := "Bearer " + s.cfg.APIKey
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
				"message": "invalid API key", "type": "invalid_request_error", "code": 401,
			}})
			return
		}
		h(w, r)
	}
}

// modelMeta is a model's "meta" in GET /v1/models: llama.cpp's server's
// fields (n_params, size, n_ctx_train), then what the simulator declares it
// stands for (Config.Declared), marked simulated.
type modelMeta struct {
	NParams int64 `json:"n_params"`
	// Size is the weights' size in bytes.
	Size int64 `json:"size"`
	// NCtxTrain is the longest context the simulator serves (a request
	// past it is refused), there being no training.
	NCtxTrain         int     `json:"n_ctx_train"`
	NLayer            int     `json:"n_layer"`
	NHeadKV           int     `json:"n_head_kv"`
	HeadDim           int     `json:"head_dim"`
	KVBytesPerElement float64 `json:"kv_bytes_per_element"`
	GPU               string  `json:"gpu"`
	PeakBandwidthGBs  float64 `json:"peak_bandwidth_gbs"`
	PeakTFLOPS        float64 `json:"peak_tflops"`
	Simulated         bool    `json:"simulated"`
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID          string    `json:"id"`
		Object      string    `json:"object"`
		Created     int64     `json:"created"`
		OwnedBy     string    `json:"owned_by"`
		Root        string    `json:"root"`
		Parent      *string   `json:"parent"`
		MaxModelLen int       `json:"max_model_len"`
		Meta        modelMeta `json:"meta"`
	}
	d, ctx := s.cfg.Declared(), s.cfg.maxContext()
	meta := modelMeta{
		NParams: int64(d.Params), Size: int64(d.WeightBytes()), NCtxTrain: ctx,
		NLayer: d.Layers, NHeadKV: d.KVHeads, HeadDim: d.HeadDim, KVBytesPerElement: d.KVBytesPerElement,
		GPU: d.GPU, PeakBandwidthGBs: d.PeakBandwidthGBs, PeakTFLOPS: d.PeakTFLOPS, Simulated: true,
	}
	data := []model{{
		ID: s.cfg.Model, Object: "model", Created: s.start.Unix(), OwnedBy: "perfgate-sim",
		Root: s.cfg.Model, MaxModelLen: ctx, Meta: meta,
	}}
	for _, name := range s.loras.list() { // as vLLM lists its adapters: the base as parent
		data = append(data, model{ID: name, Object: "model", Created: s.start.Unix(), OwnedBy: "perfgate-sim",
			Root: "/adapters/" + name, Parent: &s.cfg.Model, MaxModelLen: ctx, Meta: meta})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// apiError is the OpenAI/vLLM error object.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    int    `json:"code"`
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]apiError{"error": {Message: msg, Type: typ, Code: status}})
}

// complete serves both completion endpoints.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, api apiKind) {
	arrival := time.Now()
	s.handlers.Add(1)
	defer s.handlers.Done()

	id := r.Header.Get("X-Request-Id")
	if id == "" {
		id = "sim-" + strconv.FormatUint(s.nextID.Add(1), 10)
	}
	w.Header().Set("X-Request-Id", id)
	rec := &TruthRecord{RequestID: id, ArrivalNS: s.ns(arrival)}
	if s.cfg.Drift > 0 {
		rec.DriftFactor = s.DriftFactor(arrival)
	}
	defer func() {
		if rec.EndNS == 0 {
			rec.EndNS = s.ns(time.Now())
		}
		s.truth.write(rec)
	}()
	fail := func(status int, typ, msg string) {
		writeError(w, status, typ, msg)
		rec.Error = fmt.Sprintf("HTTP %d: %s", status, msg)
		rec.EndNS = s.ns(time.Now())
	}

	if !s.ready() {
		fail(http.StatusServiceUnavailable, "ServiceUnavailableError", "model is loading")
		return
	}
	req, err := parseRequest(r, api)
	if err != nil {
		fail(http.StatusBadRequest, "BadRequestError", err.Error())
		return
	}
	rec.PromptTokens = req.promptTokens
	adapter, known := s.adapter(req.model)
	if !known {
		fail(http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.model))
		return
	}
	rec.Adapter = adapter
	// vLLM's refusal past --max-model-len; the sim's past the whole KV
	// cache too, so that a sequence always fits alone.
	if total, limit := req.promptTokens+req.maxTokens, s.cfg.maxContext(); total > limit {
		fail(http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			limit, total, req.promptTokens, req.maxTokens))
		return
	}

	var g generation
	wrong := req.constrained() && structuredWrong(s.cfg.StructuredErrorRate, s.cfg.Seed, req.promptText)
	ans, toolItem := s.toolAnswer(req)
	if toolItem {
		wrong = false // an eval item's answer is right or wrong by --accuracy, not cut
	}
	switch {
	case toolItem && ans.call != nil:
		// A function-calling eval item answered right: its expected call.
		g = newToolGen(ans.call, req.maxTokens, false)
		right := ans.right
		rec.EvalSuite, rec.EvalItem, rec.EvalRight = ans.suite, ans.item, &right
	case toolItem:
		// Answered wrong: text, where a call was expected.
		g = s.gen.generate(genRequest{Prompt: req.promptText, MaxTokens: req.maxTokens, Seed: s.cfg.Seed})
	case req.tool != nil:
		g = newToolGen(req.tool, req.maxTokens, wrong)
	case req.isJSON:
		g = newJSONGen(req.json, req.maxTokens, "stop", wrong)
	default:
		g = s.gen.generate(genRequest{Prompt: req.promptText, MaxTokens: req.maxTokens, Seed: s.cfg.Seed})
	}
	if a, ok := g.(answerGen); ok {
		right := a.right
		rec.EvalSuite, rec.EvalItem, rec.EvalRight = a.suite, a.item, &right
	}
	if _, eval := g.(answerGen); !eval && s.cfg.ReasoningTokens > 0 && api == apiChat && !req.constrained() {
		// A reasoning model thinks first; the answer gets what max_tokens
		// leaves (at least a token, which the cut may still drop). Eval
		// items are answered without thinking, so that their truth (right
		// or wrong, drawn for the whole answer) stays what is streamed.
		n := s.cfg.ReasoningTokens
		inner := g
		if req.maxTokens > n {
			inner = s.gen.generate(genRequest{Prompt: req.promptText, MaxTokens: req.maxTokens - n, Seed: s.cfg.Seed})
		}
		g = newThinker(inner, n, req.maxTokens, uint64(len(req.promptText)))
	}
	if req.constrained() {
		rec.Structured = &TruthStructured{Valid: !wrong}
	}
	sq := newSeq(req.promptTokens, req.blocks, g, req.maxTokens)
	sq.constrained = req.constrained()
	sq.adapter = adapter
	defer func() {
		rec.AdapterLoaded = sq.loadedAdapter.Load()
		if s.cfg.AutoscaleMax > 1 {
			rec.Replicas = int(sq.replicas.Load())
		}
	}()
	ctx := r.Context()
	select {
	case s.eng.submit <- sq:
	case <-s.eng.done:
		fail(http.StatusServiceUnavailable, "ServiceUnavailableError", errShutdown)
		return
	case <-ctx.Done():
		rec.Error = "client disconnected"
		return
	}
	select {
	case <-sq.accepted:
	case <-s.eng.done:
		fail(http.StatusServiceUnavailable, "ServiceUnavailableError", errShutdown)
		return
	case <-ctx.Done():
		sq.canceled.Store(true)
		rec.Error = "client disconnected"
		return
	}
	if sq.fail == failHTTP {
		fail(http.StatusInternalServerError, "InternalServerError", "simulated engine error")
		return
	}
	f := newFormat(api, s.cfg.Model, id)
	if req.stream {
		s.stream(w, r, req, sq, g, f, rec)
	} else {
		s.whole(w, r, req, sq, g, f, rec)
	}
}

// stream writes the response as server-sent events, one chunk per token,
// timing each chunk after it has been written and flushed.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *request, sq *seq, g generation, f *format, rec *TruthRecord) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 0, 512)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	gone := func() {
		sq.canceled.Store(true)
		rec.Error = "client disconnected"
	}
	if f.api == apiChat {
		if !send(f.roleChunk(buf[:0])) {
			gone()
			return
		}
	} else if rc.Flush() != nil {
		gone()
		return
	}
	ctx := r.Context()
	written := 0
	for {
		select {
		case <-sq.notify:
		case <-ctx.Done():
			gone()
			return
		}
		st := sq.snapshot()
		rec.CachedTokens, rec.Preemptions = st.cached, st.preempted
		for ; written < st.emitted; written++ {
			if tg, ok := g.(toolGen); ok {
				buf = f.toolChunk(buf[:0], tg, written)
			} else if th, ok := g.(thinker); ok && th.thinking(written) {
				buf = f.reasoningChunk(buf[:0], g.Token(written))
				rec.ReasoningTokens = written + 1
			} else {
				buf = f.tokenChunk(buf[:0], g.Token(written))
			}
			if !send(buf) {
				gone()
				return
			}
			t := s.ns(time.Now())
			if written == 0 {
				rec.FirstTokenNS = t
			}
			rec.TokenNS = append(rec.TokenNS, t)
			rec.OutputTokens = written + 1
		}
		if !st.ended {
			continue
		}
		if st.err != "" {
			rec.Error = st.err
			send(f.errorEvent(buf[:0], st.err))
			rec.EndNS = s.ns(time.Now())
			return
		}
		rec.FinishReason = sq.finish
		rec.ToolCall = truthToolCall(g, written)
		buf = f.finalChunk(buf[:0], sq.finish)
		if req.includeUsage {
			buf = f.usageChunk(buf, req.promptTokens, written, rec.ReasoningTokens)
		}
		buf = append(buf, "data: [DONE]\n\n"...)
		if !send(buf) {
			gone()
			return
		}
		rec.EndNS = s.ns(time.Now())
		return
	}
}

// whole waits for the request to finish and writes one JSON response.
func (s *Server) whole(w http.ResponseWriter, r *http.Request, req *request, sq *seq, g generation, f *format, rec *TruthRecord) {
	ctx := r.Context()
	var st seqState
	for !st.ended {
		select {
		case <-sq.notify:
		case <-ctx.Done():
			sq.canceled.Store(true)
			rec.Error = "client disconnected"
			return
		}
		st = sq.snapshot()
	}
	rec.OutputTokens, rec.CachedTokens, rec.Preemptions = st.emitted, st.cached, st.preempted
	if st.err != "" {
		writeError(w, http.StatusInternalServerError, "InternalServerError", st.err)
		rec.Error = st.err
		rec.EndNS = s.ns(time.Now())
		return
	}
	rec.FinishReason = sq.finish
	rec.ToolCall = truthToolCall(g, st.emitted)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(f.whole(nil, g, st.emitted, sq.finish, req.promptTokens))
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if err != nil {
		rec.Error = "client disconnected"
	}
	rec.EndNS = s.ns(time.Now())
}

// adapter is the LoRA adapter a request's model names, "" for the base
// model; known is false for a name the sim does not serve (with Loras
// set: without, every name is the base model).
func (s *Server) adapter(model string) (adapter string, known bool) {
	if s.loras == nil || model == "" || model == s.cfg.Model {
		return "", true
	}
	if s.loras.has(model) {
		return model, true
	}
	return "", false
}

// toolAnswer is the --answers answer to req when req declares tools and
// its prompt is a tool_call item's.
func (s *Server) toolAnswer(req *request) (*answer, bool) {
	a, ok := s.gen.(*answerer)
	if !ok || req.tool == nil {
		return nil, false
	}
	return a.toolAnswer(req.promptText)
}
