package result

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
)

// Subsets of a repetition's requests, measured apart beside the whole:
// structured requests (JSON output or tools) and free ones, where a
// repetition has both, and each model, where it sent to more than one (a
// base model and its LoRA adapters). A gate names one with a suffix
// (metric.Subset): `ttft.p95@structured`, `tpot.p50@model:sql-lora`.
const (
	SubsetStructured  = metric.SubsetStructured
	SubsetFree        = metric.SubsetFree
	SubsetColdAdapter = metric.SubsetColdAdapter
	SubsetWarmAdapter = metric.SubsetWarmAdapter
	// MaxModelSubsets bounds the models measured apart in a repetition;
	// requests to models past it count in the whole only (Subsets
	// says so in SubsetsCut).
	MaxModelSubsets = 32
)

// Subset is the latency and traffic of one subset of a repetition's
// requests, summarised as the repetition is: the same fields, the same
// rules (a wrong structured answer is counted, not timed), its own
// histograms.
type Subset struct {
	Sent      int     `json:"sent"`
	Completed int     `json:"completed"`
	Failed    int     `json:"failed"`
	ErrorRate float64 `json:"error_rate"`
	// OutputTokens are those of its completed requests; OutputThroughput
	// is them over the repetition's window, so the subsets' throughputs
	// add up to the repetition's.
	OutputTokens     int     `json:"output_tokens"`
	OutputThroughput float64 `json:"output_throughput"`
	// DecodeThroughput is output tokens after the first per second after
	// the first token, over its completed requests: the rate a stream of
	// this kind is decoded at, which constrained decoding slows.
	DecodeThroughput *float64 `json:"decode_throughput,omitempty"`
	Structured       int      `json:"structured,omitempty"`
	StructuredErrors int      `json:"structured_errors,omitempty"`
	GoodRequests     int      `json:"good_requests"`
	TTFT             Stats    `json:"ttft_ms"`
	TPOT             Stats    `json:"tpot_ms"`
	ITL              Stats    `json:"itl_ms"`
	E2E              Stats    `json:"e2e_ms"`
	// Histograms are its latency histograms, as Repetition.Histograms.
	Histograms map[string][]byte `json:"histograms,omitempty"`
}

// WithSubsets says which subsets the repetition can have: kinds when its
// requests ask for structured output (structured, and free beside it),
// models when they go to two or more models. Without them (and without
// WithColdAdapters) a record is folded into the whole only: measuring
// subsets triples the work a record costs, spent for nothing where the
// summary would keep none.
func (a *Aggregator) WithSubsets(kinds, models bool) *Aggregator {
	a.kindSubsets, a.modelSubsets = kinds, models
	return a
}

// DefaultModel names the model of the requests whose workload line names
// none, in model subsets, when the target names none either.
const DefaultModel = "(default)"

// WithDefaultModel names the model that requests whose record names none
// were sent to (the target's), so that a workload of a base model and its
// adapters has a subset for each; empty is DefaultModel.
func (a *Aggregator) WithDefaultModel(name string) *Aggregator {
	a.defaultModel = name
	return a
}

// WithColdAdapters names the adapters the repetition reloaded
// (cold_adapters): requests to them that were not the first are the
// warm-adapter subset.
func (a *Aggregator) WithColdAdapters(names []string) *Aggregator {
	a.coldAdapters = names
	return a
}

// subsetsOf routes a record to the subsets it belongs to: its kind
// (structured or free) and its model.
func (a *Aggregator) subsetsOf(r *Record) (kind, model, adapter string) {
	switch {
	case !a.kindSubsets:
	case r.Structured:
		kind = SubsetStructured
	default:
		kind = SubsetFree
	}
	switch {
	case !a.modelSubsets:
	case r.Model != "":
		model = metric.ModelSubset(r.Model)
	case a.defaultModel != "":
		model = metric.ModelSubset(a.defaultModel)
	default:
		model = metric.ModelSubset(DefaultModel)
	}
	switch {
	case r.ColdAdapter:
		adapter = SubsetColdAdapter
	case r.Model != "" && slices.Contains(a.coldAdapters, r.Model):
		adapter = SubsetWarmAdapter
	}
	return kind, model, adapter
}

// addSubsets folds r into the aggregators of its subsets, made at the
// first record of each.
func (a *Aggregator) addSubsets(r *Record) {
	kind, model, adapter := a.subsetsOf(r)
	for _, name := range []string{kind, model, adapter} {
		if name == "" {
			continue
		}
		sub := a.subsets[name]
		if sub == nil {
			if name == model && a.models >= MaxModelSubsets {
				a.subsetsCut++
				continue
			}
			if name == model {
				a.models++
			}
			if a.subsets == nil {
				a.subsets = map[string]*Aggregator{}
			}
			sub = NewAggregator(a.slo, false, 0)
			sub.percentiles = a.percentiles
			sub.sub = true
			a.subsets[name] = sub
		}
		sub.Add(r)
	}
}

// subsetSummaries are the subsets worth keeping: structured and free when
// the repetition had both kinds (one kind is the whole), or structured
// alone when every request was (so a gate on it still finds it); models
// when there were two or more.
func (a *Aggregator) subsetSummaries(window time.Duration) map[string]*Subset {
	keep := map[string]bool{}
	if a.subsets[SubsetStructured] != nil {
		keep[SubsetStructured] = true
		keep[SubsetFree] = a.subsets[SubsetFree] != nil
	}
	if a.subsets[SubsetColdAdapter] != nil {
		keep[SubsetColdAdapter] = true
		keep[SubsetWarmAdapter] = a.subsets[SubsetWarmAdapter] != nil
	}
	if a.models >= 2 {
		for name := range a.subsets {
			if strings.HasPrefix(name, metric.ModelSubsetPrefix) {
				keep[name] = true
			}
		}
	}
	var out map[string]*Subset
	for name, sub := range a.subsets {
		if !keep[name] {
			continue
		}
		rep := sub.Summary(0)
		s := &Subset{Sent: rep.Sent, Completed: rep.Completed, Failed: rep.Failed, ErrorRate: rep.ErrorRate,
			OutputTokens: rep.OutputTokens, DecodeThroughput: rep.DecodeThroughput,
			Structured: rep.Structured, StructuredErrors: rep.StructuredErrors, GoodRequests: rep.GoodRequests,
			TTFT: rep.TTFT, TPOT: rep.TPOT, ITL: rep.ITL, E2E: rep.E2E, Histograms: rep.Histograms}
		if window > 0 {
			s.OutputThroughput = float64(s.OutputTokens) / window.Seconds()
		}
		if out == nil {
			out = map[string]*Subset{}
		}
		out[name] = s
	}
	return out
}

// SubsetNames are the repetition's subsets, in report order: structured,
// free, then the models by name.
func (r *Repetition) SubsetNames() []string {
	var names []string
	for name := range r.Subsets {
		names = append(names, name)
	}
	slices.SortFunc(names, func(x, y string) int {
		rank := func(s string) int {
			switch s {
			case SubsetStructured:
				return 0
			case SubsetFree:
				return 1
			case SubsetColdAdapter:
				return 2
			case SubsetWarmAdapter:
				return 3
			}
			return 4
		}
		if d := rank(x) - rank(y); d != 0 {
			return d
		}
		return strings.Compare(x, y)
	})
	return names
}

// View is the repetition as its subset name alone would have been
// summarised, for the per-repetition metrics a subset has (latency
// distributions, output and decode throughput, error rate); a
// *NotMeasuredError when the repetition has no such subset.
func (r *Repetition) View(name string) (*Repetition, error) {
	s := r.Subsets[name]
	if s == nil {
		return nil, &NotMeasuredError{Metric: "@" + name, Repetition: r.Index, Why: subsetMissing(name)}
	}
	return &Repetition{Index: r.Index, Sent: s.Sent, Completed: s.Completed, Failed: s.Failed, ErrorRate: s.ErrorRate,
		OutputTokens: s.OutputTokens, OutputThroughput: s.OutputThroughput, DecodeThroughput: s.DecodeThroughput,
		Structured: s.Structured, StructuredErrors: s.StructuredErrors, GoodRequests: s.GoodRequests,
		TTFT: s.TTFT, TPOT: s.TPOT, ITL: s.ITL, E2E: s.E2E, Histograms: s.Histograms}, nil
}

// subsetMissing says why a repetition has no subset called name.
func subsetMissing(name string) string {
	switch {
	case name == SubsetStructured:
		return "no request of the repetition asked for structured output (response_format JSON, or tools)"
	case name == SubsetFree:
		return "every request of the repetition asked for structured output, or none did (free requests are measured apart only beside structured ones)"
	case name == SubsetColdAdapter, name == SubsetWarmAdapter:
		return "the scenario does not reload its adapters (cold_adapters), or its workload names none"
	case strings.HasPrefix(name, metric.ModelSubsetPrefix):
		return fmt.Sprintf("no request of the repetition was sent to model %q, or it sent to one model only (models are measured apart when there are two or more)",
			strings.TrimPrefix(name, metric.ModelSubsetPrefix))
	}
	return "no such subset of requests"
}
