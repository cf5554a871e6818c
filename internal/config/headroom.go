package config

import (
	"math"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// The dimensions a headroom search searches (Headroom.Search).
const (
	// HeadroomContext searches the longest context, prompt plus output
	// tokens, that Headroom.Users closed-loop users can each hold.
	HeadroomContext = "context"
	// HeadroomUsers searches the most closed-loop users that can each
	// hold Headroom.Context tokens.
	HeadroomUsers = "users"
)

// Defaults of a headroom section.
const (
	// DefaultHeadroomOutputTokens 128: a request's answer is a part of its
	// context, long enough that a KV cache that grows while decoding (and
	// an engine that truncates at its context) shows, short enough that a
	// probe at a long context is mostly its prefill.
	DefaultHeadroomOutputTokens = 128
	// DefaultHeadroomRequestsPerUser 2: each user sends two requests a
	// repetition when the scenario sets no requests, so every user's
	// context is held at once for most of the repetition.
	DefaultHeadroomRequestsPerUser = 2
)

// DefaultHeadroomGates are the gates of a headroom scenario unless the config
// changes them: the headroom may drop 10% (twice the default resolution of
// the search: a smaller change can be one bisection step).
var DefaultHeadroomGates = map[string]string{
	"headroom": "-10%",
}

// HeadroomGate is the metric a headroom search gives: one headroom (tokens
// or users) per repetition index.
const HeadroomGate = "headroom"

// MaxHeadroomContext bounds a headroom search's context: 2^20 tokens, the
// longest context a request may have (workload.MaxLength).
const MaxHeadroomContext = 1 << 20

// Headroom configures a headroom search: how close to the wall of memory a
// server runs. At Users users it finds the longest context (prompt plus
// output tokens) every request can have, or at Context tokens the most
// users, where a probe holds when no request failed (refused for its
// length, cut by a crash or an out-of-memory), every answer is as long as
// asked, the engine's preemptions and KV-cache usage stay within
// MaxPreemptions and MaxKVCache, and SLO holds. The search brackets and
// bisects as a capacity search does, and its requests are its own: each
// probe sends prompts sized to the context from a calibration of the
// server's tokenizer.
type Headroom struct {
	// Search is context (the default) or users.
	Search string `yaml:"search" json:"search"`
	// Users is the closed-loop users of a search over context.
	Users int `yaml:"users" json:"users,omitempty"`
	// Context is every request's context, in tokens, for a search over
	// users.
	Context int `yaml:"context" json:"context,omitempty"`
	// OutputTokens is what every request asks to generate (max_tokens,
	// min_tokens and ignore_eos), part of its context.
	OutputTokens int `yaml:"output_tokens" json:"output_tokens"`
	// Min and Max bound the search, in tokens (context) or users; Start is
	// the first probe (the geometric mean by default).
	Min   float64 `yaml:"min" json:"min"`
	Max   float64 `yaml:"max" json:"max"`
	Start float64 `yaml:"start" json:"start"`
	// Resolution, Holds, Confidence, Repetitions and Probes are as a
	// capacity search's.
	Resolution  float64 `yaml:"resolution" json:"resolution"`
	Holds       string  `yaml:"holds" json:"holds"`
	Confidence  float64 `yaml:"confidence" json:"confidence,omitempty"`
	Repetitions int     `yaml:"repetitions" json:"repetitions"`
	Probes      int     `yaml:"probes" json:"probes"`
	// SLO are latency objectives a probe must also meet (optional).
	SLO map[string]time.Duration `yaml:"slo" json:"slo,omitempty"`
	// MaxPreemptions is the most preemptions the engine may report in a
	// repetition (default 0: one preemption is a server recomputing work it
	// had, past its KV cache).
	MaxPreemptions *float64 `yaml:"max_preemptions" json:"max_preemptions"`
	// MaxKVCache is the highest KV-cache usage (0..1) the engine may report
	// at any scrape; 0 is no limit.
	MaxKVCache float64 `yaml:"max_kv_cache" json:"max_kv_cache,omitempty"`
}

// Metric is the capacity search's metric the headroom search runs as:
// context tokens, or concurrency for users.
func (h *Headroom) Metric() string {
	if h.Search == HeadroomUsers {
		return CapacityConcurrency
	}
	return HeadroomContext
}

// Searched reports whether the scenario is measured by a search (capacity
// or headroom) rather than at one load: its latency is then measured at
// each side's own load, and its gates are the search's.
func (s *Scenario) Searched() bool { return s.Capacity != nil || s.Headroom != nil }

// SearchRepetitions is the repetitions each probe of the scenario's search
// measures (its samples for the gate); 0 when it has no search.
func (s *Scenario) SearchRepetitions() int {
	switch {
	case s.Capacity != nil:
		return s.Capacity.Repetitions
	case s.Headroom != nil:
		return s.Headroom.Repetitions
	}
	return 0
}

// Result is what the search looks for, as its result records it: a
// capacity search's record of its metric, range and rule, with the
// headroom's fixed users or context and its limits.
func (h *Headroom) Result() result.CapacitySearch {
	slo := make(map[string]float64, len(h.SLO))
	for k, d := range h.SLO {
		slo[k] = float64(d) / float64(time.Millisecond)
	}
	hs := &result.HeadroomSearch{OutputTokens: h.OutputTokens, MaxKVCache: h.MaxKVCache}
	if h.MaxPreemptions != nil {
		hs.MaxPreemptions = *h.MaxPreemptions
	}
	if h.Search == HeadroomUsers {
		hs.Context = h.Context
	} else {
		hs.Users = h.Users
	}
	return result.CapacitySearch{
		Metric: h.Metric(), SLO: slo, Min: h.Min, Max: h.Max, Start: h.Start,
		Resolution: h.Resolution, Rule: h.Holds, Confidence: h.Confidence,
		Repetitions: h.Repetitions, Budget: h.Probes, Headroom: hs,
	}
}

// headroomDefaults fills in the keys a headroom section leaves out; the
// top-level repetitions must have been defaulted.
func headroomDefaults(h *Headroom, reps Repetitions, p string, unset func(string, bool) bool) {
	if unset(p+".search", h.Search == "") {
		h.Search = HeadroomContext
	}
	if unset(p+".output_tokens", h.OutputTokens == 0) {
		h.OutputTokens = DefaultHeadroomOutputTokens
	}
	if unset(p+".max_preemptions", h.MaxPreemptions == nil) {
		zero := 0.0
		h.MaxPreemptions = &zero
	}
	searchDefaults(p, unset, reps, true, h.Min, h.Max, searchKeys{
		resolution: &h.Resolution, holds: &h.Holds, confidence: &h.Confidence,
		repetitions: &h.Repetitions, start: &h.Start, probes: &h.Probes})
}

// headroom checks a scenario's headroom section; p is the scenario's path.
func (v *validator) headroom(p string, s *Scenario) {
	hp, h := p+".headroom", s.Headroom
	if s.Capacity != nil {
		v.add(hp, "a scenario searches its capacity or its headroom, not both: put each in a scenario of its own")
		return
	}
	if len(h.SLO) > 0 {
		v.capacitySLO(hp+".slo", h.SLO)
	}
	lo, hi, unit := 2.0, float64(MaxHeadroomContext), "tokens"
	switch h.Search {
	case HeadroomContext:
		v.intIn(hp+".users", h.Users, 1, MaxConcurrency, "users")
		if v.set(hp+".context", h.Context != 0) {
			v.add(hp+".context", "a search over context finds it: remove context (headroom.min and headroom.max bound it), or search: users")
		}
		if h.OutputTokens >= 1 && lo <= float64(h.OutputTokens) {
			lo = float64(h.OutputTokens) + 1 // a context holds its output and one prompt token
		}
	case HeadroomUsers:
		lo, hi, unit = 1, MaxConcurrency, "users"
		v.intIn(hp+".context", h.Context, 2, MaxHeadroomContext, "tokens")
		if v.set(hp+".users", h.Users != 0) {
			v.add(hp+".users", "a search over users finds them: remove users (headroom.min and headroom.max bound them), or search: context")
		}
		if h.Context >= 2 && h.OutputTokens >= h.Context {
			v.add(hp+".output_tokens", "must be below headroom.context (%d tokens: the output is part of it), got %d", h.Context, h.OutputTokens)
		}
	default:
		v.add(hp+".search", "must be %s or %s, got %q", HeadroomContext, HeadroomUsers, h.Search)
		return
	}
	v.intIn(hp+".output_tokens", h.OutputTokens, 1, MaxHeadroomContext-1, "tokens")
	bound := func(key, what string, x float64) bool {
		path := hp + "." + key
		switch {
		case !v.set(path, x != 0):
			v.add(path, "required: the %s %s to probe", what, unit)
		case x != math.Trunc(x):
			v.add(path, "want a whole number of %s, got %s", unit, whole(x))
		case !inRange(x, lo, hi):
			v.add(path, "must be from %s to %s%s, got %s", whole(lo), whole(hi), unitSuffix(unit), whole(x))
		default:
			return true
		}
		return false
	}
	minOK := bound("min", "fewest", h.Min)
	maxOK := bound("max", "most", h.Max)
	if minOK && maxOK && !(h.Max > h.Min) {
		v.add(hp+".max", "must be more than min (%s), got %s", whole(h.Min), whole(h.Max))
		maxOK = false
	}
	if minOK && maxOK && (!inRange(h.Start, h.Min, h.Max) || h.Start != math.Trunc(h.Start)) {
		v.add(hp+".start", "must be a whole number from min (%s) to max (%s), got %s", whole(h.Min), whole(h.Max), whole(h.Start))
	}
	v.searchRules(hp, searchKnobs{min: h.Min, max: h.Max, start: h.Start, resolution: h.Resolution, confidence: h.Confidence,
		holds: h.Holds, repetitions: h.Repetitions, probes: h.Probes, integer: true, ranged: minOK && maxOK})
	if h.MaxPreemptions != nil && !(*h.MaxPreemptions >= 0 && *h.MaxPreemptions <= 1e9) {
		v.add(hp+".max_preemptions", "must be from 0 to 1e9 preemptions a repetition, got %s", whole(*h.MaxPreemptions))
	}
	if !inRange(h.MaxKVCache, 0, 1) {
		v.add(hp+".max_kv_cache", "must be a fraction from 0 (no limit) to 1, got %s", whole(h.MaxKVCache))
	}
	if s.Fault != nil {
		v.add(p+".fault", "a headroom search finds where the server stops holding; a fault would break every probe on purpose: measure it in a scenario of its own")
	}
	// The users a probe may hold, and the context of its requests.
	users, tokens := float64(h.Users), h.Max
	if h.Search == HeadroomUsers {
		users, tokens = h.Max, float64(h.Context)
	}
	if s.Requests > 0 && float64(s.Requests) < users {
		v.add(p+".requests", "%d requests a repetition cannot keep %s users busy at once: at least %s (by default two a user)",
			s.Requests, whole(users), whole(users))
	}
	count := float64(s.Requests)
	if count == 0 {
		count = DefaultHeadroomRequestsPerUser * users
	}
	if count*tokens > MaxHeadroomProbeTokens {
		v.add(hp+".max", "a probe of %s requests of %s tokens is %s tokens of prompts perfgate holds in memory: at most %s (fewer users, a shorter max, or requests)",
			whole(count), whole(tokens), whole(count*tokens), whole(MaxHeadroomProbeTokens))
	}
}

// MaxHeadroomProbeTokens bounds the tokens of one headroom probe's
// requests, which perfgate synthesises and holds: 2^27 (134 million, about
// a gigabyte of text), 128 users of a million tokens.
const MaxHeadroomProbeTokens = 1 << 27

// whole writes a whole number of tokens or users as digits: 1048576, not
// 1.048576e+06.
func whole(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// headroomLoad checks the load of a headroom search: a closed loop whose
// users the search holds (headroom.users) or sets.
func (v *validator) headroomLoad(p string, s *Scenario, concGiven bool) {
	if s.Load.Type != LoadClosed {
		v.add(p+".type", "a headroom search holds users, each with its context: want closed, got %q", s.Load.Type)
		return
	}
	if concGiven {
		v.add(p+".concurrency", "the headroom search sets the users: remove load.concurrency (headroom.users for a search over context)")
	}
}

// headroomWorkload checks that a headroom scenario names no workload: the
// search sends its own requests, sized to each probe.
func (v *validator) headroomWorkload(p string, s *Scenario) {
	if s.Workload != "" {
		v.add(p+".workload", "a headroom search sends its own requests, sized to each probe's context: remove workload")
	}
	if s.Synth != nil {
		v.add(p+".synth", "a headroom search sends its own requests, sized to each probe's context: remove synth")
	}
}
