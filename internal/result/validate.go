package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/metric"

	"github.com/perfgate/perfgate/internal/problem"
)

// ErrInvalid is wrapped by every error about what a result holds (as
// opposed to failing to read it): a file that is not JSON, of another
// schema, or whose numbers cannot be true. Callers tell bad input (exit 2)
// from a failed run with errors.Is(err, ErrInvalid).
var ErrInvalid = errors.New("invalid result")

// Problem is one thing wrong with a result (or a report) file: the file,
// the line and column of a JSON error, the field path of a value
// (scenarios[0].repetitions[2].failed), and what is wrong. perfgate's one
// problem (internal/problem); every one result makes is of Kind ErrInvalid
// (Invalid).
type Problem = problem.Problem

// Invalid is p as a result problem: Kind ErrInvalid.
func Invalid(p Problem) *Problem {
	p.Kind = ErrInvalid
	return &p
}

// maxProblems is the most problems Validate reports; a file with more is
// not a result perfgate wrote.
const maxProblems = 20

// Validate checks that r holds numbers a run could have measured: counts
// that are not negative and add up (completed and failed at most sent),
// finite non-negative throughputs, latencies, durations and telemetry, an
// error rate and scores in [0, 1]. A result file is untrusted input (it may
// come from a fork's pull request), and a number that cannot be true is
// refused rather than averaged into a verdict. The checks are loose enough
// that every result perfgate writes passes. It returns nil, or the problems
// (each a *Problem naming the field) joined with errors.Join.
func (r *Result) Validate() error {
	v := &checker{}
	if r.Schema != Schema {
		v.add("schema", "%s, want %s", quote(r.Schema), Schema)
	}
	if len(r.Scenarios) == 0 {
		v.add("scenarios", "no scenarios")
	}
	if c := r.Cost; c != nil {
		v.nonNegative("cost.usd_per_gpu_hour", c.USDPerGPUHour)
		v.count("cost.gpus", c.GPUs)
	}
	v.percentileList(r.Percentiles)
	st := r.Identity.Stack
	v.count("identity.stack.replicas", st.Replicas)
	v.count("identity.stack.gpus", st.GPUs)
	for i, s := range st.PodStartsS {
		v.nonNegative(fmt.Sprintf("identity.stack.pod_starts_s[%d]", i), s)
	}
	if in := r.Incomplete; in != nil {
		v.count("incomplete.rounds", in.Rounds)
	}
	if u := r.Utilization; u != nil {
		v.utilizationBasis("utilization", u)
	}
	for i := range r.Scenarios {
		v.scenario(fmt.Sprintf("scenarios[%d]", i), &r.Scenarios[i])
	}
	return v.err()
}

type checker struct {
	probs   []error
	dropped int
}

func (v *checker) add(field, format string, args ...any) {
	if len(v.probs) >= maxProblems {
		v.dropped++
		return
	}
	v.probs = append(v.probs, Invalid(Problem{Path: field, Msg: fmt.Sprintf(format, args...)}))
}

func (v *checker) err() error {
	if v.dropped > 0 {
		v.probs = append(v.probs, Invalid(Problem{Msg: fmt.Sprintf("... and %d more problems", v.dropped)}))
	}
	return errors.Join(v.probs...)
}

// nonNegative checks a figure that is a finite number >= 0.
func (v *checker) nonNegative(field string, x float64) {
	if !(x >= 0) || math.IsInf(x, 0) {
		v.add(field, "want a finite number >= 0, got %s", fmtNum(x))
	}
}

// finite checks a figure that may be negative (a difference of two times).
func (v *checker) finite(field string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.add(field, "want a finite number, got %s", fmtNum(x))
	}
}

// fraction checks a share in [0, 1].
func (v *checker) fraction(field string, x float64) {
	if !(x >= 0 && x <= 1) {
		v.add(field, "want a fraction from 0 to 1, got %s", fmtNum(x))
	}
}

func (v *checker) count(field string, n int) {
	if n < 0 {
		v.add(field, "want a count >= 0, got %d", n)
	}
}

func (v *checker) optional(field string, x *float64) {
	if x != nil {
		v.nonNegative(field, *x)
	}
}

func (v *checker) stats(field string, s Stats) {
	if s.Count < 0 {
		v.add(field+".count", "want a count >= 0, got %d", s.Count)
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"mean", s.Mean}, {"min", s.Min}, {"p50", s.P50}, {"p90", s.P90}, {"p95", s.P95}, {"p99", s.P99}, {"p99_9", s.P999}, {"max", s.Max}} {
		v.nonNegative(field+"."+f.name, f.x)
	}
	v.checkPercentiles(field, s)
}

func (v *checker) scenario(p string, s *ScenarioResult) {
	if strings.TrimSpace(s.Name) == "" {
		v.add(p+".name", "missing")
	}
	v.nonNegative(p+".cold_start_ms", s.ColdStartMS)
	for i, c := range s.ColdStartsMS {
		if !(c > 0) || math.IsInf(c, 0) {
			v.add(fmt.Sprintf("%s.cold_starts_ms[%d]", p, i), "want a finite duration > 0, got %s", fmtNum(c))
		}
	}
	v.nonNegative(p+".slo.ttft_ms", s.SLO.TTFT)
	v.nonNegative(p+".slo.tpot_ms", s.SLO.TPOT)
	v.nonNegative(p+".slo.e2e_ms", s.SLO.E2E)
	v.nonNegative(p+".load.rate", s.Load.Rate)
	v.nonNegative(p+".load.burstiness", s.Load.Burstiness)
	v.nonNegative(p+".load.speedup", s.Load.Speedup)
	v.count(p+".load.concurrency", s.Load.Concurrency)
	v.count(p+".load.max_in_flight", s.Load.MaxInFlight)
	v.loadOverload(p, s.Load)
	v.stepLoad(p+".load", s.Load)
	v.warmup(p+".warmup", s.Warmup)
	for j, rw := range s.Warmups {
		wp := fmt.Sprintf("%s.warmups[%d]", p, j)
		if rw.Round < 1 {
			v.add(wp+".round", "want a round >= 1, got %d", rw.Round)
		}
		if rw.Kind != WarmupFull && rw.Kind != WarmupShort {
			v.add(wp+".kind", "want %s or %s, got %s", WarmupFull, WarmupShort, quote(rw.Kind))
		}
		if rw.Warmup == nil {
			v.add(wp+".warmup", "missing")
		}
		v.warmup(wp+".warmup", rw.Warmup)
	}
	for j := range s.Repetitions {
		v.repetition(fmt.Sprintf("%s.repetitions[%d]", p, j), &s.Repetitions[j])
	}
	if s.Sweep != nil {
		v.sweep(p+".sweep", s.Sweep)
	}
	if s.WorkloadShape != nil {
		v.shape(p+".workload_shape", s.WorkloadShape)
	}
	if s.Capacity != nil {
		v.capacity(p, s)
	}
	for j := range s.Quality {
		q := &s.Quality[j]
		qp := fmt.Sprintf("%s.quality[%d]", p, j)
		v.count(qp+".interleaved", q.Interleaved)
		for k := range q.Items {
			it := &q.Items[k]
			ip := fmt.Sprintf("%s.items[%d]", qp, k)
			v.fraction(ip+".score", it.Score)
			v.count(ip+".output_tokens", it.OutputTokens)
			v.count(ip+".repetition", it.Repetition)
			v.itemFailure(ip, it)
		}
	}
}

func (v *checker) warmup(wp string, w *Warmup) {
	if w == nil {
		return
	}
	v.nonNegative(wp+".duration_s", float64(w.Duration))
	v.count(wp+".requests", w.Requests)
	v.count(wp+".failed", w.Failed)
	for j, win := range w.Windows {
		v.nonNegative(fmt.Sprintf("%s.windows[%d].end_s", wp, j), float64(win.End))
		v.count(fmt.Sprintf("%s.windows[%d].requests", wp, j), win.Requests)
		v.nonNegative(fmt.Sprintf("%s.windows[%d].output_throughput", wp, j), win.OutputThroughput)
		v.nonNegative(fmt.Sprintf("%s.windows[%d].ttft_ms", wp, j), win.TTFT)
		v.count(fmt.Sprintf("%s.windows[%d].failed", wp, j), win.Failed)
		if win.Waiting != nil {
			v.nonNegative(fmt.Sprintf("%s.windows[%d].waiting", wp, j), *win.Waiting)
		}
	}
	total := 0
	for _, kind := range slices.Sorted(maps.Keys(w.Errors)) {
		n := w.Errors[kind]
		if !errorKindPattern.MatchString(kind) {
			v.add(wp+".errors", "want error kinds that are lowercase words of at most 32 letters, digits and '_' (http, stream, timeout, ...), got %q", kind[:min(len(kind), 40)])
			continue
		}
		v.count(fmt.Sprintf("%s.errors[%s]", wp, kind), n)
		total += n
	}
	if len(w.Errors) > 0 && total != w.Failed {
		v.add(wp+".errors", "%d failed requests by kind, but failed is %d", total, w.Failed)
	}
	if w.Drain != nil {
		v.nonNegative(wp+".drain_s", float64(*w.Drain))
	}
	v.count(wp+".drain_cut", w.DrainCut)
	if w.DrainQueue != nil {
		v.nonNegative(wp+".drain_queue", *w.DrainQueue)
	}
	v.overload(wp+".overload", w.Overload)
}

func (v *checker) repetition(p string, r *Repetition) {
	v.nonNegative(p+".duration_s", float64(r.Duration))
	if float64(r.Duration) > float64(math.MaxInt64)/float64(time.Second) {
		v.add(p+".duration_s", "%s seconds is longer than any run", fmtNum(float64(r.Duration)))
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"sent", r.Sent}, {"completed", r.Completed}, {"failed", r.Failed}, {"prompt_tokens", r.PromptTokens},
		{"output_tokens", r.OutputTokens}, {"good_requests", r.GoodRequests}, {"good_prompt_tokens", r.GoodPromptTokens},
		{"good_output_tokens", r.GoodOutputTokens}} {
		v.count(p+"."+c.name, c.n)
	}
	switch {
	case r.Completed < 0 || r.Failed < 0 || r.Sent < 0:
	case r.Completed > r.Sent:
		v.add(p+".completed", "%d completed of %d sent", r.Completed, r.Sent)
	case r.Failed > r.Sent-r.Completed:
		v.add(p+".failed", "%d failed and %d completed of %d sent", r.Failed, r.Completed, r.Sent)
	}
	if r.GoodRequests > r.Completed && r.Completed >= 0 {
		v.add(p+".good_requests", "%d met the SLOs of %d completed", r.GoodRequests, r.Completed)
	}
	v.count(p+".structured", r.Structured)
	v.count(p+".structured_errors", r.StructuredErrors)
	if r.Structured > r.Completed && r.Completed >= 0 {
		v.add(p+".structured", "%d structured requests of %d completed", r.Structured, r.Completed)
	}
	if r.StructuredErrors > r.Structured && r.Structured >= 0 {
		v.add(p+".structured_errors", "%d wrong answers of %d structured requests", r.StructuredErrors, r.Structured)
	}
	v.fraction(p+".structured_error_rate", r.StructuredErrorRate)
	if r.Structured > 0 && r.StructuredErrors >= 0 && r.StructuredErrors <= r.Structured &&
		math.Abs(r.StructuredErrorRate-float64(r.StructuredErrors)/float64(r.Structured)) > 1e-9 {
		v.add(p+".structured_error_rate", "%s is not %d wrong answers of %d structured requests", fmtNum(r.StructuredErrorRate), r.StructuredErrors, r.Structured)
	}
	if rs := r.Reasoning; rs != nil {
		q := p + ".reasoning"
		v.count(q+".requests", rs.Requests)
		v.count(q+".truncated", rs.Truncated)
		v.count(q+".reasoning_tokens", rs.ReasoningTokens)
		v.count(q+".answer_tokens", rs.AnswerTokens)
		if rs.Requests > r.Completed && r.Completed >= 0 {
			v.add(q+".requests", "%d requests reasoned of %d completed", rs.Requests, r.Completed)
		}
		if rs.Requests == 0 && (rs.ReasoningTokens > 0 || rs.TTFA.Count > 0) {
			v.add(q+".requests", "0 requests reasoned, yet %d reasoning tokens and %d answers timed", rs.ReasoningTokens, rs.TTFA.Count)
		}
		if rs.Truncated > rs.Requests && rs.Requests >= 0 {
			v.add(q+".truncated", "%d cut of %d that reasoned", rs.Truncated, rs.Requests)
		}
		if rs.TTFA.Count > int64(rs.Requests) {
			v.add(q+".ttfa_ms.count", "%d answers timed of %d requests that reasoned", rs.TTFA.Count, rs.Requests)
		}
		v.stats(q+".ttfa_ms", rs.TTFA)
	}
	v.count(p+".usage_refused", r.UsageRefused)
	if r.UsageRefused > r.Completed && r.Completed >= 0 {
		v.add(p+".usage_refused", "usage refused for %d of %d completed requests", r.UsageRefused, r.Completed)
	}
	v.count(p+".retries", r.Retries)
	if r.Retries > r.Sent && r.Sent >= 0 {
		v.add(p+".retries", "%d requests sent again of %d sent", r.Retries, r.Sent)
	}
	errs := 0
	for kind, n := range r.Errors {
		if n < 0 {
			v.add(p+".errors."+kind, "want a count >= 0, got %d", n)
		}
		errs += n
	}
	if errs > r.Failed && r.Failed >= 0 {
		v.add(p+".errors", "%d errors by kind for %d failed requests", errs, r.Failed)
	}
	v.fraction(p+".error_rate", r.ErrorRate)
	for _, f := range []struct {
		name string
		x    float64
	}{{"request_throughput", r.RequestThroughput}, {"output_throughput", r.OutputThroughput},
		{"input_throughput", r.InputThroughput}, {"goodput", r.Goodput}, {"concurrency", r.Concurrency}} {
		v.nonNegative(p+"."+f.name, f.x)
	}
	v.stats(p+".ttft_ms", r.TTFT)
	v.stats(p+".tpot_ms", r.TPOT)
	v.stats(p+".itl_ms", r.ITL)
	v.stats(p+".e2e_ms", r.E2E)
	if s := r.Schedule; s != nil {
		sp := p + ".schedule"
		v.nonNegative(sp+".offered_rate", s.OfferedRate)
		v.nonNegative(sp+".scheduled_rate", s.ScheduledRate)
		v.nonNegative(sp+".achieved_rate", s.AchievedRate)
		for _, f := range []struct {
			name string
			x    float64
		}{{"mean", s.SendLag.Mean}, {"min", s.SendLag.Min}, {"p50", s.SendLag.P50}, {"p99", s.SendLag.P99}, {"max", s.SendLag.Max}} {
			v.finite(sp+".send_lag_ms."+f.name, f.x)
		}
		v.stats(sp+".ttft_from_schedule_ms", s.TTFTFromSchedule)
		v.stats(sp+".e2e_from_schedule_ms", s.E2EFromSchedule)
	}
	v.overload(p+".overload", r.Overload)
	v.subsets(p, r)
	if s := r.Sessions; s != nil {
		v.sessions(p+".sessions", s)
	}
	if rc := r.Recovery; rc != nil {
		v.recovery(p+".recovery", rc, r)
	}
	if f := r.Fault; f != nil {
		v.fault(p+".fault", f, r)
	}
	if len(r.Replicas) > MaxReadyReplicas {
		v.add(p+".replicas", "%d counts, want at most %d", len(r.Replicas), MaxReadyReplicas)
	}
	for i, c := range r.Replicas {
		rp := fmt.Sprintf("%s.replicas[%d]", p, i)
		v.nonNegative(rp+".at_s", c.AtS)
		v.count(rp+".ready", c.Ready)
		if i > 0 && c.AtS < r.Replicas[i-1].AtS {
			v.add(rp+".at_s", "%s, before the count before it (%s): want them in time order", fmtNum(c.AtS), fmtNum(r.Replicas[i-1].AtS))
		}
	}
	if e := r.Engine; e != nil {
		ep := p + ".engine"
		v.count(ep+".scrapes", e.Scrapes)
		for _, f := range []struct {
			name string
			x    *float64
		}{{"kv_cache_peak", e.KVCachePeak}, {"kv_cache_mean", e.KVCacheMean}, {"prefix_cache_hit_rate", e.PrefixCacheHitRate},
			{"running_peak", e.RunningPeak}, {"waiting_peak", e.WaitingPeak}, {"preemptions", e.Preemptions}} {
			v.optional(ep+"."+f.name, f.x)
		}
		for _, l := range []struct {
			name string
			s    *ServerLatency
		}{{"server_ttft_ms", e.ServerTTFT}, {"server_itl_ms", e.ServerITL}} {
			if l.s != nil {
				for _, x := range []float64{l.s.Count, l.s.Mean, l.s.P50, l.s.P90, l.s.P99} {
					v.nonNegative(ep+"."+l.name, x)
				}
			}
		}
		if e.TTFTOverheadMS != nil {
			v.finite(ep+".ttft_overhead_ms", *e.TTFTOverheadMS)
		}
		if l := e.LoRA; l != nil {
			lp := ep + ".lora"
			v.count(lp+".running_peak", l.RunningPeak)
			v.count(lp+".waiting_peak", l.WaitingPeak)
			if l.MaxLoras != nil && *l.MaxLoras < 1 {
				v.add(lp+".max_loras", "want at least 1, got %d", *l.MaxLoras)
			}
			if len(l.Adapters) > 64 {
				v.add(lp+".adapters", "%d adapters, more than the 64 perfgate keeps", len(l.Adapters))
			}
			for k, name := range l.Adapters {
				if name == "" || len(name) > 256 {
					v.add(fmt.Sprintf("%s.adapters[%d]", lp, k), "want a name of 1 to 256 bytes, got %d bytes", len(name))
				}
			}
		}
	}
	if g := r.GPU; g != nil {
		gp := p + ".gpu"
		v.nonNegative(gp+".interval_s", float64(g.Interval))
		v.count(gp+".samples", g.Samples)
		v.nonNegative(gp+".memory_peak_mib", g.MemoryPeakMiB)
		v.nonNegative(gp+".memory_total_mib", g.MemoryTotalMiB)
		for _, f := range []struct {
			name string
			x    *float64
		}{{"utilization_mean", g.UtilizationMean}, {"power_mean_w", g.PowerMeanW}, {"energy_j", g.EnergyJ},
			{"energy_per_token_j", g.EnergyPerToken}, {"tokens_per_joule", g.TokensPerJoule}} {
			v.optional(gp+"."+f.name, f.x)
		}
		for k, w := range g.PerGPU {
			wp := fmt.Sprintf("%s.per_gpu[%d]", gp, k)
			v.nonNegative(wp+".memory_peak_mib", w.MemoryPeakMiB)
			v.nonNegative(wp+".memory_total_mib", w.MemoryTotalMiB)
			v.optional(wp+".utilization_mean", w.UtilizationMean)
			v.optional(wp+".power_mean_w", w.PowerMeanW)
		}
	}
	if c := r.Cost; c != nil {
		cp := p + ".cost"
		v.nonNegative(cp+".usd_per_m_output", c.USDPerMOutput)
		v.optional(cp+".usd_per_m_input", c.USDPerMInput)
		v.optional(cp+".usd_per_m_output_goodput", c.USDPerMOutputGoodput)
		v.optional(cp+".usd_per_m_input_goodput", c.USDPerMInputGoodput)
	}
	if u := r.Utilization; u != nil {
		up := p + ".utilization"
		for _, f := range []struct {
			name string
			x    *float64
		}{{"mbu", u.MBU}, {"mfu", u.MFU}} {
			if f.x != nil {
				v.fraction(up+"."+f.name, *f.x)
			}
		}
		v.optional(up+".decode_gbs", u.DecodeGBs)
		v.optional(up+".prefill_tflops", u.PrefillTFLOPS)
		if len(u.Impossible) > maxBoundary {
			v.add(up+".impossible", "want at most %d bytes, got %d", maxBoundary, len(u.Impossible))
		}
	}
}

// sessions checks a repetition's SessionStats: counts that add up (no
// more completed sessions than started, a mean of turns from 1 to the most),
// and no more first-turn TTFTs or session E2Es than sessions.
func (v *checker) sessions(sp string, s *SessionStats) {
	v.count(sp+".started", s.Started)
	v.count(sp+".completed", s.Completed)
	v.count(sp+".turns_max", s.TurnsMax)
	v.nonNegative(sp+".turns_mean", s.TurnsMean)
	if s.Completed > s.Started && s.Started >= 0 {
		v.add(sp+".completed", "%d completed of %d started", s.Completed, s.Started)
	}
	if s.Started > 0 && !(s.TurnsMean >= 1 && s.TurnsMean <= float64(s.TurnsMax)) {
		v.add(sp+".turns_mean", "a mean of %s turns with at most %d", fmtNum(s.TurnsMean), s.TurnsMax)
	}
	v.stats(sp+".first_turn_ttft_ms", s.FirstTurnTTFT)
	v.stats(sp+".later_turn_ttft_ms", s.LaterTurnTTFT)
	v.stats(sp+".e2e_ms", s.E2E)
	if s.FirstTurnTTFT.Count > int64(s.Started) && s.Started >= 0 {
		v.add(sp+".first_turn_ttft_ms.count", "%d first turns of %d sessions", s.FirstTurnTTFT.Count, s.Started)
	}
	if s.E2E.Count > int64(s.Completed) && s.Completed >= 0 {
		v.add(sp+".e2e_ms.count", "%d session E2Es of %d completed sessions", s.E2E.Count, s.Completed)
	}
}

// inFile names file in every *Problem joined in err, and returns err.
func inFile(err error, file string) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if p, ok := e.(*Problem); ok {
			p.File = file
		}
	}
	return err
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// quote writes a string from a file for a message, cut at 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		n := 64
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return strconv.Quote(s)
}

// JSONError turns an error of encoding/json decoding data (the content of
// file) into a *Problem in the file's terms: the line and column of a syntax
// error or of a value of the wrong kind, the field, and what was wanted, in
// words rather than Go types ("scenarios.repetitions.sent: want an integer,
// got a string"). Other errors (a field's own decoder refusing its value)
// keep their message.
func JSONError(file string, data []byte, err error) error {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		if strings.HasPrefix(se.Error(), "unexpected end") {
			line, col = position(data, int64(len(data))+1)
		}
		return Invalid(Problem{File: file, Line: line, Column: col, Msg: "invalid JSON: " + strings.TrimPrefix(se.Error(), "json: ")})
	case errors.As(err, &te):
		line, col := position(data, valueStart(data, te.Offset, te.Value))
		return Invalid(Problem{File: file, Line: line, Column: col, Path: te.Field,
			Msg: fmt.Sprintf("want %s, got %s", kindOf(te.Type), gotOf(te.Value))})
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return Invalid(Problem{File: file, Msg: fmt.Sprintf("want %s, got %s", kindOf(reflect.TypeFor[time.Time]()), quote(pe.Value))})
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.Contains(msg, "Go ") || strings.Contains(msg, "unmarshal") {
		msg = "a value cannot be read"
	}
	return Invalid(Problem{File: file, Msg: msg})
}

// position is the 1-based line and character column of the byte at
// offset-1 (encoding/json's offsets count the bytes read).
func position(data []byte, offset int64) (line, col int) {
	if offset < 1 {
		offset = 1
	}
	if offset > int64(len(data)) {
		offset = int64(len(data)) + 1
	}
	before := data[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}

// valueStart is the offset (as position takes it) of the start of the value
// a type error ends at: encoding/json reports the end of a number or a
// string.
func valueStart(data []byte, offset int64, value string) int64 {
	end := offset - 1 // the value's last byte
	if end < 0 || end >= int64(len(data)) {
		return offset
	}
	if n, ok := strings.CutPrefix(value, "number "); ok && int64(len(n)) <= offset {
		return offset - int64(len(n)) + 1
	}
	if value == "string" && data[end] == '"' {
		for i := end - 1; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			slashes := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				slashes++
			}
			if slashes%2 == 0 {
				return i + 1
			}
		}
	}
	return offset
}

// kindOf names a Go type the way JSON speaks.
func kindOf(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "a time such as 2026-01-02T15:04:05Z"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number in range"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "a value"
}

// gotOf names what encoding/json found ("string", "number 1e400").
func gotOf(value string) string {
	switch value {
	case "string":
		return "a string"
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "bool":
		return "true or false"
	}
	if n, ok := strings.CutPrefix(value, "number "); ok {
		return n
	}
	return value
}

// The most a result's sweep and capacity search may hold: far above what
// the config allows (16 sweep points, 64 probes), so every result perfgate
// writes passes, and low enough that a file cannot make perfgate walk
// millions of probes.
const (
	maxSweepPoints     = 256
	maxCapacityProbes  = 256
	maxCapacityReps    = 1024
	maxCapacitySLOs    = 64
	maxCapacityWarning = 64
)

// positive checks a figure that is a finite number > 0.
func (v *checker) positive(field string, x float64) {
	if !(x > 0) || math.IsInf(x, 0) {
		v.add(field, "want a finite number > 0, got %s", fmtNum(x))
	}
}

// oneOf checks a string that must be one of want.
func (v *checker) oneOf(field, got string, want ...string) {
	if !slices.Contains(want, got) {
		v.add(field, "%s, want one of %v", quote(got), want)
	}
}

// sweep checks a sweep point: its parameter, a value that is a load, and
// its place within the sweep.
func (v *checker) sweep(p string, s *SweepPoint) {
	if s.Of == "" {
		v.add(p+".of", "missing: the swept scenario's name")
	}
	v.oneOf(p+".param", s.Param, "rate", "concurrency")
	v.positive(p+".value", s.Value)
	if s.Points < 1 || s.Points > maxSweepPoints {
		v.add(p+".points", "want from 1 to %d points, got %d", maxSweepPoints, s.Points)
	}
	if s.Index < 0 || s.Index >= s.Points {
		v.add(p+".index", "want from 0 to points-1 (%d), got %d", s.Points-1, s.Index)
	}
}

// capacity checks a capacity search's outcome: a search that could have
// been run, probes within its range and budget, each probe's verdict
// consistent with its margins, Holds and Breaks consistent with the
// outcome and the probes, At a probe, and samples no more than the
// repetitions.
func (v *checker) capacity(sp string, s *ScenarioResult) {
	c := s.Capacity
	p := sp + ".capacity"
	q := c.Search
	if q.Headroom != nil {
		v.oneOf(p+".search.metric", q.Metric, HeadroomContext, "concurrency")
		v.headroomSearch(p+".search.headroom", q.Metric, q.Headroom)
	} else {
		v.oneOf(p+".search.metric", q.Metric, "request_rate", "concurrency")
	}
	v.oneOf(p+".search.rule", q.Rule, "every", "bound")
	if (len(q.SLO) == 0 && q.Headroom == nil) || len(q.SLO) > maxCapacitySLOs {
		v.add(p+".search.slo_ms", "want from 1 to %d objectives, got %d", maxCapacitySLOs, len(q.SLO))
	}
	for _, k := range slices.Sorted(maps.Keys(q.SLO)) {
		v.positive(p+".search.slo_ms."+k, q.SLO[k])
	}
	v.positive(p+".search.min", q.Min)
	v.positive(p+".search.max", q.Max)
	if q.Max < q.Min {
		v.add(p+".search.max", "%s is below min %s", fmtNum(q.Max), fmtNum(q.Min))
	}
	if !(q.Start >= q.Min && q.Start <= q.Max) {
		v.add(p+".search.start", "want from min (%s) to max (%s), got %s", fmtNum(q.Min), fmtNum(q.Max), fmtNum(q.Start))
	}
	v.positive(p+".search.resolution", q.Resolution)
	if !(q.Confidence >= 0 && q.Confidence < 1) {
		v.add(p+".search.confidence", "want a fraction from 0 to 1 (exclusive), got %s", fmtNum(q.Confidence))
	}
	if q.Repetitions < 1 || q.Repetitions > maxCapacityReps {
		v.add(p+".search.repetitions", "want from 1 to %d, got %d", maxCapacityReps, q.Repetitions)
	}
	if q.Budget < 1 || q.Budget > maxCapacityProbes {
		v.add(p+".search.budget", "want from 1 to %d probes, got %d", maxCapacityProbes, q.Budget)
	}

	v.oneOf(p+".outcome", c.Outcome, CapacityBracketed, CapacityBelowMin, CapacityAboveMax, CapacityBudget, CapacityClientLimited)
	v.nonNegative(p+".holds", c.Holds)
	v.nonNegative(p+".breaks", c.Breaks)
	if c.Breaks > 0 && c.Holds >= c.Breaks {
		v.add(p+".breaks", "%s is not above holds %s", fmtNum(c.Breaks), fmtNum(c.Holds))
	}
	v.nonNegative(p+".request_rate", c.RequestRate)
	v.nonNegative(p+".output_throughput", c.OutputThroughput)
	v.optional(p+".cost_per_mtok", c.CostPerMTok)
	if len(c.Warnings) > maxCapacityWarning {
		v.add(p+".warnings", "want at most %d, got %d", maxCapacityWarning, len(c.Warnings))
	}
	if c.Calibration != nil {
		v.calibration(p+".calibration", c.Calibration)
	}
	if q.Headroom == nil && (c.Calibration != nil || c.Boundary != "") {
		v.add(p+".boundary", "a capacity search has no boundary or calibration: they are a headroom search's")
	}
	if q.Headroom != nil && (q.Min < 1 || q.Max > MaxHeadroomTokens) {
		v.add(p+".search.max", "a headroom search probes from 1 to %d (tokens or users), got %s to %s", MaxHeadroomTokens, fmtNum(q.Min), fmtNum(q.Max))
	}
	if len(c.Boundary) > maxBoundary {
		v.add(p+".boundary", "want at most %d bytes, got %d", maxBoundary, len(c.Boundary))
	}

	switch {
	case len(c.Probes) == 0:
		v.add(p+".probes", "no probes: a search measures at least one load")
	case len(c.Probes) > maxCapacityProbes+2 || (q.Budget > 0 && len(c.Probes) > q.Budget+min(closing(c.Probes), 2)):
		v.add(p+".probes", "%d probes, over the budget of %d", len(c.Probes), q.Budget)
		return
	}
	for i := range c.Probes {
		v.probe(fmt.Sprintf("%s.probes[%d]", p, i), &c.Probes[i], q)
	}
	if c.At < 0 || c.At >= len(c.Probes) {
		v.add(p+".at", "want an index of probes (0 to %d), got %d", len(c.Probes)-1, c.At)
	} else if n := len(c.Probes[c.At].Repetitions); n != len(s.Repetitions) {
		v.add(sp+".repetitions", "%d repetitions, but the capacity point (probes[%d]) has %d", len(s.Repetitions), c.At, n)
	}
	if s.Load.Rate != 0 || s.Load.Concurrency != 0 {
		v.add(sp+".load", "a capacity search's load is the shape alone, got rate %s and concurrency %d", fmtNum(s.Load.Rate), s.Load.Concurrency)
	}
	v.outcome(p, c)

	if len(c.Samples) > q.Repetitions {
		v.add(p+".samples", "%d samples for %d repetitions a probe", len(c.Samples), q.Repetitions)
	}
	if len(c.Samples) == 0 {
		v.add(p+".samples", "none: a search gives one capacity sample per repetition")
	}
	// A sample is a crossing between probed loads, or a bound at one: it
	// lies within the loads probed.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pr := range c.Probes {
		lo, hi = min(lo, pr.Load), max(hi, pr.Load)
	}
	seen := map[int]bool{}
	for i, smp := range c.Samples {
		ip := fmt.Sprintf("%s.samples[%d]", p, i)
		if smp.Repetition < 1 || smp.Repetition > q.Repetitions {
			v.add(ip+".repetition", "want from 1 to %d, got %d", q.Repetitions, smp.Repetition)
		}
		if seen[smp.Repetition] {
			v.add(ip+".repetition", "repetition %d has a sample already", smp.Repetition)
		}
		seen[smp.Repetition] = true
		if smp.Load < lo || smp.Load > hi {
			v.add(ip+".load", "want within the loads probed (%s to %s), got %s", fmtNum(lo), fmtNum(hi), fmtNum(smp.Load))
		}
		v.nonNegative(ip+".load", smp.Load)
		v.nonNegative(ip+".request_rate", smp.RequestRate)
		v.nonNegative(ip+".output_throughput", smp.OutputThroughput)
		v.oneOf(ip+".censored", smp.Censored, "", CensoredAbove, CensoredBelow)
	}
}

// probe checks one probe: a load in the search's range, a verdict its
// margins and broken repetitions allow, and no more repetitions than the
// search measures a probe.
func (v *checker) probe(pp string, pr *CapacityProbe, q CapacitySearch) {
	v.positive(pp+".load", pr.Load)
	if pr.Load < q.Min || pr.Load > q.Max {
		v.add(pp+".load", "want from min (%s) to max (%s), got %s", fmtNum(q.Min), fmtNum(q.Max), fmtNum(pr.Load))
	}
	v.oneOf(pp+".phase", pr.Phase, "bracket", "bisect", "close")
	for _, k := range slices.Sorted(maps.Keys(pr.Margin)) {
		m := pr.Margin[k]
		v.nonNegative(pp+".margin."+k, m)
		if pr.Held && m > 1 {
			v.add(pp+".held", "held with %s at %sx its SLO", k, fmtNum(m))
		}
	}
	if len(pr.Margin) > maxCapacitySLOs {
		v.add(pp+".margin", "want at most %d objectives, got %d", maxCapacitySLOs, len(pr.Margin))
	}
	if len(pr.Repetitions) > q.Repetitions {
		v.add(pp+".repetitions", "%d repetitions, over the search's %d a probe", len(pr.Repetitions), q.Repetitions)
		return
	}
	if pr.Broken < 0 || pr.Broken > len(pr.Repetitions) {
		v.add(pp+".broken", "want from 0 to %d (its repetitions), got %d", len(pr.Repetitions), pr.Broken)
	}
	if pr.Held && pr.Broken > 0 {
		v.add(pp+".held", "held with %d broken repetitions", pr.Broken)
	}
	v.warmup(pp+".warmup", pr.Warmup)
	if len(pr.Why) > maxBoundary {
		v.add(pp+".why", "want at most %d bytes, got %d", maxBoundary, len(pr.Why))
	}
	if pr.Held && pr.Why != "" {
		v.add(pp+".held", "held, and broke because %s", pr.Why)
	}
	if pr.Held && pr.Restarted {
		v.add(pp+".restarted", "held, and the server died under it")
	}
	if q.Headroom == nil && (pr.Why != "" || pr.Restarted) {
		v.add(pp+".why", "a capacity search's probe has no why or restart: they are a headroom search's")
	}
	for j := range pr.Repetitions {
		v.repetition(fmt.Sprintf("%s.repetitions[%d]", pp, j), &pr.Repetitions[j])
	}
}

// maxBoundary bounds a search's Boundary and a probe's Why: a server's
// message with what perfgate says around it.
const maxBoundary = 2048

// headroomSearch checks what a headroom search held fixed: users when it
// searched context, a context when it searched users, an output within
// the context, limits that are limits, and a tokenizer calibration that
// can size a prompt.
func (v *checker) headroomSearch(p, metric string, h *HeadroomSearch) {
	switch metric {
	case HeadroomContext:
		if h.Users < 1 || h.Users > maxHeadroomUsers || h.Context != 0 {
			v.add(p+".users", "a search over context holds users fixed (1 to %d) and no context, got users %d and context %d", maxHeadroomUsers, h.Users, h.Context)
		}
	default:
		if h.Context < 2 || h.Context > MaxHeadroomTokens || h.Users != 0 {
			v.add(p+".context", "a search over users holds a context fixed (2 to %d tokens) and no users, got context %d and users %d", MaxHeadroomTokens, h.Context, h.Users)
		}
	}
	if h.MaxPreemptions > 1e9 {
		v.add(p+".max_preemptions", "want at most 1e9, got %s", fmtNum(h.MaxPreemptions))
	}
	if h.OutputTokens < 1 || (h.Context > 0 && h.OutputTokens >= h.Context) {
		v.add(p+".output_tokens", "want from 1 to below the context, got %d", h.OutputTokens)
	}
	v.nonNegative(p+".max_preemptions", h.MaxPreemptions)
	if !(h.MaxKVCache >= 0 && h.MaxKVCache <= 1) {
		v.add(p+".max_kv_cache", "want a fraction from 0 to 1, got %s", fmtNum(h.MaxKVCache))
	}
}

// Bounds on a result's utilization basis: a model of up to 10^14
// parameters and 10^15 bytes, 10,000 GPUs of up to 10^6 GB/s and TFLOPS,
// and a few short lines of where each figure came from.
const (
	maxBasisParams  = 1e14
	maxBasisBytes   = 1e15
	maxBasisGPUs    = 10_000
	maxBasisPeak    = 1e6
	maxBasisLines   = 16
	maxBasisLineLen = 512
)

// utilizationBasis checks what MBU and MFU rest on: figures within what a
// model and a GPU can be, and short lines of where they came from.
func (v *checker) utilizationBasis(p string, u *UtilizationBasis) {
	for _, f := range []struct {
		name   string
		x, max float64
	}{{"params", u.Params, maxBasisParams}, {"weight_bytes", u.WeightBytes, maxBasisBytes}, {"kv_bytes_per_token", u.KVBytesPerToken, maxBasisBytes},
		{"peak_bandwidth_gbs", u.PeakBandwidthGBs, maxBasisPeak}, {"peak_tflops", u.PeakTFLOPS, maxBasisPeak}} {
		if !(f.x >= 0 && f.x <= f.max) {
			v.add(p+"."+f.name, "want from 0 to %s, got %s", fmtNum(f.max), fmtNum(f.x))
		}
	}
	if u.GPUs < 1 || u.GPUs > maxBasisGPUs {
		v.add(p+".gpus", "want from 1 to %d, got %d", maxBasisGPUs, u.GPUs)
	}
	if len(u.GPU) > maxBasisLineLen {
		v.add(p+".gpu", "want at most %d bytes, got %d", maxBasisLineLen, len(u.GPU))
	}
	for _, l := range []struct {
		name  string
		lines []string
	}{{"sources", u.Sources}, {"assumed", u.Assumed}} {
		if len(l.lines) > maxBasisLines {
			v.add(p+"."+l.name, "want at most %d lines, got %d", maxBasisLines, len(l.lines))
		}
		for i, s := range l.lines {
			if len(s) > maxBasisLineLen {
				v.add(fmt.Sprintf("%s.%s[%d]", p, l.name, i), "want at most %d bytes, got %d", maxBasisLineLen, len(s))
			}
		}
	}
}

// maxHeadroomUsers bounds a headroom search's users: config's
// MaxConcurrency.
const maxHeadroomUsers = 10_000

// calibration checks how a headroom search sized its prompts: a positive
// number of tokens a word, and an overhead that is a number; an assumed one
// is one token a word and nothing more.
func (v *checker) calibration(p string, c *Calibration) {
	if !c.Measured && (c.TokensPerWord != 1 || c.OverheadTokens != 0) {
		v.add(p+".tokens_per_word", "an assumed calibration is one token a word and no overhead, got %s and %s", fmtNum(c.TokensPerWord), fmtNum(c.OverheadTokens))
	}
	if !(c.TokensPerWord > 0 && c.TokensPerWord <= 1000) {
		v.add(p+".tokens_per_word", "want from 0 (exclusive) to 1000, got %s", fmtNum(c.TokensPerWord))
	}
	if !(math.Abs(c.OverheadTokens) <= MaxHeadroomTokens) {
		v.add(p+".overhead_tokens", "want a number of tokens, got %s", fmtNum(c.OverheadTokens))
	}
	if len(c.Note) > maxBoundary {
		v.add(p+".note", "want at most %d bytes, got %d", maxBoundary, len(c.Note))
	}
}

// MaxHeadroomTokens bounds the tokens a result's headroom search speaks of:
// 2^20, the longest context perfgate sends.
const MaxHeadroomTokens = 1 << 20

// outcome checks Holds and Breaks against the outcome and the probes:
// each is the load of a probe with that verdict, and each outcome has the
// bounds it says it has.
func (v *checker) outcome(p string, c *Capacity) {
	probed := func(load float64, held bool) bool {
		return slices.ContainsFunc(c.Probes, func(pr CapacityProbe) bool { return pr.Load == load && pr.Held == held })
	}
	if c.Holds > 0 && !probed(c.Holds, true) {
		v.add(p+".holds", "%s is the load of no probe that held", fmtNum(c.Holds))
	}
	if c.Breaks > 0 && !probed(c.Breaks, false) {
		v.add(p+".breaks", "%s is the load of no probe that broke", fmtNum(c.Breaks))
	}
	q := c.Search
	switch c.Outcome {
	case CapacityBracketed:
		if !(c.Holds > 0 && c.Breaks > 0) {
			v.add(p+".outcome", "bracketed, but holds %s and breaks %s are not both loads", fmtNum(c.Holds), fmtNum(c.Breaks))
		}
	case CapacityBelowMin:
		if c.Holds != 0 || c.Breaks != q.Min {
			v.add(p+".outcome", "below_min, but holds %s and breaks %s (want 0 and min %s)", fmtNum(c.Holds), fmtNum(c.Breaks), fmtNum(q.Min))
		}
	case CapacityAboveMax:
		if c.Holds != q.Max || c.Breaks != 0 {
			v.add(p+".outcome", "above_max, but holds %s and breaks %s (want max %s and 0)", fmtNum(c.Holds), fmtNum(c.Breaks), fmtNum(q.Max))
		}
	case CapacityClientLimited:
		if c.Breaks != 0 {
			v.add(p+".outcome", "client_limited, but breaks %s: the server was not shown to break", fmtNum(c.Breaks))
		}
	}
}

// closing is how many of probes are a search's closing probes (made beyond
// its budget, for the repetitions that never broke).
func closing(probes []CapacityProbe) int {
	n := 0
	for _, p := range probes {
		if p.Phase == "close" {
			n++
		}
	}
	return n
}

// shape checks a workload's shape: counts not negative that add up,
// percentiles in order, ratios in [0, 1], finite rates.
func (v *checker) shape(p string, w *WorkloadShape) {
	v.count(p+".requests", w.Requests)
	v.count(p+".chat", w.Chat)
	v.count(p+".completions", w.Completions)
	if w.Chat >= 0 && w.Completions >= 0 && w.Chat+w.Completions != w.Requests {
		v.add(p+".requests", "%d, want chat + completions (%d)", w.Requests, w.Chat+w.Completions)
	}
	v.lengths(p+".prompt_words", w.PromptWords)
	v.lengths(p+".max_tokens", w.MaxTokens)
	ps := w.PrefixSharing
	v.count(p+".prefix_sharing.words", ps.Words)
	v.count(p+".prefix_sharing.prefixes_32", ps.Prefixes32)
	if ps.SharedWords < 0 || ps.SharedWords > ps.Words {
		v.add(p+".prefix_sharing.shared_words", "want from 0 to words (%d), got %d", ps.Words, ps.SharedWords)
	}
	v.fraction(p+".prefix_sharing.ratio", ps.Ratio)
	if s := w.Sessions; s != nil {
		sp := p + ".sessions"
		v.atMost(sp+".requests", s.Requests, w.Requests, "requests")
		v.atMost(sp+".count", s.Count, s.Requests, "sessions.requests")
		if !(1 <= s.TurnsMin && s.TurnsMin <= s.TurnsP50 && s.TurnsP50 <= s.TurnsMax) {
			v.add(sp+".turns_min", "want 1 <= turns_min <= turns_p50 <= turns_max, got %d, %d, %d", s.TurnsMin, s.TurnsP50, s.TurnsMax)
		}
		if t := s.ThinkMS; t != nil {
			v.atMost(sp+".think_ms.count", t.Count, s.Requests, "sessions.requests")
			v.nonNegative(sp+".think_ms.p50", t.P50)
			v.nonNegative(sp+".think_ms.p90", t.P90)
			if t.P50 > t.P90 {
				v.add(sp+".think_ms.p90", "want at least p50 (%s), got %s", fmtNum(t.P50), fmtNum(t.P90))
			}
		}
		v.fraction(sp+".prefix_sharing_with_history", s.PrefixSharingWithHistory)
	}
	if a := w.Arrivals; a != nil {
		ap := p + ".arrivals"
		v.atMost(ap+".requests", a.Requests, w.Requests, "requests")
		v.nonNegative(ap+".span_s", float64(a.Span))
		v.nonNegative(ap+".mean_rate", a.MeanRate)
		v.nonNegative(ap+".burstiness", a.Burstiness)
		if a.PeakPerSecond < min(a.Requests, 1) || a.PeakPerSecond > a.Requests {
			v.add(ap+".peak_per_second", "want from 1 to requests (%d), got %d", a.Requests, a.PeakPerSecond)
		}
	}
	for i, t := range w.Tags {
		v.atMost(fmt.Sprintf("%s.tags[%d].requests", p, i), t.Requests, w.Requests, "requests")
	}
	v.atMost(p+".distinct_tags", len(w.Tags), w.DistinctTags, "distinct_tags")
	for _, name := range slices.Sorted(maps.Keys(w.Sampling)) {
		v.atMost(p+".sampling."+name, w.Sampling[name], w.Requests, "requests")
	}
	v.atMost(p+".response_format", w.ResponseFormat, w.Requests, "requests")
	v.atMost(p+".tools", w.Tools, w.Requests, "requests")
}

// lengths checks percentiles of lengths: not negative, and in order.
func (v *checker) lengths(p string, l Lengths) {
	if !(0 <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) {
		v.add(p, "want 0 <= p50 <= p90 <= p99 <= max, got %d, %d, %d, %d", l.P50, l.P90, l.P99, l.Max)
	}
}

// atMost checks a count from 0 to limit (the field named what).
func (v *checker) atMost(field string, n, limit int, what string) {
	if n < 0 || n > limit {
		v.add(field, "want a count from 0 to %s (%d), got %d", what, limit, n)
	}
}

// subsets checks a repetition's subsets: known names, no more than the
// aggregator keeps, counts within the repetition's, sound distributions.
func (v *checker) subsets(p string, r *Repetition) {
	v.count(p+".subsets_cut", r.SubsetsCut)
	if len(r.Subsets) > MaxModelSubsets+4 {
		v.add(p+".subsets", "%d subsets, more than the %d perfgate keeps", len(r.Subsets), MaxModelSubsets+4)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(r.Subsets)) {
		s := r.Subsets[name]
		sp := fmt.Sprintf("%s.subsets[%q]", p, name[:min(len(name), 300)])
		if _, err := metric.Lookup("ttft.p50" + metric.SubsetSep + name); err != nil {
			v.add(sp, "not a subset perfgate measures: %v", err)
			continue
		}
		if s == nil {
			v.add(sp, "want a subset, got null")
			continue
		}
		for _, c := range []struct {
			name string
			n    int
		}{{"sent", s.Sent}, {"completed", s.Completed}, {"failed", s.Failed}, {"output_tokens", s.OutputTokens},
			{"structured", s.Structured}, {"structured_errors", s.StructuredErrors}, {"good_requests", s.GoodRequests}} {
			v.count(sp+"."+c.name, c.n)
		}
		if s.Sent > r.Sent && r.Sent >= 0 {
			v.add(sp+".sent", "%d sent of the repetition's %d", s.Sent, r.Sent)
		}
		if s.Completed > s.Sent && s.Sent >= 0 {
			v.add(sp+".completed", "%d completed of %d sent", s.Completed, s.Sent)
		}
		if s.GoodRequests > s.Completed && s.Completed >= 0 {
			v.add(sp+".good_requests", "%d met the SLOs of %d completed", s.GoodRequests, s.Completed)
		}
		if s.StructuredErrors > s.Structured && s.Structured >= 0 {
			v.add(sp+".structured_errors", "%d wrong answers of %d structured requests", s.StructuredErrors, s.Structured)
		}
		v.fraction(sp+".error_rate", s.ErrorRate)
		v.nonNegative(sp+".output_throughput", s.OutputThroughput)
		v.optional(sp+".decode_throughput", s.DecodeThroughput)
		v.stats(sp+".ttft_ms", s.TTFT)
		v.stats(sp+".tpot_ms", s.TPOT)
		v.stats(sp+".itl_ms", s.ITL)
		v.stats(sp+".e2e_ms", s.E2E)
	}
}
