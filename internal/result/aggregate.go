package result

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 1 hour at 3 significant digits (0.1% error).
const (
	histMinUS  = 1
	histMaxUS  = int64(time.Hour / time.Microsecond)
	histDigits = 3
)

// Histogram names, the keys of Repetition.Histograms.
const (
	HistTTFT             = "ttft"
	HistTPOT             = "tpot"
	HistITL              = "itl"
	HistE2E              = "e2e"
	HistSendLag          = "send_lag"
	HistTTFTFromSchedule = "ttft_from_schedule"
	HistE2EFromSchedule  = "e2e_from_schedule"
)

// Thresholds for ScheduleStats.Achieved.
const (
	minAchievedShare = 0.98
	maxSendLagP99    = 10 * time.Millisecond
)

// Aggregator folds the records of one repetition into its summary. It is not
// safe for concurrent use: feed it from the one goroutine that collects records.
type Aggregator struct {
	// The SLOs as durations; 0 is not set.
	sloTTFT, sloTPOT, sloE2E time.Duration
	openLoop                 bool
	offered                  float64

	hists map[string]*hdrhistogram.Histogram
	// percentiles are those measured beside Stats' fields (WithPercentiles).
	percentiles []extraPercentile

	sent, completed, good  int
	goodPrompt, goodOutput int
	errors                 map[string]int
	firstError             string
	promptTok, outputTok   int
	fromUsage              int
	usageRefused, retries  int
	// structured and structuredErrors count the completed structured
	// requests and their wrong answers (Repetition.Structured).
	structured, structuredErrors int
	firstStructuredError         string
	// reasoning folds the requests that reasoned (Repetition.Reasoning);
	// ttfa is their time to first answer, made at the first of them.
	reasoning             ReasoningStats
	ttfa                  *hdrhistogram.Histogram
	lastEndNS             int64
	busyNS                int64 // sum of E2E over all requests: mean concurrency × window
	firstSched, lastSched int64
	firstSent, lastSent   int64
	// Prefill: prompt tokens and TTFT of the completed requests with a
	// first token; decode: output tokens after the first and the time
	// after it, of those with two or more.
	prefillTok, decodeTok int
	prefillNS, decodeNS   int64
	// sessions folds the session turns' records (SessionStats).
	sessions *sessions
	// recovery keeps a step load's requests for its recovery (WithRecovery):
	// from step, in windows of window; nil for other loads.
	recovery             []recoverySample
	recoveryStep, window time.Duration

	// slo is kept for the subsets' aggregators.
	slo SLO
	// subsets measures subsets of the requests apart (Repetition.Subsets);
	// models counts the model subsets made, subsetsCut the records of
	// models past MaxModelSubsets. sub marks a subset's own aggregator,
	// which has no subsets or sessions of its own.
	subsets      map[string]*Aggregator
	kindSubsets  bool // structured and free (WithSubsets)
	modelSubsets bool // one per model (WithSubsets)
	defaultModel string
	coldAdapters []string
	models       int
	subsetsCut   int
	sub          bool
}

// NewAggregator returns an aggregator for one repetition. For an open-loop
// shape, offeredRate is the configured rate (requests/s) and schedule
// statistics are kept; pass openLoop false for closed loop.
func NewAggregator(slo SLO, openLoop bool, offeredRate float64) *Aggregator {
	a := &Aggregator{slo: slo, sloTTFT: msDuration(slo.TTFT), sloTPOT: msDuration(slo.TPOT), sloE2E: msDuration(slo.E2E), openLoop: openLoop, offered: offeredRate, errors: map[string]int{}, hists: map[string]*hdrhistogram.Histogram{}}
	names := []string{HistTTFT, HistTPOT, HistITL, HistE2E}
	if openLoop {
		names = append(names, HistSendLag, HistTTFTFromSchedule, HistE2EFromSchedule)
	}
	for _, n := range names {
		a.hists[n] = hdrhistogram.New(histMinUS, histMaxUS, histDigits)
	}
	a.firstSched, a.firstSent = math.MaxInt64, math.MaxInt64
	return a
}

func (a *Aggregator) record(name string, us int64) {
	// Clamp into the histogram's range rather than drop: a value outside it is a
	// real observation (sub-µs gaps happen when chunks arrive in one read).
	us = max(histMinUS, min(us, histMaxUS))
	_ = a.hists[name].RecordValue(us) // cannot fail inside the range
}

// Add folds one request's record into the summary.
func (a *Aggregator) Add(r *Record) {
	if !a.sub && (a.kindSubsets || a.modelSubsets || len(a.coldAdapters) > 0) {
		a.addSubsets(r)
	}
	if r.Session != "" && !a.sub {
		if a.sessions == nil {
			a.sessions = newSessions()
		}
		a.sessions.add(r)
	}
	a.sent++
	if a.window > 0 && !a.sub {
		a.recovery = append(a.recovery, recoverySample{atNS: r.ScheduledNS, ttftNS: r.FirstTokenNS - r.SentNS, ok: r.OK() && r.FirstTokenNS > 0})
	}
	if r.ErrorKind == SessionErrorKind { // never sent: a failure with no times
		a.errors[r.ErrorKind]++
		if a.firstError == "" {
			a.firstError = r.Error
		}
		return
	}
	a.retries += r.Retries
	a.lastEndNS = max(a.lastEndNS, r.EndNS)
	a.busyNS += r.EndNS - r.SentNS
	a.firstSched, a.lastSched = min(a.firstSched, r.ScheduledNS), max(a.lastSched, r.ScheduledNS)
	a.firstSent, a.lastSent = min(a.firstSent, r.SentNS), max(a.lastSent, r.SentNS)
	if a.openLoop {
		a.record(HistSendLag, (r.SentNS-r.ScheduledNS)/1e3)
	}
	if !r.OK() {
		a.errors[r.ErrorKind]++
		if a.firstError == "" {
			a.firstError = r.Error
		}
		return
	}
	a.completed++
	a.promptTok += r.PromptTokens
	a.outputTok += r.OutputTokens
	if r.TokensFrom == "usage" {
		a.fromUsage++
	}
	if r.UsageRefused != "" {
		a.usageRefused++
	}
	if r.Structured {
		a.structured++
		if r.StructuredError != "" {
			// A wrong answer is counted, not timed: no latency, no goodput.
			a.structuredErrors++
			if a.firstStructuredError == "" {
				a.firstStructuredError = r.ID + ": " + r.StructuredError
			}
			return
		}
	}
	if r.ReasoningTokens > 0 || r.FirstAnswerNS > 0 {
		a.addReasoning(r)
	}
	ttft := time.Duration(r.FirstTokenNS - r.SentNS)
	e2e := time.Duration(r.EndNS - r.SentNS)
	a.record(HistE2E, int64(e2e/time.Microsecond))
	if r.FirstTokenNS > 0 {
		a.record(HistTTFT, int64(ttft/time.Microsecond))
	}
	for _, g := range r.ITLUS {
		a.record(HistITL, g)
	}
	tpot, hasTPOT := TPOT(r)
	if hasTPOT {
		a.record(HistTPOT, int64(tpot/time.Microsecond))
		a.decodeTok += r.OutputTokens - 1
		a.decodeNS += r.EndNS - r.FirstTokenNS
	}
	if r.FirstTokenNS > 0 {
		a.prefillTok += r.PromptTokens
		a.prefillNS += r.FirstTokenNS - r.SentNS
	}
	if a.openLoop {
		if r.FirstTokenNS > 0 {
			a.record(HistTTFTFromSchedule, (r.FirstTokenNS-r.ScheduledNS)/1e3)
		}
		a.record(HistE2EFromSchedule, (r.EndNS-r.ScheduledNS)/1e3)
	}
	if a.meetsSLO(r.FirstTokenNS > 0, ttft, tpot, hasTPOT, e2e) {
		a.good++
		a.goodPrompt += r.PromptTokens
		a.goodOutput += r.OutputTokens
	}
}

// addReasoning folds a completed request that reasoned.
func (a *Aggregator) addReasoning(r *Record) {
	a.reasoning.Requests++
	a.reasoning.ReasoningTokens += r.ReasoningTokens
	a.reasoning.AnswerTokens += max(r.OutputTokens-r.ReasoningTokens, 0)
	if r.FirstAnswerNS == 0 {
		if r.FinishReason == "length" {
			a.reasoning.Truncated++
		}
		return
	}
	if a.ttfa == nil {
		a.ttfa = hdrhistogram.New(histMinUS, histMaxUS, histDigits)
	}
	_ = a.ttfa.RecordValue(max(histMinUS, min((r.FirstAnswerNS-r.SentNS)/1e3, histMaxUS)))
}

// TPOT is (E2E − TTFT) / (output tokens − 1), defined for requests with at
// least two output tokens and a first token.
func TPOT(r *Record) (time.Duration, bool) {
	if r.OutputTokens < 2 || r.FirstTokenNS == 0 {
		return 0, false
	}
	return time.Duration((r.EndNS - r.FirstTokenNS) / int64(r.OutputTokens-1)), true
}

func (a *Aggregator) meetsSLO(hasTTFT bool, ttft, tpot time.Duration, hasTPOT bool, e2e time.Duration) bool {
	if a.sloTTFT > 0 && (!hasTTFT || ttft > a.sloTTFT) {
		return false
	}
	if a.sloTPOT > 0 && hasTPOT && tpot > a.sloTPOT {
		return false
	}
	if a.sloE2E > 0 && e2e > a.sloE2E {
		return false
	}
	return true
}

// Summary returns the repetition's summary; index is 1-based.
func (a *Aggregator) Summary(index int) Repetition {
	rep := Repetition{
		Index:            index,
		Duration:         Seconds(time.Duration(a.lastEndNS).Seconds()),
		Sent:             a.sent,
		Completed:        a.completed,
		Failed:           a.sent - a.completed,
		PromptTokens:     a.promptTok,
		OutputTokens:     a.outputTok,
		UsageRefused:     a.usageRefused,
		Structured:       a.structured,
		StructuredErrors: a.structuredErrors,
		Retries:          a.retries,
		GoodRequests:     a.good,
		GoodPromptTokens: a.goodPrompt,
		GoodOutputTokens: a.goodOutput,
		TTFT:             a.latency(HistTTFT),
		TPOT:             a.latency(HistTPOT),
		ITL:              a.latency(HistITL),
		E2E:              a.latency(HistE2E),
		Histograms:       map[string][]byte{},
	}
	rep.Recovery = a.summaryRecovery()
	if a.sessions != nil {
		rep.Sessions = a.sessions.summary()
	}
	rep.Subsets = a.subsetSummaries(time.Duration(a.lastEndNS))
	rep.SubsetsCut = a.subsetsCut
	if len(a.errors) > 0 {
		rep.Errors = a.errors
		rep.FirstError = a.firstError
	}
	if a.sent > 0 {
		rep.ErrorRate = float64(rep.Failed) / float64(a.sent)
	}
	if a.reasoning.Requests > 0 {
		rs := a.reasoning
		rs.TTFA = stats(a.ttfa)
		rep.Reasoning = &rs
	}
	if a.structured > 0 {
		rep.StructuredErrorRate = float64(a.structuredErrors) / float64(a.structured)
		rep.FirstStructuredError = a.firstStructuredError
	}
	switch {
	case a.completed > 0 && a.fromUsage == a.completed:
		rep.TokensFrom = "usage"
	case a.fromUsage == 0:
		rep.TokensFrom = "chunks"
	default:
		rep.TokensFrom = "mixed"
	}
	if w := time.Duration(a.lastEndNS).Seconds(); w > 0 {
		rep.RequestThroughput = float64(a.completed) / w
		rep.OutputThroughput = float64(a.outputTok) / w
		rep.InputThroughput = float64(a.promptTok) / w
		rep.Goodput = float64(a.good) / w
		rep.Concurrency = time.Duration(a.busyNS).Seconds() / w
	}
	if a.prefillNS > 0 {
		rep.PrefillThroughput = new(float64(a.prefillTok) / time.Duration(a.prefillNS).Seconds())
	}
	if a.decodeNS > 0 {
		rep.DecodeThroughput = new(float64(a.decodeTok) / time.Duration(a.decodeNS).Seconds())
	}
	if a.openLoop {
		s := &ScheduleStats{
			OfferedRate:      a.offered,
			SendLag:          stats(a.hists[HistSendLag]),
			TTFTFromSchedule: a.latency(HistTTFTFromSchedule),
			E2EFromSchedule:  a.latency(HistE2EFromSchedule),
		}
		if a.sent > 1 {
			s.ScheduledRate = float64(a.sent-1) / time.Duration(a.lastSched-a.firstSched).Seconds()
			s.AchievedRate = float64(a.sent-1) / time.Duration(a.lastSent-a.firstSent).Seconds()
		}
		s.Achieved = s.AchievedRate >= minAchievedShare*s.ScheduledRate &&
			time.Duration(s.SendLag.P99*float64(time.Millisecond)) <= maxSendLagP99
		rep.Schedule = s
	}
	for name, h := range a.hists {
		if h.TotalCount() == 0 {
			continue
		}
		if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
			rep.Histograms[name] = enc
		}
	}
	return rep
}

// stats summarises a histogram of microseconds in milliseconds.
func stats(h *hdrhistogram.Histogram) Stats {
	if h == nil || h.TotalCount() == 0 {
		return Stats{}
	}
	ms := func(us int64) float64 { return float64(us) / 1e3 }
	return Stats{
		Count: h.TotalCount(),
		Mean:  h.Mean() / 1e3,
		Min:   ms(h.Min()),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P95:   ms(h.ValueAtQuantile(95)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}
