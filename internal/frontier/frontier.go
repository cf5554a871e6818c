package frontier

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// The quality-cost frontier (perfgate report --frontier): several result
// files, one per configuration of a model, quantisation and engine, each
// with a capacity search and eval suites, placed by each suite's accuracy
// against the cost per million output tokens at capacity and against the
// output throughput at capacity. A configuration that another beats on both
// axes of a chart is dominated; the rest are Pareto-optimal.
//
// New computes a Frontier from the results; frontierView lays it
// out as a view, so the terminal, markdown and HTML renderers draw it as
// they draw a report.

// Schema names the version of the frontier's JSON (perfgate report
// --frontier -f json).
const Schema = "perfgate/frontier/v1"

// frontierConfidence is the confidence of the accuracy's Wilson interval.
const frontierConfidence = 0.95

// maxShown is the most runes of a result's own text (a scenario's name)
// the frontier's messages quote.
const maxShown = 200

// Frontier is the quality-cost frontier of several configurations: where
// each was placed, per eval suite, and which configurations dominate which.
type Frontier struct {
	Schema string `json:"schema"`
	// Configs are the result files, in the order given; every index in
	// the frontier is an index in Configs.
	Configs []Config `json:"configs"`
	// Suites are the eval suites, by name (and by content, when results
	// answered different versions of one suite: Hash tells them apart).
	Suites []Suite `json:"suites"`
	// NotPlaced are the configurations left off a frontier, and why.
	NotPlaced []NotPlaced `json:"not_placed,omitempty"`
	// Warnings are what the reader should know before trusting the charts
	// (a suite whose items differ between results, say).
	Warnings []string `json:"warnings,omitempty"`
}

// Config is one result file: what it measured and its capacity.
type Config struct {
	// Label names the configuration: model, quantisation, engine and
	// version, and the file's base name when two labels would be the same.
	Label string `json:"label"`
	// File is the result file's base name.
	File         string `json:"file"`
	Model        string `json:"model,omitempty"`
	Quantization string `json:"quantization,omitempty"`
	Engine       string `json:"engine,omitempty"`
	Version      string `json:"version,omitempty"`
	// Scenario is the capacity scenario the figures come from; empty when
	// the result has none.
	Scenario string `json:"scenario,omitempty"`
	// Outcome is the capacity search's outcome (result.CapacityBracketed,
	// …); Bound says how a censored capacity's figures bound the truth: ""
	// for a capacity found, "at_least" when the SLOs held at the highest
	// load searched (the throughput is a lower bound and the cost an upper
	// one), "at_most" when they broke at the lowest (the other way round).
	Outcome string `json:"outcome,omitempty"`
	Bound   string `json:"bound,omitempty"`
	// Holds and Breaks are the capacity interval [Holds, Breaks) in the
	// search's unit (Unit: req/s or users).
	Holds  float64 `json:"holds,omitempty"`
	Breaks float64 `json:"breaks,omitempty"`
	Unit   string  `json:"unit,omitempty"`
	// RequestRate and OutputThroughput are the medians at the capacity
	// point (req/s, output tok/s); CostPerMTok the dollars per million
	// output tokens there, nil without a price.
	RequestRate      float64  `json:"request_rate,omitempty"`
	OutputThroughput float64  `json:"output_throughput,omitempty"`
	CostPerMTok      *float64 `json:"cost_per_mtok,omitempty"`
}

// The bounds of a censored capacity (Config.Bound).
const (
	// BoundAtLeast: the SLOs held at the highest load searched (above_max,
	// client_limited): the capacity is at least the figures'.
	BoundAtLeast = "at_least"
	// BoundAtMost: the SLOs broke at the lowest load searched (below_min):
	// the capacity is at most the figures'.
	BoundAtMost = "at_most"
)

// Suite is one eval suite's two frontiers.
type Suite struct {
	// Suite is the suite's name; Hash its content's, set when results
	// answered different versions of it (each is then a suite of its own).
	Suite string `json:"suite"`
	Hash  string `json:"hash,omitempty"`
	// Points are the configurations that answered the suite and have a
	// capacity, in Configs' order.
	Points []Point `json:"points"`
	// Cost is the frontier of accuracy against the cost per million output
	// tokens at capacity (lower is better), over the points with a price;
	// Throughput against the output throughput at capacity (higher is
	// better), over every point.
	Cost       Pareto `json:"cost"`
	Throughput Pareto `json:"throughput"`
}

// Point is one configuration's accuracy on a suite.
type Point struct {
	// Config is the configuration's index in Frontier.Configs.
	Config int `json:"config"`
	// Passed of Items passed, Items being those answered (an item whose
	// request failed has no answer); Accuracy is their share, and [Lo, Hi]
	// its Wilson 95% interval.
	Passed   int     `json:"passed"`
	Items    int     `json:"items"`
	Accuracy float64 `json:"accuracy"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
}

// Pareto is one frontier: the configurations no other beats, and the
// others with every configuration that beats them.
type Pareto struct {
	// Optimal are the Pareto-optimal configurations (indices in Configs),
	// in the order of the axis from best to worst.
	Optimal []int `json:"optimal"`
	// Dominated are the rest, in Configs' order.
	Dominated []Domination `json:"dominated,omitempty"`
}

// Domination is a dominated configuration and what dominates it: each of
// By is at least as accurate and at least as good on the axis, and better
// on one of the two.
type Domination struct {
	Config int   `json:"config"`
	By     []int `json:"by"`
	// WithinNoise, one per By, is true when the two accuracies' Wilson
	// intervals overlap: the data do not show the dominator more accurate.
	WithinNoise []bool `json:"within_noise"`
}

// NotPlaced is a configuration left off some frontier.
type NotPlaced struct {
	// Config is the configuration's index in Configs.
	Config int `json:"config"`
	// Reason says why ("no capacity search: …").
	Reason string `json:"reason"`
	// Throughput is true when the configuration is left off the cost
	// frontiers alone: it is on the throughput ones.
	Throughput bool `json:"throughput,omitempty"`
}

// Input is one result file for New.
type Input struct {
	// Path is the file as given; its base name labels the configuration.
	Path   string
	Result *result.Result
}

// Options choose what New reads from each result.
type Options struct {
	// Scenario names the capacity scenario to read, for results with
	// several; "" reads each result's only one.
	Scenario string
}

// New places the configurations of results on each eval suite's
// two frontiers. It fails only when a result has several capacity searches
// and o names none; everything else that keeps a configuration off a
// frontier is a NotPlaced entry.
func New(inputs []Input, o Options) (*Frontier, error) {
	f := &Frontier{Schema: Schema, Configs: []Config{}, Suites: []Suite{}}
	// placed and suites are, per config, whether it is on any frontier and
	// the eval suites it answered.
	placed := make([]bool, len(inputs))
	suites := make([][]result.SuiteResult, len(inputs))
	for i, in := range inputs {
		c, reason, err := frontierConfig(in, o)
		if err != nil {
			return nil, err
		}
		f.Configs = append(f.Configs, c)
		if reason != "" {
			f.NotPlaced = append(f.NotPlaced, NotPlaced{Config: i, Reason: reason})
			continue
		}
		suites[i], f.Warnings = frontierSuites(in.Result, c.File, f.Warnings)
		if len(suites[i]) == 0 {
			f.NotPlaced = append(f.NotPlaced, NotPlaced{Config: i, Reason: "no eval suite answered: nothing to measure its accuracy by"})
			continue
		}
		placed[i] = true
		if c.CostPerMTok == nil {
			f.NotPlaced = append(f.NotPlaced, NotPlaced{Config: i, Throughput: true,
				Reason: "no price (cost.usd_per_gpu_hour unset): on the throughput frontiers only"})
		}
	}
	frontierLabels(f.Configs)
	f.Suites, f.Warnings = frontierGroups(f.Configs, placed, suites, f.Warnings)
	return f, nil
}

// frontierConfig is what in measured and its capacity; reason says why it
// cannot be placed at all ("" when it can).
func frontierConfig(in Input, o Options) (c Config, reason string, err error) {
	r := in.Result
	c = Config{File: filepath.Base(in.Path), Model: r.Identity.Target.Model, Quantization: r.Identity.Target.Quantization,
		Engine: r.Identity.Server.Engine, Version: r.Identity.Server.Version}
	var names []string
	var chosen *result.ScenarioResult
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if s.Capacity == nil || s.Capacity.Search.Headroom != nil {
			continue // a headroom search's load is tokens or users, not a capacity
		}
		names = append(names, s.Name)
		if o.Scenario == "" || s.Name == o.Scenario {
			chosen = s
		}
	}
	switch {
	case len(names) == 0:
		return c, "no capacity search: the frontier places a configuration at its capacity", nil
	case o.Scenario == "" && len(names) > 1:
		// The names are the result file's, untrusted: the error reaches a
		// terminal as is.
		shown := make([]string, len(names))
		for i, n := range names {
			shown[i] = textsafe.Cut(n, maxShown)
		}
		return c, "", fmt.Errorf("%s has %d capacity searches (%s): pick one with --scenario", in.Path, len(names), strings.Join(shown, ", "))
	case chosen == nil:
		return c, fmt.Sprintf("no capacity scenario %s (it has %s)", o.Scenario, strings.Join(names, ", ")), nil
	}
	cp := chosen.Capacity
	c.Scenario, c.Outcome, c.Holds, c.Breaks = chosen.Name, cp.Outcome, cp.Holds, cp.Breaks
	c.RequestRate, c.OutputThroughput = cp.RequestRate, cp.OutputThroughput
	c.Unit = "req/s"
	if cp.Search.Metric == "concurrency" {
		c.Unit = "users"
	}
	switch cp.Outcome {
	case result.CapacityAboveMax, result.CapacityClientLimited:
		c.Bound = BoundAtLeast
	case result.CapacityBelowMin:
		c.Bound = BoundAtMost
	}
	if !(cp.OutputThroughput > 0) || math.IsInf(cp.OutputThroughput, 0) {
		return c, fmt.Sprintf("no output throughput at capacity (%s in scenario %s)", metric.SigFigs(cp.OutputThroughput), chosen.Name), nil
	}
	if p := cp.CostPerMTok; p != nil {
		if !(*p > 0) || math.IsInf(*p, 0) {
			return c, fmt.Sprintf("cost at capacity %s $/Mtok is not a price (scenario %s)", metric.SigFigs(*p), chosen.Name), nil
		}
		v := *p
		c.CostPerMTok = &v
	}
	return c, "", nil
}

// frontierSuites are the eval suites r answered, one per name (a second
// answer to a name is warned about and left out).
func frontierSuites(r *result.Result, file string, warnings []string) ([]result.SuiteResult, []string) {
	var out []result.SuiteResult
	for _, s := range r.Scenarios {
		for _, q := range s.Quality {
			if slices.ContainsFunc(out, func(o result.SuiteResult) bool { return o.Name == q.Name }) {
				warnings = append(warnings, fmt.Sprintf("%s answered suite %s twice (again in scenario %s): the first answer is placed", file, q.Name, s.Name))
				continue
			}
			if len(q.Items) == 0 {
				warnings = append(warnings, fmt.Sprintf("%s answered no item of suite %s: not placed on it", file, q.Name))
				continue
			}
			// A failed request is no answer: accuracy is over the others.
			if f := q.Failed(); f == len(q.Items) {
				warnings = append(warnings, fmt.Sprintf("%s: every request of suite %s failed: not placed on it", file, q.Name))
				continue
			} else if f > 0 {
				warnings = append(warnings, fmt.Sprintf("%s: %d of %d requests of suite %s failed: its accuracy is over the %d answered", file, f, len(q.Items), q.Name, len(q.Items)-f))
			}
			out = append(out, q)
		}
	}
	return out, warnings
}

// frontierLabels sets each config's label: model, quantisation, engine and
// version, what is known of them; the file's base name is added to every
// label two configs share, and is the label of a config with none.
func frontierLabels(cs []Config) {
	count := map[string]int{}
	for i := range cs {
		c := &cs[i]
		var parts []string
		if id := strings.TrimSpace(c.Model + " " + c.Quantization); id != "" {
			parts = append(parts, id)
		}
		if e := strings.TrimSpace(c.Engine + " " + c.Version); e != "" {
			parts = append(parts, e)
		}
		c.Label = strings.Join(parts, " · ")
		count[c.Label]++
	}
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Label == "":
			c.Label = c.File
		case count[c.Label] > 1:
			c.Label += " (" + c.File + ")"
		}
	}
}

// frontierGroups groups the placed configs' suites by name and content
// and computes each group's frontiers. A name answered in more than one
// version is warned about, and each version is a suite of its own.
func frontierGroups(cs []Config, placed []bool, suites [][]result.SuiteResult, warnings []string) ([]Suite, []string) {
	type key struct{ name, hash string }
	var keys []key
	members := map[key][]int{} // config indices
	answers := map[key][]result.SuiteResult{}
	hashes := map[string][]string{} // name -> hashes in order
	for i := range cs {
		if !placed[i] {
			continue
		}
		for _, s := range suites[i] {
			k := key{s.Name, s.Hash}
			if _, ok := members[k]; !ok {
				keys = append(keys, k)
				hashes[s.Name] = append(hashes[s.Name], s.Hash)
			}
			members[k] = append(members[k], i)
			answers[k] = append(answers[k], s)
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int { return strings.Compare(a.name, b.name) })
	var out []Suite
	for name, hs := range hashes {
		if len(hs) < 2 {
			continue
		}
		var parts []string
		for _, h := range hs {
			var files []string
			for _, i := range members[key{name, h}] {
				files = append(files, cs[i].File)
			}
			parts = append(parts, result.ShortHash(h)+" in "+strings.Join(files, ", "))
		}
		warnings = append(warnings, fmt.Sprintf("suite %s: its items differ between results (%s): each version is charted apart", name, strings.Join(parts, "; ")))
	}
	slices.Sort(warnings)
	for _, k := range keys {
		fs := Suite{Suite: k.name, Points: []Point{}}
		if len(hashes[k.name]) > 1 {
			fs.Hash = k.hash
		}
		for j, i := range members[k] {
			pass, n := answers[k][j].Answered()
			lo, hi := stat.Wilson(pass, n, frontierConfidence)
			fs.Points = append(fs.Points, Point{Config: i, Passed: pass, Items: n, Accuracy: float64(pass) / float64(n), Lo: lo, Hi: hi})
		}
		fs.Cost = paretoOf(fs.Points, cs, CostAxis)
		fs.Throughput = paretoOf(fs.Points, cs, ThroughputAxis)
		out = append(out, fs)
	}
	return out, warnings
}

// Axis is a frontier's x axis: a config's value on it (ok false when it
// has none) and whether lower is better.
type Axis struct {
	Value func(Config) (float64, bool)
	Lower bool
}

var (
	// CostAxis is the cost per million output tokens at capacity.
	CostAxis = Axis{Value: func(c Config) (float64, bool) {
		if c.CostPerMTok == nil {
			return 0, false
		}
		return *c.CostPerMTok, true
	}, Lower: true}
	// ThroughputAxis is the output throughput at capacity.
	ThroughputAxis = Axis{Value: func(c Config) (float64, bool) { return c.OutputThroughput, true }}
)

// paretoOf is the frontier of points on axis: accuracy against the axis.
//
// A censored capacity is placed at its bound, which is not its value, so
// its x is marked with the way the truth may lie. Both axes are figures at
// capacity, and a higher capacity is better on both (more tok/s, fewer $
// per Mtok): an at-least capacity (BoundAtLeast: above_max,
// client_limited) may be better than placed on either axis, an at-most
// one (BoundAtMost: below_min) worse.
func paretoOf(points []Point, cs []Config, axis Axis) Pareto {
	var ps []paretoPoint
	for _, p := range points {
		if x, ok := axis.Value(cs[p.Config]); ok {
			if !axis.Lower {
				x = -x // lower is better from here on
			}
			ps = append(ps, paretoPoint{id: p.Config, x: x, y: p.Accuracy, lo: p.Lo, hi: p.Hi,
				mayBeBetter: cs[p.Config].Bound == BoundAtLeast, mayBeWorse: cs[p.Config].Bound == BoundAtMost})
		}
	}
	return pareto(ps)
}

// paretoPoint is a point to minimise x and maximise y at; lo and hi are
// y's interval. mayBeBetter marks an x that bounds the truth from the bad
// side (the truth is x or better: an at-least capacity), mayBeWorse one
// that bounds it from the good side (the truth is x or worse: an at-most
// capacity, whose figures are optimistic).
type paretoPoint struct {
	id                      int
	x, y                    float64
	lo, hi                  float64
	mayBeBetter, mayBeWorse bool
}

// dominates reports whether a dominates b: at least as good on both axes,
// better on one. It holds only where the truth behind a censored x
// cannot reverse it: a point whose x may be worse than placed dominates
// nothing (its true x could be anywhere worse), and a point whose x may be
// better than placed is dominated by nothing (its true x could beat any
// other's). A censored point still dominates (or is dominated) when its
// bound is on the side that only strengthens the comparison.
func (a paretoPoint) dominates(b paretoPoint) bool {
	if a.mayBeWorse || b.mayBeBetter {
		return false
	}
	return a.x <= b.x && a.y >= b.y && (a.x < b.x || a.y > b.y)
}

// pareto is the frontier of ps (minimise x, maximise y): the optimal
// points by x ascending (ties by y descending), and every dominated point,
// in ps's order, with each point that dominates it.
func pareto(ps []paretoPoint) Pareto {
	out := Pareto{Optimal: []int{}}
	var optimal []paretoPoint
	for _, p := range ps {
		d := Domination{Config: p.id}
		for _, q := range ps {
			if q.dominates(p) {
				d.By = append(d.By, q.id)
				d.WithinNoise = append(d.WithinNoise, q.lo <= p.hi && p.lo <= q.hi)
			}
		}
		if len(d.By) == 0 {
			optimal = append(optimal, p)
		} else {
			out.Dominated = append(out.Dominated, d)
		}
	}
	slices.SortStableFunc(optimal, func(a, b paretoPoint) int {
		if c := cmpFloat(a.x, b.x); c != 0 {
			return c
		}
		return cmpFloat(b.y, a.y)
	})
	for _, p := range optimal {
		out.Optimal = append(out.Optimal, p.id)
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
