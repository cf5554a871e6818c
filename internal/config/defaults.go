package config

import (
	"fmt"
	"math"
	"time"

	"github.com/perfgate/perfgate/internal/capacity"
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
	// QuickGateRepetitions is what perfgate gate measures from flags alone
	// (no config), unless --repetitions says: a fixed count, as the flag
	// gives one.
	QuickGateRepetitions = 6
	// DefaultAlpha 0.05 is benchstat's: one false regression in twenty
	// runs at most, over all gates of a run and all looks of a gate.
	DefaultAlpha = 0.05
	// DefaultOnInconclusive fail: a gate that could not tell whether the
	// change is within tolerance has not shown that it is; the report
	// says inconclusive and points at calibration.
	DefaultOnInconclusive = InconclusiveFail
	// DefaultTail off: no tail tests unless compare.tail asks for them
	// (docs/gating.md, "The tail test"). Measured on the simulator, they
	// found no regression the per-repetition gates missed, and cost the
	// family some power.
	DefaultTail = TailOff
	// DefaultEstimator harrell-davis: a repetition's p99 of a few hundred
	// requests is one of its largest values, which jumps from one
	// repetition to the next; the Harrell-Davis estimate weighs the
	// largest together (docs/gating.md, "Percentiles of a repetition").
	DefaultEstimator = EstimatorHarrellDavis
	// DefaultABMode co-resident: both stacks up at once, no restarts
	// between rounds; a stack that cannot co-reside says to use swap.
	DefaultABMode = ABCoResident
	// DefaultABRewarm short: a stack that stayed up since it was steady
	// needs no second warm-up to steady state (on llama-server, a full
	// warm-up every round took 895 of an A/B's 1,002 s), only a window of
	// its load after the other arm's turn.
	DefaultABRewarm = RewarmShort
	// DefaultBaselines is the directory `perfgate baseline promote` writes
	// and `perfgate gate` reads, beside perfgate.yaml.
	DefaultBaselines = "baselines"
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
	// DefaultRecoveryWindow is the span of send times a step load takes
	// TTFT p95 over when it looks for the recovery: at 4 req/s, twenty
	// requests a window.
	DefaultRecoveryWindow = 5 * time.Second
	// DefaultMaxErrorRate 5%: past it, latency percentiles describe only the
	// requests that survived and the run is broken (exit 3). Below it an
	// error-rate increase is a regression for a gate to judge, not a crash.
	DefaultMaxErrorRate = 0.05

	// DefaultStackKind external measures a server that is already up
	// (target.base_url): the examples run against `perfgate sim` started by
	// hand, and nothing is started unless the config says what.
	DefaultStackKind = StackExternal
	// DefaultEngine auto asks each engine's identity endpoint in turn.
	DefaultEngine = EngineAuto
	// DefaultHealthPath /health is what vLLM, TGI, SGLang, llama.cpp and the
	// simulator all serve.
	DefaultHealthPath = "/health"
	// DefaultReadyTimeout 15m: a 70B model's weights take minutes to read
	// from a cold disk, and CUDA graph capture adds more.
	DefaultReadyTimeout = 15 * time.Minute
	// DefaultExternalReadyTimeout 30s: an external server is meant to be up
	// already, so this only rides out a transient failure (a first
	// completion that fails, a server still binding its port): checks at
	// 0, 0.5, 1.5, 3.5, 7.5 s and then every 5 s, nine in all.
	DefaultExternalReadyTimeout = 30 * time.Second
	// DefaultHealthInterval 2s: fast enough to stop a run within seconds of
	// a crash, rare enough to cost the server nothing.
	DefaultHealthInterval = 2 * time.Second
	// DefaultHealthFailures 3: one slow answer under full load is not a
	// crash; three in a row (6s with the default interval) is.
	DefaultHealthFailures = 3
	// DefaultStopGrace 30s: vLLM and TGI drain and free GPU memory on
	// SIGTERM, which takes seconds; past 30s something is stuck.
	DefaultStopGrace = 30 * time.Second
	// DefaultStackLog is where a started stack's output goes.
	DefaultStackLog = "perfgate-stack.log"
	// DefaultPull missing pulls an image only when the host lacks it.
	DefaultPull = "missing"

	// DefaultWarmupMethod windows, as perf_analyzer does it.
	DefaultWarmupMethod = WarmupWindows
	// DefaultWarmupWindow 5s: perf_analyzer's measurement window; long
	// enough for a window's median TTFT to be stable at a few requests/s.
	DefaultWarmupWindow = 5 * time.Second
	// DefaultWarmupWindows 3 consecutive windows must agree (perf_analyzer).
	DefaultWarmupWindows = 3
	// DefaultWarmupTolerance 10%: each of those windows within 10% of their
	// mean (perf_analyzer's stability percentage).
	DefaultWarmupTolerance = 0.10
	// DefaultWarmupMax 5m: an engine that is still drifting after 5 minutes
	// of its own load is not going to settle; measuring it would gate noise.
	DefaultWarmupMax = 5 * time.Minute
	// DefaultQualityMode interleaved: eval items answered amid real traffic
	// see the batching that changes numerics under load.
	DefaultQualityMode = QualityInterleaved
	// DefaultQualityShare 0.1: one request in ten is an eval item, enough to
	// answer a few hundred items over a few repetitions without changing
	// the load much.
	DefaultQualityShare = 0.1
	// DefaultQualityConcurrency 8: items answered alone are a small batch,
	// as an eval harness would send them.
	DefaultQualityConcurrency = 8
	// DefaultTelemetryMetrics auto reads target.base_url + /metrics, where
	// vLLM, TGI, SGLang (--enable-metrics), llama.cpp (--metrics) and the
	// simulator serve Prometheus text.
	DefaultTelemetryMetrics = TelemetryAuto
	// DefaultTelemetryInterval 500ms: twice a second catches a KV-cache
	// or memory peak that lasts a batch, and costs nvidia-smi and the
	// engine nothing measurable.
	DefaultTelemetryInterval = 500 * time.Millisecond
	// DefaultTelemetryGPU auto takes the first GPU source that answers and
	// says "unavailable" when none does.
	DefaultTelemetryGPU = TelemetryAuto
	// DefaultOnUnsteady fail: a run that never reached steady state must not
	// produce samples that can pass a gate.
	DefaultOnUnsteady = "fail"

	// DefaultCapacityResolution 0.05: the run-to-run noise of a p99 over
	// about a hundred requests is several per cent, so a finer interval
	// buys probes, not accuracy; from a 2x bracket it takes four
	// bisections.
	DefaultCapacityResolution = 0.05
	// DefaultCapacityHolds every: a load holds when every repetition meets
	// every SLO, the simplest rule to explain and the more conservative
	// one (the capacity found is where nearly every repetition meets it).
	DefaultCapacityHolds = HoldsEvery
	// DefaultCapacityConfidence 0.95 for holds: bound: the usual one-sided
	// level, and alpha's complement at its default.
	DefaultCapacityConfidence = 0.95
)

// DefaultRepetitions is the repetitions of a config that does not say:
// {min: 4, max: 12}. A baseline (perfgate run) measures 12, and a pull
// request's gate compares its first 4 with them and measures more only
// while a gate is undecided. Against 12, 4 reach Holm's first step for the
// default gates of two scenarios at the first look; a 1.3x slower server is
// found there, and an unchanged one passes there in all but a few runs. On
// the README's config (the simulator, two scenarios, the default gates) an
// A/A passed 90 of 90 replayed pairs this way and 85 of 90 at a fixed 6,
// in two-thirds of the time a pull request measured at 6 (docs/gating.md,
// "The defaults, measured").
var DefaultRepetitions = Repetitions{Min: 4, Max: 12}

// DefaultABRounds are perfgate ab's rounds when the candidate config does
// not say (ab.rounds): {min: 8, max: 16}. Eight pairs are the fewest with
// which the default gates of a scenario reach Holm's first step (2^−8·7
// < 0.05); an A/B under drift on the simulator decided at 8 in most runs
// (docs/gating.md, "A/B: the defaults, measured").
var DefaultABRounds = Repetitions{Min: 8, Max: 16}

// DefaultCapacityGates are the gates of a capacity scenario unless the
// config changes them: the capacity may drop 5%, the default resolution of
// the search (a smaller change is within one bisection step). Latency and
// throughput gates do not apply there: each side is measured at its own
// capacity, so they would compare different loads.
var DefaultCapacityGates = map[string]string{
	"capacity": "-5%",
}

// CapacityWorstCase is the most probes a capacity search from lo to hi,
// starting at start, can need to reach its resolution: the default
// capacity.probes, and the figure a smaller one is warned against. It is
// capacity.WorstCase, which walks every path the search can take (from the
// geometric mean, at most ceil(log2(sqrt(hi/lo))) + 1 probes to bracket and
// ceil(log2(ln 2 / ln(1 + resolution))) to bisect: 10..640 at 5% gives
// 4 + 4 = 8). It is clamped to MaxCapacityProbes; 0 when the arguments
// are not a search (validation reports them).
func CapacityWorstCase(lo, hi, start, resolution float64, integer bool) int {
	return min(capacity.WorstCase(lo, hi, start, resolution, integer), MaxCapacityProbes)
}

// DefaultGates are the gates every scenario has unless the config changes
// them: the tail latencies a user feels, throughput and goodput, errors and
// cold start. Tails are noisier than medians, so p99 gets more room than
// p95: on the simulator's closed loop of 8 over a mixed workload (the
// README's chat-c8), a repetition's Harrell-Davis TTFT p99 of 200 requests
// varied 7.8% between repetitions, and an A/A at +15% was inconclusive in 3
// of 90 pairs at {min: 4, max: 12}, at +20% in none (docs/gating.md, "The
// defaults, measured"). Throughput is averaged over a whole repetition and
// is steadier.
var DefaultGates = map[string]string{
	"ttft.p95":          "+10%",
	"ttft.p99":          "+20%",
	"tpot.p99":          "+10%",
	"e2e.p99":           "+10%",
	"output_throughput": "-5%",
	"goodput":           "-5%",
	"error_rate":        "+1 points",
	"cold_start":        "+20%",
}

// StructuredGate is the metric of structured output's failures, and
// DefaultStructuredGate its gate in a scenario whose workload has
// structured requests (workload.Request.Structured): one point more of
// answers that are not the JSON, or the tool call, they were asked for. A
// scenario without them does not get it, so that its family (and the
// repetitions its gates need) is what it was.
const (
	StructuredGate        = "structured_error_rate"
	DefaultStructuredGate = "+1 points"
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
		Stack: Stack{
			Kind:                 DefaultStackKind,
			Engine:               DefaultEngine,
			HealthPath:           DefaultHealthPath,
			ReadyTimeout:         DefaultReadyTimeout,
			ExternalReadyTimeout: DefaultExternalReadyTimeout,
			HealthInterval:       DefaultHealthInterval,
			HealthFailures:       DefaultHealthFailures,
			StopGrace:            DefaultStopGrace,
			Log:                  DefaultStackLog,
		},
		Warmup: Warmup{
			Method:     DefaultWarmupMethod,
			Window:     DefaultWarmupWindow,
			Windows:    DefaultWarmupWindows,
			Tolerance:  DefaultWarmupTolerance,
			Max:        DefaultWarmupMax,
			OnUnsteady: DefaultOnUnsteady,
		},
		Repetitions: DefaultRepetitions,
		Compare:     Compare{Alpha: DefaultAlpha, OnInconclusive: DefaultOnInconclusive, Baselines: DefaultBaselines, Tail: DefaultTail, Estimator: DefaultEstimator},
		AB:          AB{Mode: DefaultABMode, Rewarm: DefaultABRewarm, Rounds: DefaultABRounds},
		Telemetry:   Telemetry{Metrics: DefaultTelemetryMetrics, Interval: DefaultTelemetryInterval, GPU: DefaultTelemetryGPU},
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
		if len(c.Target.BaseURLs) > 0 {
			c.Target.BaseURL = c.Target.BaseURLs[0]
		}
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
	st, w := &c.Stack, &c.Warmup
	for _, f := range []struct {
		path string
		zero bool
		set  func()
	}{
		{"stack.kind", st.Kind == "", func() { st.Kind = d.Stack.Kind }},
		{"stack.engine", st.Engine == "", func() { st.Engine = d.Stack.Engine }},
		{"stack.health_path", st.HealthPath == "", func() { st.HealthPath = d.Stack.HealthPath }},
		{"stack.ready_timeout", st.ReadyTimeout == 0, func() { st.ReadyTimeout = d.Stack.ReadyTimeout }},
		{"stack.external_ready_timeout", st.ExternalReadyTimeout == 0, func() { st.ExternalReadyTimeout = d.Stack.ExternalReadyTimeout }},
		{"stack.health_interval", st.HealthInterval == 0, func() { st.HealthInterval = d.Stack.HealthInterval }},
		{"stack.health_failures", st.HealthFailures == 0, func() { st.HealthFailures = d.Stack.HealthFailures }},
		{"stack.stop_grace", st.StopGrace == 0, func() { st.StopGrace = d.Stack.StopGrace }},
		{"stack.log", st.Log == "", func() { st.Log = d.Stack.Log }},
		{"telemetry.metrics", c.Telemetry.Metrics == "", func() { c.Telemetry.Metrics = d.Telemetry.Metrics }},
		{"telemetry.interval", c.Telemetry.Interval == 0, func() { c.Telemetry.Interval = d.Telemetry.Interval }},
		{"telemetry.gpu", c.Telemetry.GPU == "", func() { c.Telemetry.GPU = d.Telemetry.GPU }},
		{"warmup.method", w.Method == "", func() { w.Method = d.Warmup.Method }},
		{"warmup.window", w.Window == 0, func() { w.Window = d.Warmup.Window }},
		{"warmup.windows", w.Windows == 0, func() { w.Windows = d.Warmup.Windows }},
		{"warmup.tolerance", w.Tolerance == 0, func() { w.Tolerance = d.Warmup.Tolerance }},
		{"warmup.max", w.Max == 0, func() { w.Max = d.Warmup.Max }},
		{"warmup.on_unsteady", w.OnUnsteady == "", func() { w.OnUnsteady = d.Warmup.OnUnsteady }},
	} {
		if unset(f.path, f.zero) {
			f.set()
		}
	}
	if st.Kubernetes != nil && unset("stack.kubernetes.access", st.Kubernetes.Access == "") {
		st.Kubernetes.Access = AccessAuto
	}
	if st.Docker != nil && unset("stack.docker.pull", st.Docker.Pull == "") {
		st.Docker.Pull = DefaultPull
	}
	if unset("repetitions", c.Repetitions == Repetitions{}) {
		c.Repetitions = d.Repetitions
	}
	cp := &c.Compare
	if unset("compare.alpha", cp.Alpha == 0) {
		cp.Alpha = d.Compare.Alpha
	}
	if unset("compare.on_inconclusive", cp.OnInconclusive == "") {
		cp.OnInconclusive = d.Compare.OnInconclusive
	}
	if unset("compare.baselines", cp.Baselines == "") {
		cp.Baselines = d.Compare.Baselines
	}
	if unset("compare.tail", cp.Tail == "") {
		cp.Tail = d.Compare.Tail
	}
	if unset("compare.estimator", cp.Estimator == "") {
		cp.Estimator = d.Compare.Estimator
	}
	if unset("ab.mode", c.AB.Mode == "") {
		c.AB.Mode = d.AB.Mode
	}
	if unset("ab.rewarm", c.AB.Rewarm == "") {
		c.AB.Rewarm = d.AB.Rewarm
	}
	if unset("ab.rounds", c.AB.Rounds == (Repetitions{})) {
		c.AB.Rounds = d.AB.Rounds
	}
	if q := &c.Quality; q.Enabled() {
		if unset("quality.mode", q.Mode == "") {
			q.Mode = DefaultQualityMode
		}
		if unset("quality.share", q.Share == 0) {
			q.Share = DefaultQualityShare
		}
		if unset("quality.concurrency", q.Concurrency == 0) {
			q.Concurrency = DefaultQualityConcurrency
		}
	}
	if unset("seed", c.Seed == 0) {
		c.Seed = d.Seed
	}
	for i := range c.Scenarios {
		s := &c.Scenarios[i]
		p := fmt.Sprintf("scenarios[%d]", i)
		if unset(p+".max_error_rate", s.MaxErrorRate == 0) {
			s.MaxErrorRate = DefaultMaxErrorRate
		}
		if unset(p+".load.type", s.Load.Type == "") {
			s.Load.Type = DefaultLoadType
			if s.Headroom != nil {
				s.Load.Type = LoadClosed // its users hold their contexts
			}
		}
		if s.Load.Type == LoadGamma && unset(p+".load.burstiness", s.Load.Burstiness == 0) {
			s.Load.Burstiness = DefaultBurstiness
		}
		if s.Load.Type == LoadTrace && unset(p+".load.speedup", s.Load.Speedup == 0) {
			s.Load.Speedup = DefaultSpeedup
		}
		if s.Load.Type == LoadStep && unset(p+".load.burstiness", s.Load.Burstiness == 0) {
			s.Load.Burstiness = DefaultBurstiness
		}
		if (s.Load.Type == LoadStep || s.Fault != nil) && unset(p+".load.recovery_window", s.Load.RecoveryWindow == 0) {
			s.Load.RecoveryWindow = DefaultRecoveryWindow
		}
		// A synthetic workload speaks the target's API unless it says
		// otherwise: chat requests sent to /v1/completions would fail.
		if s.Synth != nil && validAPI(c.Target.API) && unset(p+".synth.api", s.Synth.API == "") {
			s.Synth.API = c.Target.API
		}
		if s.Capacity != nil {
			capacityDefaults(s.Capacity, s.Load.Type, c.Repetitions, p+".capacity", unset)
		}
		if s.Headroom != nil {
			headroomDefaults(s.Headroom, c.Repetitions, p+".headroom", unset)
		}
	}
}

// searchKeys point at the keys a capacity and a headroom section share.
type searchKeys struct {
	resolution, confidence, start *float64
	holds                         *string
	repetitions, probes           *int
}

// searchDefaults fills in the shared keys a search section at p leaves
// out: the resolution, the holds rule and its confidence, the repetitions
// a probe (as many as a run measures a scenario: each is one sample for the
// gate), the start (the geometric mean of min and max, from which the
// bracket reaches either end in as many doublings or halvings; rounded for
// a whole-number load) and the probes (the worst case: a search that stops
// early spends fewer). Start and probes follow min, max and resolution, so
// they are left 0 where those cannot make a search (validation reports
// them).
func searchDefaults(p string, unset func(string, bool) bool, reps Repetitions, integer bool, lo, hi float64, k searchKeys) {
	if unset(p+".resolution", *k.resolution == 0) {
		*k.resolution = DefaultCapacityResolution
	}
	if unset(p+".holds", *k.holds == "") {
		*k.holds = DefaultCapacityHolds
	}
	if *k.holds == HoldsBound && unset(p+".confidence", *k.confidence == 0) {
		*k.confidence = DefaultCapacityConfidence
	}
	if unset(p+".repetitions", *k.repetitions == 0) {
		*k.repetitions = reps.Max
	}
	if unset(p+".start", *k.start == 0) && lo > 0 && hi > lo {
		*k.start = math.Sqrt(lo * hi)
		if integer {
			*k.start = math.Round(*k.start)
		}
	}
	if unset(p+".probes", *k.probes == 0) {
		if wc := CapacityWorstCase(lo, hi, *k.start, *k.resolution, integer); wc > 0 {
			*k.probes = max(2, wc)
		}
	}
}

// capacityDefaults fills in the keys a capacity section leaves out; the
// top-level repetitions must have been defaulted. Start and probes follow
// min, max and resolution, so they are left 0 where those cannot make a
// search (validation reports them).
func capacityDefaults(cp *Capacity, loadType string, reps Repetitions, p string, unset func(string, bool) bool) {
	if unset(p+".metric", cp.Metric == "") {
		// A closed loop is a number of users; every other load is
		// paced at an offered rate.
		cp.Metric = CapacityRequestRate
		if loadType == LoadClosed {
			cp.Metric = CapacityConcurrency
		}
	}
	searchDefaults(p, unset, reps, cp.Metric == CapacityConcurrency, cp.Min, cp.Max, searchKeys{
		resolution: &cp.Resolution, holds: &cp.Holds, confidence: &cp.Confidence,
		repetitions: &cp.Repetitions, start: &cp.Start, probes: &cp.Probes})
}
