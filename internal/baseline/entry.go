package baseline

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchmath"

	"github.com/perfgate/perfgate/internal/result"
)

// Entry is one line of history.jsonl: a compact account of one promoted (or
// recorded) scenario run — who measured what, and the headline metrics'
// medians — small enough that the history of hundreds of runs stays
// readable and diffable in a repository.
type Entry struct {
	Scenario string    `json:"scenario"`
	Commit   string    `json:"commit,omitempty"`
	Date     time.Time `json:"date"`
	// Identity is the result's Identity.Digest(): entries of different
	// identities measured different things.
	Identity string `json:"identity"`
	Engine   string `json:"engine,omitempty"`
	Version  string `json:"engine_version,omitempty"`
	Model    string `json:"model,omitempty"`
	// Quantization, GPU (count × model, "2 × NVIDIA H100 80GB HBM3") and
	// Driver complete the identity a change of level is read against.
	Quantization string `json:"quantization,omitempty"`
	GPU          string `json:"gpu,omitempty"`
	Driver       string `json:"driver,omitempty"`
	Repetitions  int    `json:"repetitions"`
	// Kind is how the entry came: KindPromotion (perfgate baseline
	// promote, a new baseline) or KindRecord (perfgate baseline record, a
	// scheduled run's point of the trend); "" in histories from before
	// it.
	Kind string `json:"kind,omitempty"`
	// Tag is the release tag the run's commit carries (v1.4), PR the pull
	// request that brought the commit, Run the URL of the workflow run that
	// measured it; each empty where unknown.
	Tag string `json:"tag,omitempty"`
	PR  int    `json:"pr,omitempty"`
	Run string `json:"run,omitempty"`
	// Metrics holds a Summary of each Headline metric, by name.
	Metrics map[string]Summary `json:"metrics"`
}

// The kinds of history entries (Entry.Kind).
const (
	KindPromotion = "promotion"
	KindRecord    = "record"
)

// Summary is a metric's median over the repetitions with its 95% confidence
// interval, as benchmath.AssumeNothing gives it (distribution-free: order
// statistics of the sample). Lo and Hi are nil when the interval is
// unbounded — fewer than six repetitions cannot bound a median at 95% — for
// JSON has no infinity.
type Summary struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo,omitempty"`
	Hi     *float64 `json:"hi,omitempty"`
	// N is the number of samples (repetitions) summarised.
	N int `json:"n"`
}

// confidence is the level of Summary's interval.
const confidence = 0.95

// Headline lists the metrics history keeps: enough to see the latency a user
// feels, the capacity and the failures of every run, without the weight of a
// whole result.
var Headline = []string{"ttft.p50", "ttft.p99", "tpot.p99", "e2e.p99", "output_throughput", "goodput", "error_rate"}

// summarize summarises samples as an Entry keeps them. It does not reorder
// values.
func summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{Median: math.NaN()}
	}
	sample := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(sample, confidence)
	out := Summary{Median: sum.Center, N: len(values)}
	if !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) && !math.IsNaN(sum.Lo) && !math.IsNaN(sum.Hi) {
		lo, hi := sum.Lo, sum.Hi
		out.Lo, out.Hi = &lo, &hi
	}
	return out
}

// NewEntry makes the history entry of scenario s of result r: its identity
// digest, engine, version and model, and a Summary of each Headline metric.
// A zero meta.Date stands for r's finish time. A scenario without
// repetitions has nothing to summarise and is an error.
func NewEntry(r *result.Result, s *result.ScenarioResult, meta Meta) (Entry, error) {
	if len(s.Repetitions) == 0 {
		return Entry{}, errors.New("scenario " + s.Name + " has no repetitions")
	}
	date := meta.Date
	if date.IsZero() {
		date = r.FinishedAt
	}
	e := Entry{
		Scenario:     s.Name,
		Commit:       meta.Commit,
		Date:         date,
		Identity:     r.Identity.Digest(),
		Tag:          meta.Tag,
		PR:           meta.PR,
		Run:          meta.Run,
		Engine:       r.Identity.Server.Engine,
		Version:      r.Identity.Server.Version,
		Model:        r.Identity.Target.Model,
		Quantization: r.Identity.Target.Quantization,
		GPU:          gpuOf(r.Identity.GPUs),
		Driver:       driverOf(r.Identity.GPUs),
		Repetitions:  len(s.Repetitions),
		Metrics:      make(map[string]Summary, len(Headline)),
	}
	for _, name := range Headline {
		vs, err := s.Values(name)
		if err != nil {
			return Entry{}, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Entry{}, fmt.Errorf("scenario %s: %s has a value %v", s.Name, name, v)
			}
		}
		e.Metrics[name] = summarize(vs)
	}
	return e, nil
}

// gpuOf says the GPUs in one line: "2 × NVIDIA H100 80GB HBM3", models
// joined with "+" when they differ; "" when none is known.
func gpuOf(gpus []result.GPU) string {
	if len(gpus) == 0 {
		return ""
	}
	var models []string
	for _, g := range gpus {
		if !slices.Contains(models, g.Model) {
			models = append(models, g.Model)
		}
	}
	return fmt.Sprintf("%d × %s", len(gpus), strings.Join(models, "+"))
}

// driverOf is the GPUs' driver version, "" when none is known.
func driverOf(gpus []result.GPU) string {
	for _, g := range gpus {
		if g.Driver != "" {
			return g.Driver
		}
	}
	return ""
}
