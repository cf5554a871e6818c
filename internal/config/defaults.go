package config

import (
	"fmt"
	"time"
)

// Defaults live here and only here. Each says why it is what it is; docs/config.md
// lists them, and a test keeps the two in step.
const (
	// DefaultBaseURL is where `vllm serve` and `perfgate sim` listen by
	// default, so the examples run with no target section at all.
	DefaultBaseURL = "http://127.0.0.1:8000"
	// DefaultAPI is the chat endpoint: what almost every deployment serves and
	// what the workload format's `messages` maps onto.
	DefaultAPI = "chat"
	// DefaultModel "auto" takes the first model of /v1/models: a serving stack
	// under test usually serves exactly one, and its name changes with the
	// pull request (that is what is being gated).
	DefaultModel = "auto"
	// DefaultTimeout bounds one request. Long generations under heavy load
	// take minutes; a request that takes longer than 5m is a failure worth
	// counting, not a latency worth waiting for.
	DefaultTimeout = 5 * time.Minute
	// DefaultRepetitions gives 5 samples a side: enough for benchmath's
	// Mann-Whitney U test to reach p < 0.05 (it needs at least 4), while
	// keeping a gate's run short.
	DefaultRepetitions = 5
	// DefaultSeed is fixed, not random, so that two runs of one config send
	// the same requests at the same times unless the user asks otherwise.
	DefaultSeed = 1
	// DefaultLoadType is closed-loop: the simplest load to reason about. Its
	// concurrency has no default: how many users is a decision the config
	// must state, and a silent 1 would hide it.
	DefaultLoadType = LoadClosed
	// DefaultBurstiness 1 makes a gamma load a Poisson load until the user
	// says how bursty it is.
	DefaultBurstiness = 1.0
	// DefaultSpeedup 1 replays a trace at its recorded pace.
	DefaultSpeedup = 1.0
)

// Defaults returns the config an empty file would give, less the scenarios it
// must still list: the top-level defaults. Per-scenario defaults (load type,
// gamma burstiness, trace speedup) are the constants above, applied to each
// scenario by applyDefaults.
func Defaults() Config {
	return Config{
		Target: Target{
			BaseURL: DefaultBaseURL,
			API:     DefaultAPI,
			Model:   DefaultModel,
			Timeout: DefaultTimeout,
		},
		Repetitions: DefaultRepetitions,
		Seed:        DefaultSeed,
	}
}

// applyDefaults fills in the keys the file left out. isSet says whether the
// file gives a path a value; a value the file states is never replaced, even a
// zero one (an explicit `repetitions: 0` is an error, not a 5). With isSet nil
// (a Config built in code) a zero value counts as left out.
//
// Requests and Duration have no default: both 0 means one repetition is one
// pass over the workload.
func applyDefaults(c *Config, isSet func(path string) bool) {
	unset := func(path string, zero bool) bool {
		if isSet == nil {
			return zero
		}
		return !isSet(path)
	}
	d := Defaults()
	if unset("target.base_url", c.Target.BaseURL == "") {
		c.Target.BaseURL = d.Target.BaseURL
	}
	if unset("target.api", c.Target.API == "") {
		c.Target.API = d.Target.API
	}
	if unset("target.model", c.Target.Model == "") {
		c.Target.Model = d.Target.Model
	}
	if unset("target.timeout", c.Target.Timeout == 0) {
		c.Target.Timeout = d.Target.Timeout
	}
	if unset("repetitions", c.Repetitions == 0) {
		c.Repetitions = d.Repetitions
	}
	if unset("seed", c.Seed == 0) {
		c.Seed = d.Seed
	}
	for i := range c.Scenarios {
		s := &c.Scenarios[i]
		p := fmt.Sprintf("scenarios[%d]", i)
		if unset(p+".load.type", s.Load.Type == "") {
			s.Load.Type = DefaultLoadType
		}
		if s.Load.Type == LoadGamma && unset(p+".load.burstiness", s.Load.Burstiness == 0) {
			s.Load.Burstiness = DefaultBurstiness
		}
		if s.Load.Type == LoadTrace && unset(p+".load.speedup", s.Load.Speedup == 0) {
			s.Load.Speedup = DefaultSpeedup
		}
		// A synthetic workload speaks the target's API unless it says
		// otherwise: chat requests sent to /v1/completions would fail.
		if s.Synth != nil && validAPI(c.Target.API) && unset(p+".synth.api", s.Synth.API == "") {
			s.Synth.API = c.Target.API
		}
	}
}
