package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/workload"
)

// Quick is a quick run from the command line: the flags of perfgate run,
// gate and ab that say what to measure without editing perfgate.yaml
// (--target, --concurrency, --requests, ...). A zero field was not given.
//
// With a config file, Apply overrides the file's fields with the flags that
// were given, in every scenario alike. Without one, Build makes a
// one-scenario config from the flags alone. Either way the config passes the
// validation a file does; docs/quickrun.md is the user's side of this.
type Quick struct {
	// Target is target.base_url (--target).
	Target string
	// API is target.api, chat or completions (--api).
	API string
	// Model is target.model (--model).
	Model string
	// Headers are "Name: value" lines (--header, repeatable), added to
	// target.headers; a name the config has already (in any case) is
	// replaced. Values are kept as given: ${VAR} is expanded when the run
	// starts, like the file's.
	Headers []string

	// Concurrency makes every scenario's load closed with this many users
	// (--concurrency); Rate an open loop at this many requests per second
	// (--rate) with Arrival's arrivals (--arrival: poisson, the default,
	// or gamma, whose Burstiness is --burstiness). At most one of the two.
	Concurrency int
	Rate        float64
	Arrival     string
	Burstiness  float64

	// Requests (--requests) or Duration (--duration) is how long each
	// repetition is; either replaces both of the scenario's.
	Requests int
	Duration time.Duration
	// Workload is a workload JSONL file (--workload), relative to the
	// current directory, that replaces every scenario's workload.
	Workload string
	// SLO sets the per-request objectives that are given
	// (--slo ttft=500ms,tpot=50ms), leaving the others as they are; see
	// ParseSLO.
	SLO string
	// Repetitions is repetitions, a fixed count (--repetitions).
	Repetitions int
}

// The quick run's defaults, for a config built from flags alone (Build).
const (
	// DefaultQuickRequests is the synthetic workload's size when neither
	// --requests nor --workload says: one pass over it is one repetition.
	DefaultQuickRequests = 100
	// DefaultQuickRepetitions 1: a quick run is a look, and --requests is
	// then the whole run. A gate without a config wants --repetitions 6
	// (QuickGateRepetitions) or more to decide.
	DefaultQuickRepetitions = 1
	// DefaultQuickWarmupWindow, DefaultQuickWarmupMax: a short warm-up of
	// the scenario's own load (three 1 s windows that agree, 20 s at most)
	// that warns rather than fails when a hosted endpoint never holds still.
	DefaultQuickWarmupWindow = time.Second
	DefaultQuickWarmupMax    = 20 * time.Second
)

// The arrivals --arrival takes.
var quickArrivals = []string{LoadPoisson, LoadGamma}

// QuickSynth is the synthetic workload of a config built from flags alone
// without --workload: the lengths perfgate workload synth writes by default
// (prompts of about 512 words, answers of at most about 192 tokens), n
// requests, and the target's API.
func QuickSynth(n int, api string) *workload.SynthSpec {
	return &workload.SynthSpec{
		Requests: n,
		Input:    workload.Dist{Type: "lognormal", Mean: 512, Stddev: 384, Min: 8, Max: 8192},
		Output:   workload.Dist{Type: "lognormal", Mean: 192, Stddev: 128, Min: 8, Max: 1024},
		API:      api,
	}
}

// Given reports whether any flag of the quick run was given.
func (q Quick) Given() bool {
	return q.Target != "" || q.API != "" || q.Model != "" || len(q.Headers) > 0 || q.loadGiven() ||
		q.Requests != 0 || q.Duration != 0 || q.Workload != "" || q.SLO != "" || q.Repetitions != 0
}

func (q Quick) loadGiven() bool {
	return q.Concurrency != 0 || q.Rate != 0 || q.Arrival != "" || q.Burstiness != 0
}

// Check reports the flags that cannot go together or are out of range,
// naming them: --concurrency with --rate, --requests with --duration,
// negative numbers, an unknown --api or --arrival, a malformed --header or
// --slo.
func (q Quick) Check() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if q.Concurrency != 0 && q.Rate != 0 {
		add("--concurrency and --rate: give one (a closed loop of users, or an open loop at a rate), not both")
	}
	if q.Requests != 0 && q.Duration != 0 {
		add("--requests and --duration: give one, not both")
	}
	if q.Concurrency < 0 {
		add("--concurrency: must be >= 1, got %d", q.Concurrency)
	}
	if q.Rate < 0 {
		add("--rate: must be > 0 requests per second, got %s", fmtFloat(q.Rate))
	}
	if q.Requests < 0 {
		add("--requests: must be >= 1, got %d", q.Requests)
	}
	if q.Duration < 0 {
		add("--duration: must be positive, got %s", q.Duration)
	}
	if q.Repetitions < 0 {
		add("--repetitions: must be >= 1, got %d", q.Repetitions)
	}
	if q.API != "" && !validAPI(q.API) {
		add("--api: want chat or completions, got %q", q.API)
	}
	if q.Arrival != "" && !slices.Contains(quickArrivals, q.Arrival) {
		add("--arrival: want %s, got %q", strings.Join(quickArrivals, " or "), q.Arrival)
	}
	if q.Arrival != "" && q.Rate == 0 {
		add("--arrival: only with --rate (it says how the open loop's requests arrive)")
	}
	if q.Burstiness != 0 && q.Arrival != LoadGamma {
		add("--burstiness: only with --arrival gamma")
	}
	if q.Burstiness < 0 {
		add("--burstiness: must be > 0, got %s", fmtFloat(q.Burstiness))
	}
	if _, err := ParseHeaders(q.Headers); err != nil {
		errs = append(errs, err)
	}
	if _, err := ParseSLO(q.SLO); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseHeaders reads --header values, each "Name: value" as curl takes
// them, into a map. A name may not be empty nor hold a space; the value is
// trimmed of surrounding spaces.
func ParseHeaders(lines []string) (map[string]string, error) {
	if len(lines) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	var errs []error
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			// The value may be a secret: name the flag, not the line.
			errs = append(errs, fmt.Errorf("--header: want \"Name: value\" (a header name, a colon, its value), got one without a name or colon%s", headerHint(name, ok)))
			continue
		}
		out[name] = strings.TrimSpace(value)
	}
	return out, errors.Join(errs...)
}

// headerHint names the bad header's name, when it has a short printable one,
// so that the user can find it among several.
func headerHint(name string, ok bool) string {
	if !ok || name == "" || len(name) > 64 || strings.ContainsAny(name, "\r\n\x00") {
		return ""
	}
	return fmt.Sprintf(" (header %q)", name)
}

// ParseSLO reads --slo: comma-separated key=duration pairs with keys ttft,
// tpot and e2e ("ttft=500ms,tpot=50ms"); 0 unsets an objective. Only the
// keys given are in the answer.
func ParseSLO(s string) (map[string]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]time.Duration{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || (k != "ttft" && k != "tpot" && k != "e2e") {
			return nil, fmt.Errorf("--slo: want key=duration pairs with keys ttft, tpot, e2e (ttft=500ms,tpot=50ms), got %q", kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--slo: %s is given twice", k)
		}
		v = strings.TrimSpace(v)
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 || d > MaxRequestTimeout {
			return nil, fmt.Errorf("--slo: %s wants a duration from 0 to %s like 500ms, got %q", k, shortDur(MaxRequestTimeout), v)
		}
		out[k] = d
	}
	return out, nil
}

// Apply overrides cfg's fields with the flags that were given, in every
// scenario alike, and validates the result (the same rules as a file):
//
//   - --target, --api, --model set the target's; --header adds or replaces
//     headers; a synthetic workload that spoke the old API speaks the new.
//   - --concurrency makes every load closed with that many users; --rate an
//     open loop (poisson, or --arrival gamma) at that rate. Keys of the old
//     load that do not apply to the new one (max_in_flight, speedup, a
//     sweep) are dropped. A capacity search finds its own load: either flag
//     on a config with one is an error naming it.
//   - --requests or --duration replaces both requests and duration.
//   - --workload replaces every workload (file or synth); the path, relative
//     to the current directory, is kept relative to the config's directory
//     where it can be.
//   - --slo sets the objectives it names; --repetitions a fixed count.
//
// On bad flags the error names them; on a config they make invalid, it is
// *Errors.
func (q Quick) Apply(cfg *Config) error {
	if err := q.Check(); err != nil {
		return err
	}
	headers, _ := ParseHeaders(q.Headers)
	slo, _ := ParseSLO(q.SLO)
	t := &cfg.Target
	if q.Target != "" {
		if len(t.BaseURLs) > 0 {
			return fmt.Errorf("--target names one server, and the config lists its replicas in target.base_urls: change them there")
		}
		t.BaseURL = q.Target
	}
	if q.API != "" && q.API != t.API {
		for i := range cfg.Scenarios {
			if sy := cfg.Scenarios[i].Synth; sy != nil && sy.API == t.API {
				sy.API = q.API
			}
		}
		t.API = q.API
	}
	if q.Model != "" {
		t.Model = q.Model
	}
	if len(headers) > 0 {
		merged := maps.Clone(t.Headers)
		if merged == nil {
			merged = map[string]string{}
		}
		for _, name := range slices.Sorted(maps.Keys(headers)) {
			maps.DeleteFunc(merged, func(k, _ string) bool { return strings.EqualFold(k, name) })
			merged[name] = headers[name]
		}
		t.Headers = merged
	}
	workloadPath, err := q.workloadFor(cfg.Dir)
	if err != nil {
		return err
	}
	for i := range cfg.Scenarios {
		s := &cfg.Scenarios[i]
		if q.Concurrency != 0 || q.Rate != 0 {
			if s.Searched() {
				return fmt.Errorf("%s: scenario %s is a capacity or headroom search, which finds its own load; --concurrency and --rate cannot set it (pick other scenarios with --scenario, or leave the flags out)", q.loadFlag(), s.Name)
			}
			s.Load = q.load(s.Load)
		}
		if q.Requests != 0 || q.Duration != 0 {
			s.Requests, s.Duration = q.Requests, q.Duration
		}
		if workloadPath != "" {
			s.Workload, s.Synth = workloadPath, nil
		}
		setSLO(&s.SLO, slo)
	}
	if q.Repetitions != 0 {
		cfg.Repetitions = Repetitions{Min: q.Repetitions, Max: q.Repetitions}
	}
	return cfg.Validate()
}

// loadFlag names the load flag that was given.
func (q Quick) loadFlag() string {
	if q.Rate != 0 {
		return "--rate"
	}
	return "--concurrency"
}

// load is l with the flags' load: closed at Concurrency, or open at Rate.
// What the new load shares with the old (overload, arrivals, think time)
// is kept where it applies.
func (q Quick) load(l Load) Load {
	n := Load{ThinkTime: l.ThinkTime}
	if q.Concurrency != 0 {
		n.Type, n.Concurrency = LoadClosed, q.Concurrency
		return n
	}
	n.Type, n.Rate = LoadPoisson, q.Rate
	if q.Arrival == LoadGamma {
		n.Type, n.Burstiness = LoadGamma, cmp.Or(q.Burstiness, DefaultBurstiness)
	}
	if l.Type != LoadClosed {
		n.Overload, n.Arrivals, n.MaxInFlight = l.Overload, l.Arrivals, l.MaxInFlight
	}
	return n
}

// workloadFor is --workload as a path for a config in dir: relative to dir
// where it can be (so that the config hash does not carry this machine's
// directories), else absolute; "" when the flag was not given.
func (q Quick) workloadFor(dir string) (string, error) {
	if q.Workload == "" {
		return "", nil
	}
	abs, err := filepath.Abs(q.Workload)
	if err != nil {
		return "", fmt.Errorf("--workload: %w", err)
	}
	if dir == "" {
		return abs, nil
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel), nil
	}
	return abs, nil
}

// setSLO sets the objectives given.
func setSLO(s *SLO, given map[string]time.Duration) {
	for k, d := range given {
		switch k {
		case "ttft":
			s.TTFT = d
		case "tpot":
			s.TPOT = d
		case "e2e":
			s.E2E = d
		}
	}
}

// Build makes the config of a quick run from the flags alone, with dir (the
// current directory) as the config's directory: the target (--target, else
// DefaultBaseURL), an external server (no stack to start), a short warm-up
// that warns when the server never holds still, one scenario at the flags'
// load, over --workload or a synthetic workload (QuickSynth) of --requests
// requests (DefaultQuickRequests without it), and DefaultQuickRepetitions
// repetitions unless --repetitions says. --concurrency or --rate is
// required: how much load is a decision the run must state.
//
// The scenario is named after its load (closed-c8, poisson-r4, gamma-r4),
// which is what baselines/<name>.json of a gate without a config is named.
// The config is defaulted and validated as a file is.
func (q Quick) Build(dir string) (*Config, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if q.Concurrency == 0 && q.Rate == 0 {
		return nil, errors.New("a config from the flags alone needs a load: give --concurrency N or --rate R (N users in a closed loop, or R requests per second in an open one); or name a config with -c FILE")
	}
	abs, err := filepath.Abs(cmp.Or(dir, "."))
	if err != nil {
		return nil, fmt.Errorf("quick run: %w", err)
	}
	api := cmp.Or(q.API, DefaultAPI)
	s := Scenario{Name: q.scenarioName(), Load: q.load(Load{})}
	if q.Workload == "" {
		s.Synth = QuickSynth(cmp.Or(q.Requests, DefaultQuickRequests), api)
	}
	cfg := &Config{
		Target:      Target{BaseURL: cmp.Or(q.Target, DefaultBaseURL), API: api, Model: cmp.Or(q.Model, DefaultModel)},
		Warmup:      Warmup{Window: DefaultQuickWarmupWindow, Max: DefaultQuickWarmupMax, OnUnsteady: "warn"},
		Repetitions: Repetitions{Min: DefaultQuickRepetitions, Max: DefaultQuickRepetitions},
		Scenarios:   []Scenario{s},
		Dir:         abs,
	}
	applyDefaults(cfg, nil)
	if err := q.Apply(cfg); err != nil {
		var probs *Errors
		if errors.As(err, &probs) {
			return nil, fmt.Errorf("the config the flags make: %w", err)
		}
		return nil, err
	}
	return cfg, nil
}

// scenarioName names a quick run's scenario after its load.
func (q Quick) scenarioName() string {
	if q.Concurrency != 0 {
		return "closed-c" + strconv.Itoa(q.Concurrency)
	}
	typ := LoadPoisson
	if q.Arrival == LoadGamma {
		typ = LoadGamma
	}
	return typ + "-r" + strconv.FormatFloat(q.Rate, 'f', -1, 64)
}
