package sim

import (
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxCatchUp bounds how far behind its absolute schedule the step loop may
// run and still catch up by shortening the next steps. Timer lateness (well
// under this) is caught up so that time does not drift; a longer pause (GC,
// CPU starvation, a stopped process) moves the schedule instead of bursting.
const maxCatchUp = 50 * time.Millisecond

// seq is one request's sequence. The handler fills the first group before
// submitting it; the step loop owns the "step loop only" group; the two talk
// through accepted, notify, canceled and the locked state.
type seq struct {
	prompt  int      // prompt tokens
	blocks  []uint64 // prefix-cache block hashes of the prompt
	target  int      // output tokens to generate
	finish  string   // finish reason once target tokens are generated
	reserve int      // its context, prompt + max_tokens: what KVReserve reserves
	// constrained: decoded under a grammar (Config.ConstrainedSlowdown).
	constrained bool
	// adapter is the LoRA adapter it decodes with, "" for the base model;
	// loadedAdapter is set when its admission loaded the adapter.
	adapter       string
	loadedAdapter atomic.Bool
	// replicas is how many replicas were ready when it was admitted
	// (Config.AutoscaleMax); 0 before.
	replicas atomic.Int32
	// adapterGen is the generation of its adapter it decodes with (step
	// loop only): an unload starts a new one.
	adapterGen int

	// accepted is closed by the step loop once it has taken the request in,
	// after setting fail.
	accepted chan struct{}
	fail     failure

	// notify (capacity 1) is signalled, never blocking, when state changes.
	notify chan struct{}
	// canceled is set by the handler when its client is gone; the step loop
	// then frees the sequence and its KV at the next step.
	canceled atomic.Bool

	mu    sync.Mutex
	state seqState

	// Step loop only.
	failAfter int
	arrival   time.Time
	lastToken time.Time
	// prefillTo is the tokens to prefill before the next token: the prompt,
	// or prompt and output so far for a sequence resumed after a
	// preemption (recompute).
	prefillTo int
	prefilled int
	cached    int // prompt tokens found in the prefix cache at admission
	scheduled int
	generated int
	// held is the KV tokens it holds while running (Config.KVPolicy):
	// prompt + max_tokens under KVReserve; under KVPreempt its prompt and
	// output but the newest token, whose KV the next step writes.
	held      int
	preempted int // times it was preempted
}

// seqState is what the step loop publishes to the handler.
type seqState struct {
	emitted   int    // tokens generated so far
	cached    int    // prompt tokens the prefix cache served
	preempted int    // times it was preempted (Config.KVPolicy)
	ended     bool   // no more tokens will come
	err       string // why it ended, if it failed
}

func newSeq(prompt int, blocks []uint64, g generation, maxTokens int) *seq {
	return &seq{
		prompt:    prompt,
		blocks:    blocks,
		target:    max(g.Len(), 1),
		finish:    g.FinishReason(),
		reserve:   prompt + maxTokens,
		prefillTo: prompt,
		accepted:  make(chan struct{}),
		notify:    make(chan struct{}, 1),
	}
}

func (s *seq) publish(st seqState) {
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default: // a signal is already pending; the handler will read the latest state
	}
}

func (s *seq) snapshot() seqState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

const (
	errMidStream = "simulated engine error during generation"
	errShutdown  = "server shutting down"
	errCrashed   = "simulated engine crash"
)

// engine is the step loop: continuous batching over running sequences.
type engine struct {
	cfg       Config
	start     time.Time
	model     *stepModel
	m         *metrics
	cache     *prefixCache // nil when prefix caching is off
	zeroDelay bool

	submit chan *seq
	stop   chan struct{} // closed to stop the loop
	done   chan struct{} // closed when the loop has exited

	steps atomic.Int64 // steps run, for tests

	// crash, when set, is told why the step loop dies of an injected crash
	// (Config.OOMTokens) before it aborts its sequences: the server cuts
	// its connections there, as a dying process does.
	crash func(error)

	// Step loop only.
	waiting []*seq
	running []*seq
	kvUsed  int // KV tokens the running sequences hold
	kvPeak  int // the most kvUsed has been, for tests
	// aborted is why the running and waiting sequences end when the loop
	// stops: errShutdown, or errCrashed.
	aborted string
	plan    []time.Duration // every step's modelled duration, when cfg.recordSteps
	// published holds a step's sequence states until its gauges are set.
	published []published
	// replicas are the replicas ready (Config.AutoscaleMax), and
	// scaleReady when the one starting is ready (zero when none is).
	replicas   int
	scaleReady time.Time
	idleSince  time.Time // when the engine last fell idle
	// loras are the slots' adapters, least recently used first, each of
	// the generation it was loaded at (gens: an unload starts a new
	// generation, so a slot of an older one serves no new request but is
	// held until its running requests end); loading is the load time the
	// next step pays.
	loras   []loraSlot
	gens    map[string]int
	loading time.Duration

	// evictions are adapters unloaded at run time, which start a new
	// generation at the next admission (evict).
	evictMu   sync.Mutex
	evictions []string
}

// loraSlot is an adapter in a slot, of one generation.
type loraSlot struct {
	name string
	gen  int
}

// evict makes adapter name leave its slot before the next admission: it
// was unloaded (/v1/unload_lora_adapter). Safe from any goroutine.
func (e *engine) evict(name string) {
	e.evictMu.Lock()
	e.evictions = append(e.evictions, name)
	e.evictMu.Unlock()
}

// applyEvictions starts a new generation of each unloaded adapter: its
// slot serves no new request, and is freed once its running requests end.
func (e *engine) applyEvictions() {
	e.evictMu.Lock()
	ev := e.evictions
	e.evictions = nil
	e.evictMu.Unlock()
	for _, name := range ev {
		if e.gens == nil {
			e.gens = map[string]int{}
		}
		e.gens[name]++
	}
}

func newEngine(cfg Config, start time.Time, m *metrics) *engine {
	e := &engine{
		cfg:       cfg,
		start:     start,
		model:     newStepModel(cfg, start),
		m:         m,
		zeroDelay: cfg.StepBase == 0 && cfg.PerSeq == 0 && cfg.PerPrefillToken == 0,
		submit:    make(chan *seq, 256),
		replicas:  1,
		aborted:   errShutdown,
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if cfg.PrefixCache {
		e.cache = newPrefixCache(cfg.KVCacheTokens / blockSize)
	}
	return e
}

// run is the step loop. It blocks while there is nothing to do.
func (e *engine) run() {
	defer close(e.done)
	defer e.abortAll()
	if e.cfg.holdStart != nil {
		select {
		case <-e.cfg.holdStart:
		case <-e.stop:
			return
		}
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var stepStart time.Time
	for {
		if len(e.running) == 0 && len(e.waiting) == 0 {
			e.gauges()
			e.idleSince = time.Now()
			// An idle engine scaled up scales down on time, so that
			// /metrics says so between repetitions, not at the next
			// request.
			idle := time.NewTimer(time.Hour)
			idle.Stop()
			if e.cfg.AutoscaleMax > 1 && e.cfg.AutoscaleIdle > 0 && (e.replicas > 1 || !e.scaleReady.IsZero()) {
				idle.Reset(e.cfg.AutoscaleIdle)
			}
			select {
			case s := <-e.submit:
				idle.Stop()
				e.scaleDown(time.Now())
				e.intake(s)
			case <-idle.C:
				e.scaleDown(time.Now())
				continue
			case <-e.stop:
				idle.Stop()
				return
			}
			stepStart = time.Now()
		}
		if !e.drain() {
			return
		}
		e.reap()
		e.autoscale(time.Now())
		if e.cfg.preempts() {
			e.grow()
		}
		e.admit()
		if len(e.running) == 0 {
			continue
		}
		if now := time.Now(); e.zeroDelay || now.Sub(stepStart) > maxCatchUp {
			stepStart = now
		}
		prefill := e.schedule()
		if err := e.oom(); err != nil {
			e.aborted = errCrashed
			if e.crash != nil {
				e.crash(err)
			}
			return
		}
		// n replicas step together, each with its share of the batch.
		d := e.model.step(stepStart.Sub(e.start), (len(e.running)+e.replicas-1)/e.replicas, (prefill+e.replicas-1)/e.replicas)
		if e.cfg.ConstrainedSlowdown != 1 && e.anyConstrained() {
			d = time.Duration(float64(d) * e.cfg.ConstrainedSlowdown)
		}
		d += e.loading
		e.loading = 0
		if e.cfg.recordSteps {
			e.plan = append(e.plan, d)
		}
		end := stepStart.Add(d)
		if !e.waitUntil(timer, end) {
			return
		}
		if e.zeroDelay {
			runtime.Gosched() // let handlers run; the loop itself never waits here
		}
		e.steps.Add(1)
		e.finishStep(time.Now())
		stepStart = end
	}
}

// anyConstrained says whether a running sequence is constrained.
func (e *engine) anyConstrained() bool {
	for _, s := range e.running {
		if s.constrained {
			return true
		}
	}
	return false
}

// drain takes in every submitted request without blocking; false if stopped.
func (e *engine) drain() bool {
	for {
		select {
		case <-e.stop:
			return false
		case s := <-e.submit:
			e.intake(s)
		default:
			return true
		}
	}
}

// waitUntil waits for the deadline on the timer, taking in arrivals
// meanwhile; false if stopped.
func (e *engine) waitUntil(timer *time.Timer, end time.Time) bool {
	for {
		d := time.Until(end)
		if d <= 0 {
			return true
		}
		timer.Reset(d)
		select {
		case <-timer.C:
		case s := <-e.submit:
			timer.Stop()
			e.intake(s)
		case <-e.stop:
			timer.Stop()
			return false
		}
	}
}

func (e *engine) intake(s *seq) {
	s.arrival = time.Now()
	s.fail, s.failAfter = e.model.fate(s.target)
	if s.fail != failHTTP {
		e.waiting = append(e.waiting, s)
	}
	close(s.accepted)
	e.m.waiting.Set(float64(len(e.waiting)))
}

// reap drops sequences whose clients are gone, freeing their KV.
func (e *engine) reap() {
	keep := e.waiting[:0]
	for _, s := range e.waiting {
		if !s.canceled.Load() {
			keep = append(keep, s)
		}
	}
	clear(e.waiting[len(keep):])
	e.waiting = keep
	run := e.running[:0]
	for _, s := range e.running {
		if s.canceled.Load() {
			e.free(s)
			e.m.success.WithLabelValues("abort").Inc()
			continue
		}
		run = append(run, s)
	}
	clear(e.running[len(run):])
	e.running = run
}

// kvNeed is the KV tokens s takes when it is admitted: its whole context
// under KVReserve, the tokens it holds now (prompt and output so far) under
// KVPreempt.
func (e *engine) kvNeed(s *seq) int {
	if e.cfg.preempts() {
		return s.prompt + s.generated
	}
	return s.reserve
}

// free gives back the KV s holds.
func (e *engine) free(s *seq) {
	e.kvUsed -= s.held
	s.held = 0
}

// admit moves waiting requests into the batch, first come first served,
// while the batch has room and the head's KV (kvNeed) fits.
func (e *engine) admit() {
	e.applyEvictions()
	n := 0
	var skipped []*seq // waiting for an adapter slot: later requests go first
	for _, s := range e.waiting {
		need := e.kvNeed(s)
		if len(e.running) >= e.cfg.MaxBatch*e.replicas || e.kvUsed+need > e.cfg.KVCacheTokens*e.replicas {
			break
		}
		n++
		if !e.adapterSlot(s) {
			skipped = append(skipped, s)
			continue
		}
		s.held = need
		e.kvUsed += need
		e.kvPeak = max(e.kvPeak, e.kvUsed)
		s.replicas.Store(int32(e.replicas))
		// A sequence resumed after a preemption recomputes its prompt
		// and its output so far, all of it (no prefix-cache lookup).
		s.prefillTo = s.prompt + s.generated
		if e.cache != nil && s.preempted == 0 {
			hit := e.cache.lookup(s.blocks) * blockSize
			if hit >= s.prompt { // the last prompt token is always computed
				hit = s.prompt - 1
			}
			s.prefilled, s.cached = hit, hit
			e.m.prefixQueries.Add(float64(s.prompt))
			e.m.prefixHits.Add(float64(hit))
		}
		e.running = append(e.running, s)
	}
	if n > 0 {
		// The skipped keep their place at the head of the queue.
		rest := append(skipped, e.waiting[n:]...)
		k := copy(e.waiting, rest)
		clear(e.waiting[k:])
		e.waiting = e.waiting[:k]
	}
	e.gauges()
}

// autoscale readies the replica starting once its cold start is over, and
// starts another when the queue is long (Config.AutoscaleMax), one at a
// time.
func (e *engine) autoscale(now time.Time) {
	if e.cfg.AutoscaleMax <= 1 {
		return
	}
	if !e.scaleReady.IsZero() && !now.Before(e.scaleReady) {
		e.replicas++
		e.scaleReady = time.Time{}
		e.m.replicas.Set(float64(e.replicas))
	}
	if e.scaleReady.IsZero() && e.replicas < e.cfg.AutoscaleMax && len(e.waiting) >= e.cfg.AutoscaleQueue {
		e.scaleReady = now.Add(e.cfg.AutoscaleColdStart)
	}
}

// scaleDown is back to one replica when the engine, waking at now, has
// been idle for Config.AutoscaleIdle: a replica starting is cancelled too.
func (e *engine) scaleDown(now time.Time) {
	if e.cfg.AutoscaleIdle <= 0 || now.Sub(e.idleSince) < e.cfg.AutoscaleIdle {
		return
	}
	e.scaleReady = time.Time{}
	if e.replicas > 1 {
		e.replicas = 1
		e.m.replicas.Set(1)
	}
}

// adapterSlot makes s's adapter resident, loading it into a free slot or
// in place of the least recently used adapter that no running sequence
// uses, and marks it most recently used; false when every slot is busy.
// The base model needs no slot.
func (e *engine) adapterSlot(s *seq) bool {
	if s.adapter == "" {
		return true
	}
	want := loraSlot{s.adapter, e.gens[s.adapter]}
	s.adapterGen = want.gen
	if i := slices.Index(e.loras, want); i >= 0 {
		e.loras = append(slices.Delete(e.loras, i, i+1), want)
		return true
	}
	if len(e.loras) >= e.cfg.MaxLoras {
		victim := slices.IndexFunc(e.loras, func(l loraSlot) bool {
			return !slices.ContainsFunc(e.running, func(r *seq) bool { return r.adapter == l.name && r.adapterGen == l.gen })
		})
		if victim < 0 {
			return false
		}
		e.loras = slices.Delete(e.loras, victim, victim+1)
	}
	e.loras = append(e.loras, want)
	e.loading += e.cfg.LoraLoad
	s.loadedAdapter.Store(true)
	return true
}

// schedule assigns this step's prefill budget in batch order and returns
// the tokens scheduled.
func (e *engine) schedule() int {
	budget := e.cfg.PrefillBudget * e.replicas
	total := 0
	for _, s := range e.running {
		if budget == 0 {
			break
		}
		if rem := s.prefillTo - s.prefilled; rem > 0 {
			n := min(rem, budget)
			s.scheduled = n
			budget -= n
			total += n
		}
	}
	return total
}

// decoding says whether s's prefill is done: a step reads its newest token
// and writes that token's KV, as a decode step does.
func (s *seq) decoding() bool { return s.prefilled >= s.prefillTo }

// grow allocates this step's KV under KVPreempt before anything is
// admitted, as vLLM's scheduler serves the running requests first: every
// decoding sequence takes one token more, the KV of the token it reads
// (a token's KV is written in the step that reads it, so a sequence holds
// its prompt and its output but the newest token). While that does not
// fit, the most recently admitted running sequence is preempted
// (recompute: its KV is freed, and it goes back to the head of the queue,
// before the requests that never ran; readmitted, it prefills its prompt
// and output so far again and goes on).
//
// A lone sequence always fits: it holds at most prompt + max_tokens - 1
// tokens, and a request whose prompt + max_tokens is more than
// KVCacheTokens was refused.
func (e *engine) grow() {
	limit := e.cfg.KVCacheTokens * e.replicas
	growth := 0
	for _, s := range e.running {
		if s.decoding() {
			growth++
		}
	}
	n := len(e.running)
	for n > 1 && e.kvUsed+growth > limit {
		n--
		s := e.running[n]
		if s.decoding() {
			growth--
		}
		e.free(s)
		s.prefilled = 0
		s.preempted++
		e.m.preemptions.Inc()
	}
	for _, s := range e.running[:n] {
		if s.decoding() {
			s.held++
		}
	}
	e.kvUsed += growth
	e.kvPeak = max(e.kvPeak, e.kvUsed)
	if n < len(e.running) {
		// The preempted keep their admission order, at the head of the
		// queue.
		e.waiting = slices.Concat(e.running[n:], e.waiting)
		clear(e.running[n:])
		e.running = e.running[:n]
	}
}

// oom is the crash Config.OOMTokens stands for when the step schedules
// prefill for a sequence whose context is past it; nil otherwise.
func (e *engine) oom() error {
	if e.cfg.OOMTokens <= 0 {
		return nil
	}
	for _, s := range e.running {
		if s.scheduled > 0 && s.reserve > e.cfg.OOMTokens {
			return newOOMError(s.reserve, e.cfg.OOMTokens)
		}
	}
	return nil
}

// finishStep ends a step at now: prefill advances, and every sequence whose
// prefill is complete emits one token.
func (e *engine) finishStep(now time.Time) {
	gen := 0
	run := e.running[:0]
	for _, s := range e.running {
		s.prefilled += s.scheduled
		s.scheduled = 0
		if s.prefilled < s.prefillTo {
			run = append(run, s)
			continue
		}
		if s.generated == 0 {
			e.m.ttft.Observe(now.Sub(s.arrival).Seconds())
			e.m.promptTokens.Add(float64(s.prompt))
			if e.cache != nil {
				e.cache.insert(s.blocks)
			}
		} else {
			e.m.itl.Observe(now.Sub(s.lastToken).Seconds())
		}
		s.generated++
		s.lastToken = now
		gen++
		st := seqState{emitted: s.generated, cached: s.cached, preempted: s.preempted}
		switch {
		case s.fail == failMidStream && s.generated >= s.failAfter:
			st.ended, st.err = true, errMidStream
			e.m.success.WithLabelValues("abort").Inc()
		case s.generated >= s.target:
			st.ended = true
			e.m.success.WithLabelValues(s.finish).Inc()
			e.m.e2e.Observe(now.Sub(s.arrival).Seconds())
			e.m.reqPrompt.Observe(float64(s.prompt))
			e.m.reqGenToks.Observe(float64(s.generated))
		}
		e.published = append(e.published, published{s, st})
		if st.ended {
			e.free(s)
			continue
		}
		run = append(run, s)
	}
	clear(e.running[len(run):])
	e.running = run
	e.m.generationTokens.Add(float64(gen))
	// The gauges first: a client that reads /metrics once its answer has
	// ended sees the engine without it.
	e.gauges()
	for _, p := range e.published {
		p.s.publish(p.st)
	}
	clear(e.published)
	e.published = e.published[:0]
}

// published is a sequence's state of a step, published once the step's
// gauges are.
type published struct {
	s  *seq
	st seqState
}

func (e *engine) gauges() {
	e.m.running.Set(float64(len(e.running)))
	e.m.waiting.Set(float64(len(e.waiting)))
	u := float64(e.kvUsed) / float64(e.cfg.KVCacheTokens*e.replicas)
	e.m.kvCache.Set(u)
	e.m.gpuCache.Set(u)
	if e.m.loraInfo != nil {
		e.m.lora(adapterList(e.running), adapterList(e.waiting))
	}
}

// adapterList names the adapters of seqs, sorted, each once,
// comma-separated.
func adapterList(seqs []*seq) string {
	var names []string
	for _, s := range seqs {
		if s.adapter != "" && !slices.Contains(names, s.adapter) {
			names = append(names, s.adapter)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// abortAll ends every sequence when the loop stops.
func (e *engine) abortAll() {
	for _, list := range [][]*seq{e.running, e.waiting} {
		for _, s := range list {
			st := s.snapshot()
			st.ended, st.err = true, e.aborted
			s.publish(st)
		}
	}
	e.running, e.waiting, e.kvUsed = nil, nil, 0
	e.gauges()
}
