package config

import (
	"errors"
	"fmt"

	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"unicode"
)

// namePattern is what a scenario name may be: it is used in file names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

var loadTypes = []string{LoadClosed, LoadPoisson, LoadGamma, LoadTrace, LoadStep}

// validator collects the problems of a decoded, defaulted config.
type validator struct {
	c     *Config
	src   *source
	probs []Problem
	warns []Problem
}

// Validate checks a config that was built or changed in code (flags that
// override the file, say) by the rules Parse applies, returning *Errors or
// nil, and refreshes Warnings. Problems carry field paths but no lines, and a
// non-zero value counts as set (an explicit zero cannot be told from a missing
// key here).
func (c *Config) Validate() error {
	probs, warns := validate(c, nil)
	c.Warnings = warns
	if len(probs) > 0 {
		return &Errors{Problems: probs}
	}
	return nil
}

// validate checks every rule and returns every problem (and warnings), each
// with its field path and, from src, its position.
func validate(c *Config, src *source) (probs, warns []Problem) {
	if src == nil {
		src = newSource(c.Path)
	}
	v := &validator{c: c, src: src}
	v.target()
	v.replicas()
	v.stack()
	v.warmup()
	v.durationIn("cooldown", c.Cooldown, 0, MaxPause)
	v.repetitions()
	v.compare()
	v.quality()
	v.telemetry()
	v.utilization()
	v.percentiles()
	v.gates("gates", c.Gates)
	if len(c.Scenarios) == 0 {
		v.add("scenarios", "at least one scenario is required")
	}
	seen := map[string]int{}
	for i := range c.Scenarios {
		v.scenario(i, seen)
	}
	v.pointNames()
	sortProblems(v.probs)
	return v.probs, v.warns
}

func (v *validator) repetitions() {
	v.counts("repetitions", v.c.Repetitions)
	v.counts("ab.rounds", v.c.AB.Rounds)
}

// counts checks a count of repetitions (or rounds) at path: a number from
// 1 to MaxRepetitions, or a range within it.
func (v *validator) counts(path string, r Repetitions) {
	switch {
	case r.Fixed() && (r.Min < 1 || r.Min > MaxRepetitions):
		v.intIn(path, r.Min, 1, MaxRepetitions, "")
	case r.Min < 1:
		v.add(path+".min", "must be >= 1, got %d", r.Min)
	case r.Max < r.Min:
		v.add(path+".max", "must be >= min (%d), got %d", r.Min, r.Max)
	case r.Max > MaxRepetitions:
		v.intIn(path+".max", r.Max, r.Min, MaxRepetitions, "")
	}
}

func (v *validator) compare() {
	cp := v.c.Compare
	if !(cp.Alpha > 0 && cp.Alpha < 0.5) {
		v.add("compare.alpha", "must be in (0, 0.5), got %s", fmtFloat(cp.Alpha))
	}
	if cp.OnInconclusive != InconclusiveFail && cp.OnInconclusive != InconclusivePass {
		v.add("compare.on_inconclusive", "must be fail or pass, got %q", cp.OnInconclusive)
	}
	if strings.TrimSpace(cp.Baselines) == "" {
		v.add("compare.baselines", "must not be empty")
	}
	if cp.Estimator != EstimatorHarrellDavis && cp.Estimator != EstimatorSample {
		v.add("compare.estimator", "must be %s or %s, got %q", EstimatorHarrellDavis, EstimatorSample, cp.Estimator)
	}
	if _, err := ParseTail(cp.Tail); err != nil {
		v.add("compare.tail", "%v", err)
	}
	if m := v.c.AB.Mode; m != ABCoResident && m != ABSwap {
		v.add("ab.mode", "must be %s or %s, got %q", ABCoResident, ABSwap, m)
	}
	if r := v.c.AB.Rewarm; r != RewarmShort && r != RewarmFull {
		v.add("ab.rewarm", "must be %s or %s, got %q", RewarmShort, RewarmFull, r)
	}
}

func (v *validator) add(path, format string, args ...any) {
	v.probs = append(v.probs, v.src.problem(path, format, args...))
}

// set says whether the file gives path a value; for a config with no source
// (built in code) a non-zero value counts as given.
func (v *validator) set(path string, nonzero bool) bool {
	if !v.src.parsed {
		return nonzero
	}
	return v.src.set[path]
}

func validAPI(api string) bool { return api == "chat" || api == "completions" }

func (v *validator) target() {
	t := v.c.Target
	u, err := url.Parse(t.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.add("target.base_url", "must be an http or https URL like %s, got %q", DefaultBaseURL, t.BaseURL)
	case u.RawQuery != "" || u.Fragment != "":
		v.add("target.base_url", "must not have a query or fragment, got %q", t.BaseURL)
	case hasV1(u.Path):
		v.add("target.base_url", "must be the server root without /v1 (perfgate adds /v1/...), got %q", t.BaseURL)
	}
	if !validAPI(t.API) {
		v.add("target.api", "must be chat or completions, got %q", t.API)
	}
	if strings.TrimSpace(t.Model) == "" {
		v.add("target.model", "must not be empty (auto takes the first model of /v1/models)")
	}
	v.positiveAtMost("target.timeout", t.Timeout, MaxRequestTimeout)
	for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n:") {
			v.add("target.headers", "header name %q is not a valid HTTP header name", name)
		} else if strings.ContainsAny(t.Headers[name], "\r\n\x00") {
			// Go's HTTP client would refuse every request at send time.
			v.add("target.headers."+name, "a header value must not hold a line break or a NUL byte")
		} else {
			v.headerVars(name, t.Headers[name])
		}
	}
	if len(t.Adapters) > MaxAdapters {
		v.add("target.adapters", "%d adapters, more than the %d perfgate reloads", len(t.Adapters), MaxAdapters)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Adapters)) {
		path := t.Adapters[name]
		switch {
		case name == "" || len(name) > 256 || strings.IndexFunc(name, unicode.IsControl) >= 0:
			v.add("target.adapters", "adapter name %q: want 1 to 256 bytes without control characters", name)
		case strings.TrimSpace(path) == "" || len(path) > 4096 || strings.IndexFunc(path, unicode.IsControl) >= 0:
			v.add("target.adapters."+name, "want the path the server loads the adapter from (1 to 4096 bytes, no control characters), got %q", path)
		}
	}
}

// MaxAdapters bounds target.adapters.
const MaxAdapters = 256

// headerVars checks the ${NAME} references of one header value (headers.go)
// and warns of a variable this environment lacks: run, gate and ab refuse
// to start without it. Only whether it is set is read, never its value.
func (v *validator) headerVars(header, value string) {
	path := "target.headers." + header
	names, err := HeaderVars(header, value)
	var se *HeaderSyntaxError
	var re *HeaderRefusedError
	switch {
	case errors.As(err, &se):
		v.add(path, "%s", se.reason())
		return
	case errors.As(err, &re):
		v.add(path, "%s", re.reason())
		return
	}
	for _, name := range names {
		if val, ok := os.LookupEnv(name); !ok || val == "" {
			v.warn(path, "${%s} is not set in this environment (or is empty); a run refuses to start without it", name)
		}
	}
}

func (v *validator) scenario(i int, seen map[string]int) {
	s := &v.c.Scenarios[i]
	p := fmt.Sprintf("scenarios[%d]", i)

	switch {
	case s.Name == "":
		v.add(p+".name", "required (it names the scenario in results and baselines/<name>.json)")
	case !namePattern.MatchString(s.Name):
		v.add(p+".name", "must match %s (it is used in file names), got %q", namePattern, s.Name)
	case len(s.Name) > MaxNameLength:
		v.add(p+".name", "must be at most %d characters (it titles reports and names a baseline file), got %d", MaxNameLength, len(s.Name))
	default:
		if j, dup := seen[s.Name]; dup {
			v.add(p+".name", "duplicate name %q (also scenarios[%d])", s.Name, j)
		} else {
			seen[s.Name] = i
		}
	}

	switch {
	case s.Headroom != nil:
		v.headroomWorkload(p, s)
	case s.Workload != "" && s.Synth != nil:
		v.add(p+".synth", "set exactly one of workload and synth, not both")
	case s.Workload == "" && s.Synth == nil:
		v.add(p, "set one of workload (a JSONL file) or synth (a synthetic workload)")
	case s.Workload != "":
		v.file(p+".workload", s.Workload)
	default:
		for _, sp := range s.Synth.Problems() {
			v.add(p+".synth."+sp.Field, "%s", sp.Msg)
		}
		if validAPI(v.c.Target.API) && validAPI(s.Synth.API) && s.Synth.API != v.c.Target.API {
			v.add(p+".synth.api", "is %s but target.api is %s: the requests would not fit the endpoint", s.Synth.API, v.c.Target.API)
		}
		// Problems leaves the file system alone; an empirical length file
		// resolves against the config's directory, like a workload.
		if f := s.Synth.Input.File; f != "" {
			v.file(p+".synth.input.file", f)
		}
		if f := s.Synth.Output.File; f != "" {
			v.file(p+".synth.output.file", f)
		}
	}

	v.load(p+".load", s)

	v.intIn(p+".requests", s.Requests, 0, MaxRequests, "requests")
	v.durationIn(p+".duration", s.Duration, 0, MaxRunDuration)
	if !(s.MaxErrorRate >= 0 && s.MaxErrorRate <= 1) {
		v.add(p+".max_error_rate", "must be in [0,1] (a fraction: 0.05 is 5%%), got %s", fmtFloat(s.MaxErrorRate))
	}
	v.gates(p+".gates", s.Gates)
	v.scenarioGates(p+".gates", s)
	if s.Capacity != nil {
		v.capacity(p, s)
	}
	if s.Headroom != nil {
		v.headroom(p, s)
	}
	if s.Fault != nil {
		v.fault(p, s)
	}
	if s.ColdAdapters && len(v.c.Target.Adapters) == 0 {
		v.add(p+".cold_adapters", "needs target.adapters: the adapters' names and the paths the server loads them from")
	}
	if s.FreshStack && v.c.Stack.Kind == StackExternal {
		v.add(p+".fresh_stack", "needs a stack perfgate starts (stack.kind process or docker), and stack.kind is external")
	}
	for _, o := range []struct {
		key string
		d   time.Duration
	}{{"ttft", s.SLO.TTFT}, {"tpot", s.SLO.TPOT}, {"e2e", s.SLO.E2E}} {
		v.durationIn(p+".slo."+o.key, o.d, 0, MaxRequestTimeout)
	}
}

// file checks that a file named in the config exists, resolved against the
// config's directory.
func (v *validator) file(path, name string) { v.exists(path, name, false) }

// dir checks that a directory named in the config exists, resolved against
// the config's directory.
func (v *validator) dir(path, name string) { v.exists(path, name, true) }

func (v *validator) exists(path, name string, wantDir bool) {
	kind, other := "file", "directory"
	if wantDir {
		kind, other = other, kind
	}
	abs := resolve(v.c.Dir, name)
	st, err := os.Stat(abs)
	switch {
	case os.IsNotExist(err):
		v.add(path, "%s %s not found (resolved to %s)", kind, name, abs)
	case err != nil:
		v.add(path, "%s %s: %v", kind, name, err)
	case st.IsDir() != wantDir:
		v.add(path, "%s is a %s, want a %s (resolved to %s)", name, other, kind, abs)
	}
}

func (v *validator) load(p string, s *Scenario) {
	l := s.Load
	typ := l.Type
	known := false
	for _, t := range loadTypes {
		known = known || t == typ
	}
	if !known {
		v.add(p+".type", "must be one of %s, got %q", strings.Join(loadTypes, ", "), typ)
		// The keys below depend on the type; checking them against an
		// unknown one would only add noise.
		return
	}
	open := typ != LoadClosed
	paced := typ == LoadPoisson || typ == LoadGamma

	// Keys that only one kind of load reads: setting one on another kind is
	// a mistake (the user believes it has an effect).
	concGiven := v.set(p+".concurrency", l.Concurrency != 0 || l.SweepParam == SweepConcurrency)
	rateGiven := v.set(p+".rate", l.Rate != 0 || l.SweepParam == SweepRate || l.Steps != nil)
	step := typ == LoadStep
	only := []struct {
		key, forTypes  string
		given, applies bool
	}{
		{"concurrency", "closed loads", concGiven, typ == LoadClosed},
		{"rate", "poisson, gamma and step loads", rateGiven, paced || step},
		{"burstiness", "gamma and step loads", v.set(p+".burstiness", l.Burstiness != 0), typ == LoadGamma || step},
		{"at", "step loads", v.set(p+".at", l.At != nil), step},
		{"recovery_window", "step loads and scenarios with a fault", v.set(p+".recovery_window", l.RecoveryWindow != 0), step || s.Fault != nil},
		{"speedup", "trace loads", v.set(p+".speedup", l.Speedup != 0), typ == LoadTrace},
		{"max_in_flight", "poisson, gamma and trace loads (a closed load is bounded by its concurrency; a step load's spike must reach the server, not queue in perfgate, for its recovery to be the server's)", v.set(p+".max_in_flight", l.MaxInFlight != 0), open && !step},
	}
	for _, o := range only {
		if o.given && !o.applies {
			v.add(p+"."+o.key, "only for %s, and this load is %s", o.forTypes, typ)
		}
	}

	switch {
	case s.Headroom != nil:
		v.headroomLoad(p, s, concGiven)
	case step:
		v.stepLoad(p, s)
	case s.Capacity != nil:
		v.capacityLoad(p, s, rateGiven, concGiven)
	case typ == LoadClosed && l.SweepParam == SweepConcurrency:
		v.sweepValues(p+".concurrency", l.Sweep, 1, MaxConcurrency, "users", true)
	case paced && l.SweepParam == SweepRate:
		v.sweepValues(p+".rate", l.Sweep, MinRate, MaxRate, "requests per second", false)
	case typ == LoadClosed && !concGiven:
		v.add(p+".concurrency", "required for a closed load: the number of concurrent users (1 to %d)", MaxConcurrency)
	case typ == LoadClosed:
		v.intIn(p+".concurrency", l.Concurrency, 1, MaxConcurrency, "users")
	case paced && !rateGiven:
		v.add(p+".rate", "required for a %s load: requests per second (%s to %s)", typ, fmtFloat(MinRate), fmtFloat(MaxRate))
	case paced:
		v.floatIn(p+".rate", l.Rate, MinRate, MaxRate, "requests per second")
	}
	if typ == LoadGamma || step {
		v.floatIn(p+".burstiness", l.Burstiness, MinBurstiness, MaxBurstiness, "")
	}
	if typ == LoadTrace {
		v.floatIn(p+".speedup", l.Speedup, MinSpeedup, MaxSpeedup, "")
		if s.Synth != nil {
			v.add(p+".type", "trace replays the workload's arrival_ms, and a synth workload has none; use a workload file or an open-loop load")
		}
	}
	v.intIn(p+".max_in_flight", l.MaxInFlight, 0, MaxConcurrency, "(0 is no cap)")
	v.loadOverload(p, s)
	v.loadArrivals(p, s)
	if l.ThinkTime != "" {
		if _, err := l.ThinkDist(); err != nil {
			v.add(p+".think_time", "%v", err)
		}
	}
}

// stepLoad checks a step load (p is its path): two or more rates with a
// time for each step after the first, a repetition timed to run past the
// last step by a few recovery windows, and the TTFT SLO the recovery is
// measured against.
func (v *validator) stepLoad(p string, s *Scenario) {
	l := s.Load
	sp := strings.TrimSuffix(p, ".load")
	if s.Capacity != nil {
		v.add(p+".type", "a step load offers the rates it lists, and a capacity search finds the rate: use load.type poisson or gamma with capacity, or remove capacity")
		return
	}
	if l.SweepParam == SweepConcurrency {
		// Both lists given: the decoder kept the first, concurrency,
		// and concurrency's own message says it is for closed loads.
		return
	}
	if len(l.Steps) < 2 {
		v.add(p+".rate", "a step load needs a list of two or more rates, one per step (rate: [4, 16] with at: 60s), got %s", stepRatesText(l))
		return
	}
	for i, r := range l.Steps {
		v.floatIn(fmt.Sprintf("%s.rate[%d]", p, i), r, MinRate, MaxRate, "requests per second")
	}
	if len(l.At) != len(l.Steps)-1 {
		v.add(p+".at", "want %d step time(s), one for each rate after the first (at: 60s, or a list), got %d", len(l.Steps)-1, len(l.At))
		return
	}
	var prev time.Duration
	for i, at := range l.At {
		if at <= prev {
			v.add(fmt.Sprintf("%s.at[%d]", p, i), "must be after %s (the start, or the step before), got %s", prev, at)
			return
		}
		prev = at
	}
	if w := l.RecoveryWindow; w < MinRecoveryWindow || w > MaxRecoveryWindow {
		v.add(p+".recovery_window", "must be from %s to %s, got %s", MinRecoveryWindow, MaxRecoveryWindow, w)
		return
	}
	last, want := l.At[len(l.At)-1], l.At[len(l.At)-1]+StepRecoveryWindows*l.RecoveryWindow
	switch {
	case s.Requests > 0:
		v.add(sp+".requests", "a step load is timed: a request count could end a repetition before its steps; remove requests and set duration (at least %s)", want)
	case s.Duration == 0:
		v.add(sp+".duration", "required for a step load: each repetition must run past its last step (%s) for long enough to see the recovery, at least %s (%d recovery windows of %s)", last, want, StepRecoveryWindows, l.RecoveryWindow)
	case s.Duration < want:
		v.add(sp+".duration", "ends %s after the last step (%s), and the recovery is looked for in windows of %s: at least %s", s.Duration-last, last, l.RecoveryWindow, want)
	}
	if s.SLO.TTFT == 0 {
		v.add(sp+".slo.ttft", "required for a step load: its recovery is the time until TTFT p95 is back within slo.ttft")
	}
}

// stepRatesText is what a step load was given for rate, for a message.
func stepRatesText(l Load) string {
	if l.Rate != 0 {
		return "one rate, " + fmtFloat(l.Rate)
	}
	return "none"
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// resolve makes a config-relative file name absolute; an absolute one is kept.
func resolve(dir, name string) string {
	if name == "" {
		return ""
	}
	if filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	return filepath.Join(dir, name)
}
