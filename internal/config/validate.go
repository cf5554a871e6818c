package config

import (
	"errors"
	"fmt"

	"github.com/perfgate/perfgate/internal/compare/stat"
	"github.com/perfgate/perfgate/internal/metric"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// namePattern is what a scenario name may be: it is used in file names.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

var loadTypes = []string{LoadClosed, LoadPoisson, LoadGamma, LoadTrace}

// validator collects the problems of a decoded, defaulted config.
type validator struct {
	c     *Config
	src   *source
	probs []Problem
	warns []Problem
	// undecidable are the problems of repetitions too few to decide
	// (significance): warnings here, refused by perfgate validate.
	undecidable []Problem
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
	v.stack()
	v.warmup()
	v.durationIn("cooldown", c.Cooldown, 0, MaxPause)
	v.repetitions()
	v.compare()
	v.quality()
	v.telemetry()
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
	c.Undecidable = v.undecidable
	return v.probs, v.warns
}

func (v *validator) repetitions() {
	r := v.c.Repetitions
	switch {
	case r.Fixed() && (r.Min < 1 || r.Min > MaxRepetitions):
		v.intIn("repetitions", r.Min, 1, MaxRepetitions, "")
	case r.Min < 1:
		v.add("repetitions.min", "must be >= 1, got %d", r.Min)
	case r.Max < r.Min:
		v.add("repetitions.max", "must be >= min (%d), got %d", r.Min, r.Max)
	case r.Max > MaxRepetitions:
		v.intIn("repetitions.max", r.Max, r.Min, MaxRepetitions, "")
	default:
		v.significance(r)
	}
}

// family is one scenario's gate family as perfgate gate tests it: its
// gates, compare.tail's tail gates and, for the quality scenario, the
// suites' gates, under one Holm adjustment at the scenario's share of
// alpha.
type family struct {
	scenario string
	gates    int
	capacity bool // a capacity search: its own samples and rules (validate_capacity)
}

// families are the gate families of the measured scenarios that have a
// gate, in order. A gate on a metric measured once per stack start (cold
// start) is not in them: with one start a side it is shown, not tested.
func (v *validator) families() []family {
	var out []family
	for _, s := range v.c.Measured() {
		k := 0
		gates := v.c.GatesOf(s)
		for _, g := range gates {
			if m, err := metric.Lookup(g.Metric); err == nil && !m.PerStart {
				k++
			}
		}
		if s.Capacity == nil {
			k += tailGates(gates, v.c.Compare.Tail) // in the same family
		}
		if v.c.Quality.Enabled() && s.Name == v.c.QualityScenario() {
			for _, path := range v.c.SuitePaths() {
				k += v.c.SuiteGates(SuiteContinuous(path))
			}
		}
		if k > 0 {
			out = append(out, family{scenario: s.Name, gates: k, capacity: s.Capacity != nil})
		}
	}
	return out
}

// significance refuses a config whose gates cannot decide: one in which,
// at its repetitions, a gate could be neither a regression (however far
// beyond its tolerance the candidate) nor a pass (however well within it).
// Such a config can only ever be inconclusive, so it is an error that
// perfgate validate refuses (Config.Undecidable), and a warning for run
// and gate (whose tests gate at 2 repetitions for an inconclusive verdict
// whatever the machine's timing).
//
// The rule is perfgate gate's: alpha is split evenly across the scenarios
// that have gates (Bonferroni), each scenario spends its share over its
// looks (stat.LookLevels; one look at the whole share for a fixed count),
// and each look tests the scenario's family with Holm. A scenario decides
// when at one of its looks stat.Reachable, which runs the gate's own
// decision on the extreme cases, finds both outcomes within reach. A
// capacity scenario's samples are its capacity.repetitions, and
// validate_capacity checks them; a scenario without gates (a sweep's
// points, by default) needs none.
func (v *validator) significance(r Repetitions) {
	alpha := v.c.Compare.Alpha
	if !(alpha > 0 && alpha < 0.5) {
		return // compare() reports it
	}
	fams := v.families()
	share := alpha / float64(max(1, len(fams)))
	levels, looks := stat.LookLevels(share, r.Min, r.Max), stat.Looks(r.Min, r.Max)
	// One problem for the scenarios of one family size: they need the same.
	var sizes []int
	names := map[int][]string{}
	for _, f := range fams {
		if f.capacity || decides(looks, levels, f.gates) {
			continue
		}
		if names[f.gates] == nil {
			sizes = append(sizes, f.gates)
		}
		names[f.gates] = append(names[f.gates], f.scenario)
	}
	for _, m := range sizes {
		p := v.src.problem("repetitions", "%s", undecidable(r, names[m], m, len(fams), alpha, share))
		v.undecidable = append(v.undecidable, p)
		v.warns = append(v.warns, p)
	}
}

// decides says whether a family of m gates reaches both outcomes at one of
// its looks.
func decides(looks []int, levels []float64, m int) bool {
	for i, n := range looks {
		if stat.Reachable(n, n, m, levels[i]).Decides() {
			return true
		}
	}
	return false
}

// undecidable says why the scenarios named, each a family of m gates,
// cannot decide at repetitions r, and the repetitions they need: the
// smallest fixed count and, for a range, the smallest repetitions.max with
// which the range decides.
func undecidable(r Repetitions, scenarios []string, m, gated int, alpha, share float64) string {
	n, levels := r.Max, stat.LookLevels(share, r.Min, r.Max)
	last := levels[len(levels)-1]
	what := "neither a regression nor a pass"
	if stat.Reachable(n, n, m, last).Regression {
		what = "never a pass"
	}
	of := "scenario " + scenarios[0]
	if len(scenarios) > 1 {
		of = "each of scenarios " + strings.Join(scenarios, ", ")
	}
	alphaIs := fmt.Sprintf("alpha %g", alpha)
	if gated > 1 {
		alphaIs = fmt.Sprintf("alpha %g shared by %d scenarios with gates", alpha, gated)
	}
	step := fmt.Sprintf("Holm's first step needs p < %.3g (%s)", share/float64(m), alphaIs)
	if !r.Fixed() {
		step = fmt.Sprintf("at the last look, %d, Holm's first step needs p < %.3g (%s, spent over %d looks)",
			n, last/float64(m), alphaIs, len(levels))
	}
	msg := fmt.Sprintf("%s repetitions cannot show a significant difference on the %d gates of %s: %s, and the U test's smallest p with %d a side is %.3g: every gate would be inconclusive, %s.",
		r, m, of, step, n, stat.MinP(n, n), what)
	need := stat.SamplesToDecide(r.Max, MaxRepetitions, m, share)
	if need > MaxRepetitions {
		return msg + " Gate fewer metrics, or raise compare.alpha"
	}
	if !r.Fixed() {
		// The range with the same first look and the fewest more at its
		// last that decides: the looks spend alpha, so it may need more
		// than the fixed count.
		for hi := r.Max + 1; hi <= min(MaxRepetitions, 4*need); hi++ {
			if decides(stat.Looks(r.Min, hi), stat.LookLevels(share, r.Min, hi), m) {
				return msg + fmt.Sprintf(" Set repetitions: {min: %d, max: %d} or repetitions: %d, or gate fewer metrics", r.Min, hi, need)
			}
		}
	}
	return msg + fmt.Sprintf(" Set repetitions: %d or more, or gate fewer metrics", need)
}

// tailGates is how many tail gates compare.tail adds beside gates: one
// beside each latency percentile gate (ttft, tpot, itl, e2e) at or above
// its percentile; none when it is off or not a percentile (compare
// reports that).
func tailGates(gates []Gate, tail string) int {
	lowest, err := ParseTail(tail)
	if err != nil || lowest <= 0 {
		return 0
	}
	n := 0
	for _, g := range gates {
		_, st, ok := metric.LatencyPercentile(g.Metric)
		if !ok {
			continue
		}
		if q, err := ParseTail(st); err == nil && q >= lowest-1e-12 {
			n++
		}
	}
	return n
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
	if _, err := ParseTail(cp.Tail); err != nil {
		v.add("compare.tail", "%v", err)
	}
	if m := v.c.AB.Mode; m != ABCoResident && m != ABSwap {
		v.add("ab.mode", "must be %s or %s, got %q", ABCoResident, ABSwap, m)
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
	case strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1"):
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
}

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
	rateGiven := v.set(p+".rate", l.Rate != 0 || l.SweepParam == SweepRate)
	only := []struct {
		key, forTypes  string
		given, applies bool
	}{
		{"concurrency", "closed loads", concGiven, typ == LoadClosed},
		{"rate", "poisson and gamma loads", rateGiven, paced},
		{"burstiness", "gamma loads", v.set(p+".burstiness", l.Burstiness != 0), typ == LoadGamma},
		{"speedup", "trace loads", v.set(p+".speedup", l.Speedup != 0), typ == LoadTrace},
		{"max_in_flight", "poisson, gamma and trace loads (a closed load is bounded by its concurrency)", v.set(p+".max_in_flight", l.MaxInFlight != 0), open},
	}
	for _, o := range only {
		if o.given && !o.applies {
			v.add(p+"."+o.key, "only for %s, and this load is %s", o.forTypes, typ)
		}
	}

	switch {
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
	if typ == LoadGamma {
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
