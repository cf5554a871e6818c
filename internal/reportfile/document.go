package reportfile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/stat"
)

// Schema names the version of the report file format. Readers refuse
// other values.
const Schema = "perfgate/report/v1"

// Document is the one model every rendering of a gate's outcome is made from:
// the markdown of the PR comment and the step summary, the terminal text, the
// HTML report and the report file (its JSON) that `perfgate report` reads
// back, renders again, or merges with the documents of other jobs.
//
// Besides the verdict it carries what the charts need and the verdict does
// not: each latency metric's distribution on both sides, the promoted
// history of each scenario, each scenario's engine, GPU and cost medians on
// both sides, and where the candidate's telemetry came from.
type Document struct {
	Schema string `json:"schema"`
	// Title names the job in a merged report ("llama-3-8b on H100"); empty
	// for a job of its own.
	Title string `json:"title,omitempty"`
	// Key tells one sticky comment from another on the same pull request:
	// by default the config path, so two configs keep two comments.
	Key     string           `json:"key"`
	Verdict *compare.Verdict `json:"verdict"`
	// Scenarios holds the chart data of each scenario of the verdict, in
	// the same order.
	Scenarios []ScenarioData `json:"scenarios"`
	Source    Source         `json:"source"`
	// TelemetrySources says where the candidate's engine and GPU telemetry
	// came from, or why there was none; nil for a result from before
	// telemetry.
	TelemetrySources *result.TelemetryInfo `json:"telemetry_sources,omitempty"`
	// Sweeps holds each swept scenario of the candidate (a load.rate or
	// load.concurrency list, measured as one scenario per value) as a
	// curve: its points in order, with medians on both sides. Empty
	// without sweeps and in reports from before them.
	Sweeps []SweepData `json:"sweeps,omitempty"`
	// Measured says what the candidate measured (model, engine, GPUs, when),
	// for the reports' headline; nil in reports from before it was kept.
	Measured *Measured `json:"measured,omitempty"`
}

// SweepData is one swept scenario: the points it was measured at.
type SweepData struct {
	// Of is the swept scenario's name as configured ("chat"); Param is
	// what it varies, rate or concurrency, and Unit the unit of a point's
	// value (req/s or users).
	Of    string `json:"of"`
	Param string `json:"param"`
	Unit  string `json:"unit"`
	// Points are the sweep's points in order of their place in it.
	Points []SweepPointData `json:"points"`
}

// SweepPointData is one point of a sweep on both sides.
type SweepPointData struct {
	// Value is the point's offered rate or concurrency, in the sweep's Unit.
	Value float64 `json:"value"`
	// Scenario is the point's scenario name ("chat.rate-25"), the name its
	// baseline is found by.
	Scenario string `json:"scenario"`
	// Baseline is nil when the baseline has no scenario of that name, and
	// Candidate when the point measured no repetition.
	Baseline  *PointStats `json:"baseline,omitempty"`
	Candidate *PointStats `json:"candidate,omitempty"`
}

// PointStats are a sweep point's figures on one side: the medians over its
// repetitions of each repetition's figure.
type PointStats struct {
	// RequestRate is the achieved request rate (req/s); OutputThroughput
	// the output tokens per second.
	RequestRate      float64 `json:"request_rate"`
	OutputThroughput float64 `json:"output_throughput"`
	// The latencies are in milliseconds.
	TTFTP50 float64 `json:"ttft_p50_ms"`
	TTFTP99 float64 `json:"ttft_p99_ms"`
	TPOTP50 float64 `json:"tpot_p50_ms"`
	TPOTP99 float64 `json:"tpot_p99_ms"`
	E2EP99  float64 `json:"e2e_p99_ms"`
	// N is how many repetitions the medians are over.
	N int `json:"n"`
}

// CapacityData is a capacity scenario's search on both sides, as the
// results recorded it: the headline interval, the probes and the samples.
type CapacityData struct {
	// Baseline is nil when the baseline has no search for the scenario.
	Baseline  *result.Capacity `json:"baseline,omitempty"`
	Candidate *result.Capacity `json:"candidate,omitempty"`
}

// Source says where the document came from, so a report rendered later (a
// workflow_run job commenting for a fork's pull request) knows what it is
// about.
type Source struct {
	// Result is the path of the candidate result file.
	Result string `json:"result,omitempty"`
	// Repository is owner/name; Commit the measured commit.
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	// PullRequest is the pull request's number, 0 when not run for one.
	PullRequest int `json:"pull_request,omitempty"`
	// RunURL links the workflow run that measured it.
	RunURL string `json:"run_url,omitempty"`
}

// ScenarioData is one scenario's chart data.
type ScenarioData struct {
	Name string `json:"name"`
	// Latency holds TTFT, TPOT, ITL and E2E, in that order.
	Latency []LatencyData `json:"latency"`
	// History is the scenario's entries of baselines/history.jsonl, oldest
	// first; empty when there is no history.
	History []baseline.Entry `json:"history,omitempty"`
	// Telemetry holds the engine, GPU and cost metrics that either side
	// measured, in catalogue order.
	Telemetry []TelemetryRow `json:"telemetry,omitempty"`
	// Capacity is the scenario's capacity search on both sides; nil for a
	// scenario measured at one load, and in reports from before capacity.
	Capacity *CapacityData `json:"capacity,omitempty"`
	// Workload, WorkloadHash and WorkloadShape say what the candidate
	// replayed; the shape is nil in results from before it was kept.
	Workload      string                `json:"workload,omitempty"`
	WorkloadHash  string                `json:"workload_hash,omitempty"`
	WorkloadShape *result.WorkloadShape `json:"workload_shape,omitempty"`
	// Sessions holds the scenario's session figures on both sides (median
	// of repetitions), shown and not gated; nil when neither side's
	// workload had sessions, and in reports from before sessions.
	Sessions []TelemetryRow `json:"sessions,omitempty"`
	// Recovery holds a step load's spike figures on both sides (median of
	// repetitions): the recovery, the requests over the SLO meanwhile, the
	// TTFT p95 before the step and at its peak, and the repetitions that
	// did not recover; a row is flagged gated when a gate of the verdict
	// tested its metric. nil when neither side was a step load. A
	// scenario with a fault has the same rows, counted from the fault, and
	// the fault's own (errors from it on, the replica back after, goodput
	// before and while down); RecoveryOf says which: "step" or "fault".
	Recovery   []TelemetryRow `json:"recovery,omitempty"`
	RecoveryOf string         `json:"recovery_of,omitempty"`
	// Overload is the scenario's sustainable-load verdict where a side's
	// server could not keep up; nil otherwise.
	Overload *OverloadData `json:"overload,omitempty"`
	// Warmup holds what the report says about the two sides' warm-ups
	// (failed warm-up requests, a drain cut short); empty when nothing.
	Warmup []string `json:"warmup,omitempty"`
	// Baseline says which promotion the scenario's baseline is: its commit
	// and date; nil without a baseline, and in reports from before it was
	// kept.
	Baseline *BaselineRef `json:"baseline,omitempty"`
	// Current is the candidate's summary of each history metric
	// (baseline.Headline), as its history entry would hold it: where this
	// run lands on the history charts. Empty in reports from before it
	// was kept.
	Current map[string]baseline.Summary `json:"current,omitempty"`
}

// TelemetryRow is one engine, GPU or cost metric of a scenario on both
// sides: the median over the repetitions that measured it.
type TelemetryRow struct {
	// Metric is the catalogue name (kv_cache_peak); Title, Unit and Group
	// describe it as metric.Info does.
	Metric string `json:"metric"`
	Title  string `json:"title"`
	Unit   string `json:"unit"`
	Group  string `json:"group"`
	// Baseline and Candidate are the medians, in the metric's unit (a
	// fraction for "%"); nil when that side measured it in no repetition.
	Baseline  *float64 `json:"baseline,omitempty"`
	Candidate *float64 `json:"candidate,omitempty"`
	// Gated is true when a gate of the verdict tested the metric.
	Gated bool `json:"gated,omitempty"`
}

// LatencyData is one latency metric on both sides.
type LatencyData struct {
	// Metric is the histogram name: ttft, tpot, itl or e2e.
	Metric string `json:"metric"`
	// Title is how reports name it ("TTFT"); values are in milliseconds.
	Title string `json:"title"`
	// Baseline is nil when the scenario had no baseline.
	Baseline  *Distribution `json:"baseline,omitempty"`
	Candidate *Distribution `json:"candidate"`
}

// Distribution is a latency metric's distribution on one side.
type Distribution struct {
	// Percentiles are the median over repetitions of each repetition's
	// percentiles (what the gates test), in milliseconds: the candidate
	// result's measured percentiles (p50, p90, p95, p99 and p99.9 unless
	// its config's percentiles key said otherwise), ascending; a baseline
	// leaves out one it cannot give.
	Percentiles []Percentile `json:"percentiles"`
	// CDF is the distribution of every request of every repetition pooled
	// (the repetitions' HDR histograms added): points of value and the share
	// of requests at or below it. Empty when the result kept no histograms.
	CDF []CDFPoint `json:"cdf,omitempty"`
}

// Percentile is one percentile's value.
type Percentile struct {
	// Name is the percentile as metric names end: p50, p99.9, p99.99.
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// CDFPoint is one point of an empirical CDF.
type CDFPoint struct {
	// Value is in milliseconds; Fraction is the share of requests at or
	// below it, in [0, 1].
	Value    float64 `json:"v"`
	Fraction float64 `json:"q"`
}

// latencyMetrics are the latency metrics a document keeps, in order.
var latencyMetrics = []struct{ hist, title string }{
	{result.HistTTFT, "TTFT"},
	{result.HistTPOT, "TPOT"},
	{result.HistITL, "ITL"},
	{result.HistE2E, "E2E"},
}

// cdfQuantiles are the fractions at which a CDF is sampled: every percent,
// and the tail in finer steps.
var cdfQuantiles = func() []float64 {
	qs := []float64{0.001}
	for i := 1; i <= 99; i++ {
		qs = append(qs, float64(i)/100)
	}
	return append(qs, 0.995, 0.999, 0.9995, 0.9999, 1)
}()

// New builds the document of verdict v of candidate cand against
// baselines, with each scenario's history (entries of other scenarios are
// ignored), the medians of each scenario's engine, GPU and cost metrics on
// both sides, and where the candidate's telemetry came from. Key, Title and
// Source are the caller's to fill. A histogram that does not decode is an
// error naming the scenario and repetition.
func New(v *compare.Verdict, baselines []*result.Result, cand *result.Result, history []baseline.Entry) (*Document, error) {
	d := &Document{Schema: Schema, Verdict: v, Scenarios: []ScenarioData{}}
	for _, vs := range v.Scenarios {
		sd := ScenarioData{Name: vs.Name}
		cs := findScenario([]*result.Result{cand}, vs.Name)
		bs := findScenario(baselines, vs.Name)
		if vs.NoBaseline {
			bs = nil
		}
		for _, m := range latencyMetrics {
			ld := LatencyData{Metric: m.hist, Title: m.title}
			var err error
			// Both sides show the candidate's percentiles: a baseline
			// without one gives it from its histograms, or leaves it out.
			if cs != nil {
				if ld.Candidate, err = distribution(cs, m.hist, cand.PercentileNames()); err != nil {
					return nil, fmt.Errorf("candidate: %w", err)
				}
			}
			if bs != nil {
				if ld.Baseline, err = distribution(bs, m.hist, cand.PercentileNames()); err != nil {
					return nil, fmt.Errorf("baseline: %w", err)
				}
			}
			sd.Latency = append(sd.Latency, ld)
		}
		for _, e := range history {
			if e.Scenario == vs.Name {
				sd.History = append(sd.History, e)
			}
		}
		var err error
		if sd.Telemetry, err = telemetryRows(&vs, bs, cs); err != nil {
			return nil, err
		}
		sd.Capacity = capacityData(bs, cs)
		if cs != nil {
			sd.Workload, sd.WorkloadHash, sd.WorkloadShape = cs.Workload, cs.WorkloadHash, cs.WorkloadShape
		}
		sd.Sessions = sessionRows(bs, cs)
		sd.Recovery, sd.RecoveryOf = recoveryRows(&vs, bs, cs)
		sd.Overload = overloadData(bs, cs)
		sd.Warmup = warmupNotes(bs, cs)
		if bs != nil {
			sd.Baseline = baselineRef(findResult(baselines, vs.Name), bs, history)
		}
		sd.Current = currentSummaries(cand, cs)
		d.Scenarios = append(d.Scenarios, sd)
	}
	if cand != nil && cand.Telemetry != nil {
		src := *cand.Telemetry
		d.TelemetrySources = &src
	}
	if cand != nil {
		d.Sweeps = sweeps(v, baselines, cand)
		d.Measured = measuredOf(cand)
	}
	return d, nil
}

// capacityData is the capacity search of a scenario on both sides; nil
// when neither side searched.
func capacityData(bs, cs *result.ScenarioResult) *CapacityData {
	var c CapacityData
	if bs != nil {
		c.Baseline = bs.Capacity
	}
	if cs != nil {
		c.Candidate = cs.Capacity
	}
	if c.Baseline == nil && c.Candidate == nil {
		return nil
	}
	return &c
}

// sweepUnits are the units of a sweep's values, by what it varies.
var sweepUnits = map[string]string{"rate": "req/s", "concurrency": "users"}

// SweepUnit is the unit of a sweep's values when it varies param (rate:
// req/s, concurrency: users), and whether param is one perfgate sweeps: a
// report file is untrusted, and its own words for them are not shown.
func SweepUnit(param string) (string, bool) {
	u, ok := sweepUnits[param]
	return u, ok
}

// sweeps are the candidate's swept scenarios, in the order of their first
// point, each point with its baseline found by name, unless verdict v
// compared it with none.
func sweeps(v *compare.Verdict, baselines []*result.Result, cand *result.Result) []SweepData {
	var out []SweepData
	at := map[string]int{}
	noBaseline := map[string]bool{}
	for _, vs := range v.Scenarios {
		noBaseline[vs.Name] = vs.NoBaseline
	}
	for i := range cand.Scenarios {
		cs := &cand.Scenarios[i]
		if cs.Sweep == nil {
			continue
		}
		j, ok := at[cs.Sweep.Of]
		if !ok {
			j = len(out)
			at[cs.Sweep.Of] = j
			out = append(out, SweepData{Of: cs.Sweep.Of, Param: cs.Sweep.Param, Unit: sweepUnits[cs.Sweep.Param]})
		}
		p := SweepPointData{Value: cs.Sweep.Value, Scenario: cs.Name, Candidate: pointStats(cs)}
		if bs := findScenario(baselines, cs.Name); bs != nil && !noBaseline[cs.Name] {
			p.Baseline = pointStats(bs)
		}
		out[j].Points = append(out[j].Points, p)
	}
	for i := range out {
		// A sweep's points are measured in order; sorting by value keeps a
		// curve that reads left to right whatever order they came in.
		slices.SortStableFunc(out[i].Points, func(a, b SweepPointData) int { return cmp.Compare(a.Value, b.Value) })
	}
	return out
}

// pointStats are the medians of a sweep point's repetitions; nil without
// any.
func pointStats(s *result.ScenarioResult) *PointStats {
	reps := s.Repetitions
	if len(reps) == 0 {
		return nil
	}
	med := func(f func(r *result.Repetition) float64) float64 {
		v := make([]float64, len(reps))
		for i := range reps {
			v[i] = f(&reps[i])
		}
		return stat.FiniteMedian(v)
	}
	return &PointStats{
		RequestRate:      med(func(r *result.Repetition) float64 { return r.RequestThroughput }),
		OutputThroughput: med(func(r *result.Repetition) float64 { return r.OutputThroughput }),
		TTFTP50:          med(func(r *result.Repetition) float64 { return r.TTFT.P50 }),
		TTFTP99:          med(func(r *result.Repetition) float64 { return r.TTFT.P99 }),
		TPOTP50:          med(func(r *result.Repetition) float64 { return r.TPOT.P50 }),
		TPOTP99:          med(func(r *result.Repetition) float64 { return r.TPOT.P99 }),
		E2EP99:           med(func(r *result.Repetition) float64 { return r.E2E.P99 }),
		N:                len(reps),
	}
}

// findScenario is the first scenario named name in results, or nil.
func findScenario(results []*result.Result, name string) *result.ScenarioResult {
	for _, r := range results {
		if r == nil {
			continue
		}
		for i := range r.Scenarios {
			if r.Scenarios[i].Name == name {
				return &r.Scenarios[i]
			}
		}
	}
	return nil
}

// distribution is metric hist of scenario s: the median over the
// repetitions of each of percentiles (as the metric catalogue names them:
// p50, p99.99) that s measured, and the CDF of the pooled histograms.
func distribution(s *result.ScenarioResult, hist string, percentiles []string) (*Distribution, error) {
	if len(s.Repetitions) == 0 {
		return nil, nil
	}
	d := &Distribution{}
	for _, name := range percentiles {
		values, err := s.Values(hist + "." + name)
		var notMeasured *result.NotMeasuredError
		if errors.As(err, &notMeasured) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		d.Percentiles = append(d.Percentiles, Percentile{Name: name, Value: stat.Median(values)})
	}
	var pooled *hdrhistogram.Histogram
	for _, rep := range s.Repetitions {
		enc := rep.Histograms[hist]
		if len(enc) == 0 {
			continue
		}
		h, err := result.DecodeHistogram(enc)
		if err != nil {
			return nil, fmt.Errorf("scenario %s repetition %d: %s histogram: %w", s.Name, rep.Index, hist, err)
		}
		if pooled == nil {
			pooled = h
		} else {
			pooled.Merge(h)
		}
	}
	if pooled != nil && pooled.TotalCount() > 0 {
		for _, q := range cdfQuantiles {
			v := float64(pooled.ValueAtQuantile(100*q)) / 1000
			if n := len(d.CDF); n > 0 && d.CDF[n-1].Value == v {
				d.CDF[n-1].Fraction = q // a flat step: keep its top
				continue
			}
			d.CDF = append(d.CDF, CDFPoint{Value: v, Fraction: q})
		}
	}
	return d, nil
}

// Outcome is the worst verdict of docs: regression, else inconclusive, else
// pass.
func Outcome(docs []*Document) stat.Outcome {
	out := stat.Pass
	for _, d := range docs {
		switch d.Verdict.Outcome {
		case stat.Regression:
			return stat.Regression
		case stat.Inconclusive:
			out = stat.Inconclusive
		}
	}
	return out
}

// ExitCode is the exit code of docs together under failOn (one of
// exit.FailOnValues; "" is config): the highest of their verdicts' by
// exit.ForOutcome, each verdict under its own on_inconclusive.
func ExitCode(docs []*Document, failOn string) int {
	code := exit.OK
	for _, d := range docs {
		code = max(code, exit.ForOutcome(string(d.Verdict.Outcome), policy(d, failOn)))
	}
	return code
}

// ExitError is the error that exits with ExitCode(docs, failOn), or nil
// when that is 0; it names the overall outcome and, for an inconclusive
// one, what made it fail (exit.OutcomeError of a verdict with that outcome).
func ExitError(docs []*Document, failOn string) error {
	out := Outcome(docs)
	for _, d := range docs {
		if d.Verdict.Outcome != out {
			continue
		}
		if err := exit.OutcomeError(string(out), policy(d, failOn)); err != nil {
			return err
		}
	}
	return nil
}

// policy is the exit policy of document d under failOn.
func policy(d *Document, failOn string) exit.Policy {
	return exit.Policy{FailOn: failOn, OnInconclusive: d.Verdict.OnInconclusive}
}

// Write writes d as indented JSON to path, atomically
// (safeio.WriteFile): a write that fails midway leaves the old file at path,
// or none, never part of d.
func Write(path string, d *Document) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report %s: %w", path, err)
	}
	if err := safeio.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// ErrResultFile is Read's error for a result file (perfgate run's),
// which must be compared before it can be rendered.
var ErrResultFile = errors.New("this is a result file (perfgate run's), not a report: compare it first with --baseline")

// MaxBytes is the largest report file Read reads: 64 MiB,
// as for a result file (result.MaxFileBytes), which a report holds little
// more than. A report may be uploaded by a fork's pull request and read by
// a workflow with write access.
const MaxBytes = 64 << 20

// Read reads a report file written by Write. A file of
// another kind (a result file: ErrResultFile) or another schema version is
// an error that says what it is. Only a regular file of at most
// MaxBytes is read, and a JSON error names its line and column.
func Read(path string) (*Document, error) {
	b, err := safeio.ReadFile(path, MaxBytes)
	var tooLarge *safeio.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("read report %s: the file is larger than %s, the most perfgate reads for a report", path, safeio.FormatBytes(MaxBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var probe struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("read report: not JSON: %w", result.JSONError(path, b, err))
	}
	switch {
	case result.KnownSchema(probe.Schema):
		return nil, fmt.Errorf("read report %s: %w", path, ErrResultFile)
	case probe.Schema != Schema:
		return nil, fmt.Errorf("read report %s: schema %q, want %q", path, probe.Schema, Schema)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read report: %w", result.JSONError(path, b, err))
	}
	if d.Verdict == nil {
		return nil, fmt.Errorf("read report %s: verdict: missing", path)
	}
	if len(d.Scenarios) != len(d.Verdict.Scenarios) {
		return nil, fmt.Errorf("read report %s: scenarios: %d chart entries for %d verdict scenarios", path, len(d.Scenarios), len(d.Verdict.Scenarios))
	}
	return &d, nil
}

// LatencyOf is the scenario's data of latency metric name (ttft, tpot,
// itl, e2e), or nil.
func (sd *ScenarioData) LatencyOf(name string) *LatencyData {
	for i := range sd.Latency {
		if sd.Latency[i].Metric == name {
			return &sd.Latency[i]
		}
	}
	return nil
}

// Percentile is the distribution's percentile called name, and whether it
// has it.
func (d *Distribution) Percentile(name string) (float64, bool) {
	if d == nil {
		return 0, false
	}
	for _, p := range d.Percentiles {
		if p.Name == name {
			return p.Value, true
		}
	}
	return 0, false
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// finite reports whether x is a number, neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
