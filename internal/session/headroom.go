package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/run"
	"github.com/perfgate/perfgate/internal/stack"
	"github.com/perfgate/perfgate/internal/workload"
)

// headroomSpec is the capacity search a scenario's headroom section runs
// as: over context tokens (or users), every load a whole number, with the
// headroom's limits as the search's Limit; engine says the engine's metrics
// page is read (telemetry), so that a repetition it was not read in is not
// judged as holding. A parsed config has every default applied already.
func headroomSpec(sc config.Scenario, engine bool) capacity.Spec {
	h := sc.Headroom
	rec := h.Result()
	s := capacity.Spec{Metric: rec.Metric, Min: h.Min, Max: h.Max, Start: h.Start, Resolution: h.Resolution,
		Rule: h.Holds, Confidence: h.Confidence, Repetitions: h.Repetitions, Budget: h.Probes,
		Integer: true, Headroom: rec.Headroom}
	// Any failed request breaks a probe: a server that refuses one long
	// request in a hundred does not hold that context.
	s.MaxErrorRate = 0
	for _, k := range slices.Sorted(maps.Keys(h.SLO)) {
		s.SLO = append(s.SLO, capacity.Objective{Metric: k, LimitMS: float64(h.SLO[k]) / 1e6})
	}
	searchDefaults(&s)
	s.Limit = headroomLimit(*rec.Headroom, engine)
	return s
}

// headroomLimit is a headroom search's Limit: why a repetition did not hold
// its context, beyond its SLOs. In order: a request failed (refused for its
// length, cut by a crash, out of memory: the first error is kept, as the
// server said it); an answer came back shorter than asked, which is how an
// engine that truncates at its context (llama.cpp's server) says it ran
// out; the engine never ran every user at once (the others waited for room
// in its KV cache: a server that holds one context at a time does not hold
// them all); the engine preempted more than the limit; its KV cache went
// past its limit. With engine set (the page is read), a repetition in which
// it was not (no window, fewer than two scrapes: a server under stress may
// stop answering it) breaks: nothing says it held. Telemetry the engine's
// page never reports cannot break a repetition: the search says so once
// (headroomUnchecked).
func headroomLimit(h result.HeadroomSearch, engine bool) func(load float64, r *result.Repetition) string {
	return func(load float64, r *result.Repetition) string {
		users := h.Users
		if users == 0 { // a search over users: the probe's
			users = int(load)
		}
		switch {
		case r.Failed > 0:
			return fmt.Sprintf("rep %d: %d of %d requests failed: %s", r.Index, r.Failed, r.Sent, r.FirstError)
		case r.Completed == 0 && r.FirstError != "":
			return fmt.Sprintf("rep %d: %s", r.Index, r.FirstError)
		case strings.HasPrefix(r.FirstError, diedPrefix):
			return fmt.Sprintf("rep %d: %s, after its requests", r.Index, r.FirstError)
		case r.Completed > 0 && r.TokensFrom == "usage" && r.OutputTokens < r.Completed*h.OutputTokens:
			return fmt.Sprintf("rep %d: answers cut short: %d output tokens of the %d asked (%d requests × %d): the server stopped early (out of context, or it ignores min_tokens and ignore_eos)",
				r.Index, r.OutputTokens, r.Completed*h.OutputTokens, r.Completed, h.OutputTokens)
		case engine && r.Completed > 0 && (r.Engine == nil || r.Engine.Scrapes < 2):
			return fmt.Sprintf("rep %d: the engine's metrics page was not read during it (a server under stress may stop answering it): nothing says it held", r.Index)
		}
		if e := r.Engine; e != nil {
			if runningJudged(e) && *e.RunningPeak < float64(users) {
				return fmt.Sprintf("rep %d: the engine ran at most %g of the %d users at once: the others waited for room (its KV cache, or its batch, holds fewer contexts)",
					r.Index, *e.RunningPeak, users)
			}
			if e.Preemptions != nil && *e.Preemptions > h.MaxPreemptions {
				return fmt.Sprintf("rep %d: the engine preempted %g requests (the limit is %g): its KV cache could not hold every context",
					r.Index, *e.Preemptions, h.MaxPreemptions)
			}
			if e.KVCachePeak != nil && h.MaxKVCache > 0 && *e.KVCachePeak > h.MaxKVCache {
				return fmt.Sprintf("rep %d: KV-cache usage peaked at %.1f%% (the limit is %.1f%%)",
					r.Index, 100**e.KVCachePeak, 100*h.MaxKVCache)
			}
		}
		return ""
	}
}

// minRunningScrapes is the fewest scrapes of the engine's page a repetition
// needs before its running peak says whether every user ran at once: the
// peak is a maximum over the scrapes, and a repetition over in a scrape or
// two may have had every user running between them.
const minRunningScrapes = 5

// runningJudged reports whether a repetition's engine telemetry can say
// whether every user ran at once: the page reports the requests running,
// scraped often enough.
func runningJudged(e *result.EngineTelemetry) bool {
	return e != nil && e.RunningPeak != nil && e.Scrapes >= minRunningScrapes
}

// headroomUnchecked says what of a headroom search's limits its
// repetitions could not check: the engine's metrics page did not report
// the requests running, preemptions, or KV-cache usage where max_kv_cache
// is set; repetitions without the server's usage, whose answers' lengths are
// unknown; or repetitions too short for the page to show whether every user
// ran at once. Empty when every limit was checked.
func headroomUnchecked(h result.HeadroomSearch, probes []result.CapacityProbe) []string {
	preempt, kv, running := true, h.MaxKVCache > 0, true
	short, noUsage := 0, 0
	for _, p := range probes {
		for _, r := range p.Repetitions {
			if r.Completed > 0 && r.TokensFrom != "usage" {
				noUsage++
			}
			if e := r.Engine; e != nil {
				preempt = preempt && e.Preemptions == nil
				kv = kv && e.KVCachePeak == nil
				running = running && e.RunningPeak == nil
				if e.RunningPeak != nil && !runningJudged(e) && r.Completed > 0 {
					short++
				}
			}
		}
	}
	var missing, out []string
	if running {
		missing = append(missing, "the requests running (whether every user ran at once)")
	}
	if preempt {
		missing = append(missing, "preemptions (headroom.max_preemptions)")
	}
	if kv {
		missing = append(missing, "KV-cache usage (headroom.max_kv_cache)")
	}
	if len(missing) > 0 {
		out = append(out, "the engine's metrics page did not report "+strings.Join(missing, " or ")+
			": the probes were judged on refusals, cut answers, crashes and SLOs alone")
	}
	if noUsage > 0 {
		out = append(out, fmt.Sprintf("%d repetitions were not checked for answers cut short: the server's usage was missing or refused, and a stream's chunks are not tokens", noUsage))
	}
	if short > 0 && !running {
		out = append(out, fmt.Sprintf("%d repetitions were too short for the engine's page to show whether every user ran at once (fewer than %d scrapes): lengthen them (requests, duration) or shorten telemetry.interval",
			short, minRunningScrapes))
	}
	return out
}

// calibrationWords are the prompt lengths, in words, of the two requests
// that calibrate a headroom search's prompts: short enough for any
// server's context, long enough apart for the slope.
const (
	calibrationShort = 16
	calibrationLong  = 144
)

// calibrate measures how many tokens a prompt of synthetic words is on the
// server: two one-token requests of calibrationShort and calibrationLong
// words, read from their usage, salted as the scenario's passes are (the
// salt's tokens are then part of the overhead). A server that reports no
// usage, or fails them, gets one token a word, said in the calibration's
// note.
func (s *session) calibrate(ctx context.Context, sc run.Scenario, d run.Sender) *result.Calibration {
	assumed := func(why string) *result.Calibration {
		return &result.Calibration{TokensPerWord: 1, Note: cut(why, 900) + "; one token a word is assumed"}
	}
	tokens := func(words int) (int, error) {
		reqs, err := run.HeadroomRequests(s.cfg.Target.API, words, 1, 1, s.cfg.Seed)
		if err != nil {
			return 0, err
		}
		req := reqs[0]
		if sc.Salt {
			req = req.Salted(workload.SaltText(uint64(s.cfg.Seed) ^ uint64(words)))
		}
		resp := d.Do(ctx, &req, fmt.Sprintf("perfgate-%s-calibrate-%d", s.runID, words))
		switch {
		case resp.Err != nil:
			return 0, resp.Err
		case resp.TokensFrom != client.TokensFromUsage || resp.PromptTokens <= 0:
			return 0, errors.New("the server reported no usage")
		}
		return resp.PromptTokens, nil
	}
	p1, err := tokens(calibrationShort)
	if err != nil {
		return assumed(fmt.Sprintf("calibration request of %d words: %v", calibrationShort, err))
	}
	p2, err := tokens(calibrationLong)
	if err != nil {
		return assumed(fmt.Sprintf("calibration request of %d words: %v", calibrationLong, err))
	}
	per := float64(p2-p1) / float64(calibrationLong-calibrationShort)
	overhead := float64(p1) - per*calibrationShort
	if !(per > 0 && per <= maxTokensPerWord) || !(math.Abs(overhead) <= result.MaxHeadroomTokens) {
		// A usage that cannot be true (a word of a hundred tokens, a
		// negative template) sizes nothing.
		return assumed(fmt.Sprintf("%d words were %d prompt tokens and %d words %d, which sizes no prompt", calibrationShort, p1, calibrationLong, p2))
	}
	return &result.Calibration{TokensPerWord: per, OverheadTokens: overhead, Measured: true}
}

// maxTokensPerWord is the most tokens a word of the synthetic vocabulary
// can be on any tokenizer a calibration believes: its words are common
// English ones, one to three tokens on every tokenizer served today.
const maxTokensPerWord = 16

// promptWords is how many words make a prompt of tokens tokens on the
// server, by its calibration; at least one.
func promptWords(c *result.Calibration, tokens int) int {
	return max(1, int(math.Round((float64(tokens)-c.OverheadTokens)/c.TokensPerWord)))
}

// searchHeadroom measures sc by a headroom search: it calibrates the
// prompts, warms the stack up once at the first probe's load, then runs
// the search, each probe at its users and context with requests of its
// own, each under a crash watch of its own. A server that dies under a
// probe is the probe's answer, not the run's end: its repetitions break
// with the crash's message, and a stack perfgate started is started again
// (and warmed up again) before the next probe. An external server cannot
// be started again; its death ends the run.
func (s *session) searchHeadroom(ctx context.Context, sc run.Scenario, refused *refusals, res result.ScenarioResult) (result.ScenarioResult, error) {
	c := sc.Config
	h := c.Headroom
	if n := len(s.cfg.Target.Replicas()); n > 1 {
		return res, fmt.Errorf("scenario %s: a headroom search judges one engine by its metrics page, and the target has %d replicas behind perfgate's router: search one replica (its own config, one base_url)", c.Name, n)
	}
	spec := headroomSpec(c, s.telemetryInfo.Engine.Available())
	unit := "tokens"
	if h.Search == config.HeadroomUsers {
		unit = "users"
	}
	s.begin(fmt.Sprintf("%s: calibrating prompts to the server's tokenizer", c.Name))
	cal := s.calibrate(ctx, sc, refused)
	if cal.Measured {
		s.detail("a prompt of n words is %.1f + %.3f×n tokens", cal.OverheadTokens, cal.TokensPerWord)
	} else {
		s.detail("warning: %s", cal.Note)
	}
	verb := "hold"
	if h.Users == 1 {
		verb = "holds"
	}
	what := fmt.Sprintf("the longest context %s %s, from %s to %s tokens", usersText(h.Users), verb, capacity.FormatLoad(h.Min), capacity.FormatLoad(h.Max))
	if h.Search == config.HeadroomUsers {
		what = fmt.Sprintf("the most users that hold %d tokens each, from %s to %s", h.Context, capacity.FormatLoad(h.Min), capacity.FormatLoad(h.Max))
	}
	s.begin(fmt.Sprintf("%s: searching headroom (%s, %d output tokens a request; at most %d probes of %d repetitions, and up to %d closing probes)",
		c.Name, what, h.OutputTokens, spec.Budget, spec.Repetitions, capacity.MaxClosing))

	n := 0
	warm := true // warm up before the next probe: the first, and after a restart
	restarted := map[int]bool{}
	probe := func(ctx context.Context, load float64, phase string) ([]result.Repetition, *result.Warmup, error) {
		n++
		users, ctxTokens := h.Users, h.Context
		if h.Search == config.HeadroomUsers {
			users = int(load)
		} else {
			ctxTokens = int(load)
		}
		psc, err := headroomProbe(s.cfg, sc, cal, users, ctxTokens, n)
		if err != nil {
			return nil, nil, err
		}
		d := &run.Dispatcher{Sender: refused, Clock: s.clock}
		watched, stopWatch := stack.Watch(ctx, s.inst, s.healthAt(s.watchedRoot(c), s.cfg.Stack.HealthInterval), s.cfg.Stack.HealthFailures)
		reps, w, err := s.measureHeadroomProbe(watched, psc, d, spec, warm, fmt.Sprintf("%s probe %d (%s) at %s %s", c.Name, n, phase, capacity.FormatLoad(load), unit))
		stopWatch()
		warm = false
		crash := s.crashedUnder(ctx, watched, reps, err)
		if crash == nil {
			if err == nil {
				s.detail("%s", measuredContext(reps, h.OutputTokens))
			}
			return reps, w, err
		}
		if ctx.Err() != nil {
			return nil, nil, context.Cause(ctx)
		}
		msg := diedPrefix + crashWords(crash)
		for r := len(reps) + 1; r <= spec.Repetitions; r++ {
			reps = append(reps, result.Repetition{Index: r, FirstError: msg})
		}
		for i := range reps {
			// A request that failed for want of a server failed because it
			// died: the crash is what the repetition says first. A probe the
			// server died under breaks even where its requests were done.
			switch r := &reps[i]; {
			case r.Failed > 0 && r.FirstError != "":
				r.FirstError = cut(msg+"; the first failed request: "+r.FirstError, maxFirstError)
			default:
				r.FirstError = cut(msg, maxFirstError)
			}
		}
		if s.cfg.Stack.Kind == config.StackExternal {
			return nil, nil, fmt.Errorf("the server went down at %s %s (%w); perfgate did not start it, so it cannot start it again to go on: run the search on a stack perfgate starts",
				capacity.FormatLoad(load), unit, crash)
		}
		s.detail("%s at %s %s: that is this probe's answer; starting the stack again", msg, capacity.FormatLoad(load), unit)
		s.stopStack()
		if err := s.startStack(ctx); err != nil {
			return nil, nil, fmt.Errorf("start the stack again after it died at %s %s: %w", capacity.FormatLoad(load), unit, err)
		}
		restarted[n-1], warm = true, true
		refused.Sender = s.client // a kubernetes stack's new pods are a new client
		return reps, w, nil
	}
	log := func(format string, args ...any) { s.detail(c.Name+": "+format, args...) }
	found, reps, err := capacity.Search(ctx, spec, probe, log)
	if err != nil {
		return res, fmt.Errorf("scenario %s: %w", c.Name, err)
	}
	for i := range found.Probes {
		found.Probes[i].Restarted = restarted[i]
	}
	found.Calibration = cal
	found.Warnings = append(found.Warnings, headroomUnchecked(*spec.Headroom, found.Probes)...)
	res.Capacity, res.Repetitions = found, reps
	res.Load.Rate, res.Load.Concurrency = 0, 0
	// The scenario's workload is a stand-in for its hash: each probe sent
	// requests of its own context, which the probes record.
	res.WorkloadShape = nil
	res.Warmup = found.Probes[found.At].Warmup
	s.detail("%s: %s", c.Name, headroomLine(found, unit))
	for _, w := range found.Warnings {
		s.detail("warning: %s", w)
	}
	return res, nil
}

// diedPrefix starts the first error of a repetition of a probe the server
// died under: the search's Limit breaks such a repetition whatever its
// requests did.
const diedPrefix = "the server died: "

// maxFirstError bounds the first error a probe's repetition carries once
// the crash is written into it (the result's bound on a probe's why).
const maxFirstError = 1024

// cut is s cut to at most n bytes of valid UTF-8, "..." marking a cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}

// crashWords is a crash in one line, the engine's last words first: "sh
// exited with status 1: torch.OutOfMemoryError: CUDA out of memory ...
// (the last of 4 lines of its log)". The whole tail is in the stack's log.
func crashWords(crash *stack.CrashError) string {
	var ee *stack.ExitError
	if !errors.As(crash, &ee) || len(ee.Tail) == 0 {
		return strings.Join(strings.Fields(crash.Error()), " ")
	}
	how := fmt.Sprintf("status %d", ee.Code)
	if ee.Signal != "" {
		how = "killed by " + ee.Signal
	}
	if ee.OOMKilled {
		how += ", out of memory"
	}
	last := strings.Join(strings.Fields(ee.Tail[len(ee.Tail)-1]), " ")
	return fmt.Sprintf("%s exited (%s): %s (the last line of its log)", ee.What, how, last)
}

// usersText is "1 user", "16 users".
func usersText(n int) string {
	if n == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%d users", n)
}

// headroomProbe is sc as probe n measures it: users closed-loop users,
// each request a prompt sized to context tokens with the headroom's output,
// one pass of the scenario's requests a repetition (by default two a
// user), salted afresh as a capacity probe is.
func headroomProbe(cfg *config.Config, sc run.Scenario, cal *result.Calibration, users, tokens, n int) (run.Scenario, error) {
	h := sc.Config.Headroom
	count := sc.Config.Requests
	if count == 0 {
		count = config.DefaultHeadroomRequestsPerUser * users
	}
	words := promptWords(cal, tokens-h.OutputTokens)
	reqs, err := run.HeadroomRequests(cfg.Target.API, words, h.OutputTokens, min(count, config.MaxRequests), cfg.Seed)
	if err != nil {
		return sc, fmt.Errorf("scenario %s probe %d: %w", sc.Config.Name, n, err)
	}
	psc := atLoad(sc, config.CapacityConcurrency, float64(users), n)
	psc.Requests = reqs
	psc.Config.Requests = 0 // one pass over them
	// A repetition's failures are the probe's answer: the search judges
	// them (any failure breaks it), not the run's max_error_rate.
	psc.Config.MaxErrorRate = 1
	return psc, nil
}

// measureHeadroomProbe measures one probe: a warm-up first when warm is
// set (whose failures the repetitions judge), then the spec's repetitions
// with the cool-down between them. A broken repetition counts against the
// probe rather than failing the run.
func (s *session) measureHeadroomProbe(ctx context.Context, psc run.Scenario, d *run.Dispatcher, spec capacity.Spec, warm bool, title string) ([]result.Repetition, *result.Warmup, error) {
	var w *result.Warmup
	if warm {
		var err error
		w, err = s.warmUpAs(ctx, psc, d, warming{title: title, saltTag: psc.SaltTag})
		var unsteady *run.UnsteadyError
		var failing *run.FailingError
		if errors.As(err, &unsteady) || errors.As(err, &failing) {
			s.detail("%v: measuring the probe anyway, its repetitions decide whether it holds", err)
			err = nil
		}
		if err != nil {
			return nil, w, err
		}
	} else {
		s.begin(title)
	}
	reps, err := s.probeRepetitions(ctx, s.measurement(d), psc, spec.Repetitions, title)
	return reps, w, err
}

// crashedUnder is the crash of the stack a probe ran into: the probe's
// watch saw it exit or stop answering; or a repetition failed for want of a
// server (not an HTTP answer: a refusal for length is the server alive and
// saying no) and a process perfgate started exits within stack.ExitGrace,
// or the server (any, an external one too) fails a health check made then.
// A probe's failed requests end in milliseconds, long before the watch's
// health failures add up: without that check a dead or hung server would
// make every later probe "break". nil when the stack lives.
func (s *session) crashedUnder(ctx, watched context.Context, reps []result.Repetition, err error) *stack.CrashError {
	var crash *stack.CrashError
	if errors.As(context.Cause(watched), &crash) {
		return crash
	}
	if s.inst == nil || ctx.Err() != nil {
		return nil
	}
	lost := err != nil
	for _, r := range reps {
		for kind, k := range r.Errors {
			lost = lost || (k > 0 && kind != string(client.ErrHTTP))
		}
	}
	if !lost {
		return nil
	}
	if s.cfg.Stack.Kind != config.StackExternal {
		if crash := stack.ExitedWithin(ctx, s.inst, stack.ExitGrace); crash != nil {
			return crash
		}
	}
	h := s.health(s.cfg.Stack.HealthInterval)
	if h.Path == "" || h.Path == "none" {
		return nil // nothing to ask: the failures are the probe's answer
	}
	if herr := h.Check(ctx, healthCheckTimeout); herr != nil && ctx.Err() == nil {
		return &stack.CrashError{Health: herr, Failures: 1, Tail: s.inst.Tail(stack.TailLines)}
	}
	return nil
}

// healthCheckTimeout bounds the health check a probe's lost requests make.
const healthCheckTimeout = 10 * time.Second

// measuredContext says what context a probe's completed requests had, by
// the server's count: "measured context 4,101 tokens (4,037 prompt + 64
// output)", or that none completed.
func measuredContext(reps []result.Repetition, output int) string {
	prompt, done := 0, 0
	for _, r := range reps {
		if r.TokensFrom == "usage" {
			prompt += r.PromptTokens
			done += r.Completed
		}
	}
	if done == 0 {
		return "measured context: no request completed with the server's usage"
	}
	p := float64(prompt) / float64(done)
	return fmt.Sprintf("measured context %.0f tokens (%.0f prompt + %d output), by the server's usage", p+float64(output), p, output)
}

// headroomLine is a headroom search's outcome in one line for the run's
// log, with the boundary's message where the server gave one.
func headroomLine(c *result.Capacity, unit string) string {
	f := capacity.FormatLoad
	var line string
	switch c.Outcome {
	case result.CapacityBelowMin:
		line = fmt.Sprintf("nothing held at the lowest probe, %s %s: headroom below it (%d probes)", f(c.Breaks), unit, len(c.Probes))
	case result.CapacityAboveMax:
		line = fmt.Sprintf("everything held up to the highest probe, %s %s: headroom at least that (%d probes)", f(c.Holds), unit, len(c.Probes))
	case result.CapacityBudget:
		line = fmt.Sprintf("headroom in [%s, %s) %s after all %d probes of the budget", f(c.Holds), f(c.Breaks), unit, len(c.Probes))
	default:
		line = fmt.Sprintf("headroom %s %s: holds at %s, breaks at %s (%d probes)", f(c.Holds), unit, f(c.Holds), f(c.Breaks), len(c.Probes))
	}
	if c.Boundary != "" {
		line += "; at " + capacity.FormatLoad(c.Breaks) + " " + unit + ": " + c.Boundary
	}
	return line
}
