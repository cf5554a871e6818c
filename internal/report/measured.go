package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/baseline"
	"github.com/perfgate/perfgate/internal/result"
)

// What a report says was measured: the line under its verdict that names
// the model, the engine and its version, the GPUs, the workload and the
// baseline's commit and age. Every part that is not known is said to be
// unknown, not left out.

// Measured says what a candidate measured, as its result's identity and
// telemetry recorded it.
type Measured struct {
	// Model is the model requested (target.model); Engine and
	// EngineVersion what the server said of itself, empty when it did
	// not say.
	Model         string `json:"model,omitempty"`
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	// GPUs are the GPUs the stack ran on, by model, with how many of
	// each; empty when none was seen.
	GPUs []GPUCount `json:"gpus,omitempty"`
	// Simulated is true when the target was perfgate's simulator.
	Simulated bool `json:"simulated,omitempty"`
	// At is when the candidate started measuring: a baseline's age is
	// counted from it, so a report rendered again later says the same.
	At time.Time `json:"at"`
}

// GPUCount is how many GPUs of one model a stack ran on.
type GPUCount struct {
	Model string `json:"model"`
	Count int    `json:"count"`
}

// BaselineRef is the promotion a scenario's baseline came from.
type BaselineRef struct {
	// Commit is the commit the promotion named; empty when the history
	// has no entry for the baseline (a baseline file given by path).
	Commit string `json:"commit,omitempty"`
	// Date is the promotion's date from the history, else the baseline's
	// finish time.
	Date time.Time `json:"date"`
}

// measuredOf is what result r measured.
func measuredOf(r *result.Result) *Measured {
	id := r.Identity
	m := &Measured{Model: id.Target.Model, Engine: id.Server.Engine, EngineVersion: id.Server.Version, Simulated: id.Simulated, At: r.StartedAt}
	for _, g := range id.GPUs {
		i := slices.IndexFunc(m.GPUs, func(c GPUCount) bool { return c.Model == g.Model })
		if i < 0 {
			m.GPUs = append(m.GPUs, GPUCount{Model: g.Model})
			i = len(m.GPUs) - 1
		}
		m.GPUs[i].Count++
	}
	return m
}

// findResult is the first of results that has a scenario named name, or
// nil.
func findResult(results []*result.Result, name string) *result.Result {
	for _, r := range results {
		if r != nil && findScenario([]*result.Result{r}, name) != nil {
			return r
		}
	}
	return nil
}

// baselineRef is the promotion that made scenario s of r the baseline: the
// latest history entry of the scenario with r's identity and s's figures;
// without one, r's finish time and no commit.
func baselineRef(r *result.Result, s *result.ScenarioResult, history []baseline.Entry) *BaselineRef {
	if r == nil {
		return nil
	}
	ref := &BaselineRef{Date: r.FinishedAt}
	want, err := baseline.NewEntry(r, s, baseline.Meta{})
	if err != nil {
		return ref
	}
	for i := len(history) - 1; i >= 0; i-- {
		e := history[i]
		if e.Scenario == s.Name && e.Identity == want.Identity && sameMedians(e.Metrics, want.Metrics) {
			return &BaselineRef{Commit: e.Commit, Date: e.Date}
		}
	}
	return ref
}

// sameMedians reports whether a and b hold the same metrics with the same
// medians: the entry promoted from a result has exactly its figures.
func sameMedians(a, b map[string]baseline.Summary) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || x.Median != y.Median || x.N != y.N {
			return false
		}
	}
	return true
}

// currentSummaries are the candidate's summaries of the history metrics of
// scenario s; nil when it has none (no repetitions, a figure that is not a
// number).
func currentSummaries(r *result.Result, s *result.ScenarioResult) map[string]baseline.Summary {
	if r == nil || s == nil {
		return nil
	}
	e, err := baseline.NewEntry(r, s, baseline.Meta{})
	if err != nil {
		return nil
	}
	return e.Metrics
}

// measuredLine is what d measured, in a line: "model «m» · engine «vllm
// 0.6.3» · GPU «NVIDIA H100» × 8 · workload «sha256:…» · baseline
// «a1b2c3d», 3 days old"; nil for a document from before it was kept. An
// A/B's base arm was measured beside its candidate, so it has no baseline
// part.
func measuredLine(d *Document) sentence {
	m := d.Measured
	if m == nil {
		return nil
	}
	var parts []sentence
	if m.Model != "" {
		parts = append(parts, cat(plain("model "), untrusted(m.Model)))
	} else {
		parts = append(parts, plain("model unknown"))
	}
	switch {
	case m.Engine != "" && m.EngineVersion != "":
		parts = append(parts, cat(plain("engine "), untrusted(m.Engine), plain(" "), untrusted(m.EngineVersion)))
	case m.Engine != "":
		parts = append(parts, cat(plain("engine "), untrusted(m.Engine), plain(" (version unknown)")))
	default:
		parts = append(parts, plain("engine unknown (the server did not say)"))
	}
	switch {
	case len(m.GPUs) > 0:
		var gpus []sentence
		for _, g := range m.GPUs {
			gpus = append(gpus, cat(untrusted(g.Model), plain(fmt.Sprintf(" × %d", g.Count))))
		}
		parts = append(parts, cat(plain("GPU "), join(" + ", gpus...)))
	case m.Simulated:
		parts = append(parts, plain("GPU: none (perfgate's simulator)"))
	default:
		parts = append(parts, plain("GPU: none seen"))
	}
	parts = append(parts, workloadPart(d))
	if d.Verdict == nil || d.Verdict.AB == nil {
		parts = append(parts, baselinePart(d, m.At))
	}
	return join(" · ", parts...)
}

// workloadPart names the workloads d's scenarios replayed by hash: one
// when they share it.
func workloadPart(d *Document) sentence {
	var hashes []string
	for _, sd := range d.Scenarios {
		if h := shortHash(sd.WorkloadHash); h != "" && !slices.Contains(hashes, h) {
			hashes = append(hashes, h)
		}
	}
	switch len(hashes) {
	case 0:
		return plain("workload unknown")
	case 1:
		return cat(plain("workload "), untrusted(hashes[0]))
	}
	return plain(fmt.Sprintf("%d workloads (each scenario's below)", len(hashes)))
}

// maxBaselinesNamed is how many distinct baselines the line names before
// it counts the rest.
const maxBaselinesNamed = 3

// baselinePart names the baselines of d's compared scenarios, each with
// its age at time at: "baseline «a1b2c3d», 3 days old".
func baselinePart(d *Document, at time.Time) sentence {
	var refs []BaselineRef
	for _, sd := range d.Scenarios {
		if sd.Baseline != nil && !slices.Contains(refs, *sd.Baseline) {
			refs = append(refs, *sd.Baseline)
		}
	}
	if len(refs) == 0 {
		return plain("baseline: none")
	}
	var named []sentence
	for i, r := range refs {
		if i == maxBaselinesNamed {
			named = append(named, plain(fmt.Sprintf("%d more", len(refs)-i)))
			break
		}
		switch {
		case r.Commit != "":
			named = append(named, cat(untrusted(shortCommit(r.Commit)), plain(", "+age(at, r.Date))))
		case r.Date.IsZero():
			named = append(named, plain("of unknown commit and date"))
		default:
			named = append(named, plain("of "+r.Date.UTC().Format("2006-01-02")+" (commit unknown), "+age(at, r.Date)))
		}
	}
	label := "baseline "
	if len(refs) > 1 {
		label = "baselines "
	}
	return cat(plain(label), join("; ", named...))
}

// age is how old something made at then was at now: "3 days old", "5
// hours old", "under a minute old"; "measured after this run" when then
// is later, and "age unknown" when either is not known.
func age(now, then time.Time) string {
	if now.IsZero() || then.IsZero() {
		return "age unknown"
	}
	d := now.Sub(then)
	switch {
	case d < 0:
		return "measured after this run"
	case d < time.Minute:
		return "under a minute old"
	case d < time.Hour:
		return count(int(d/time.Minute), "minute") + " old"
	case d < 48*time.Hour:
		return count(int(d/time.Hour), "hour") + " old"
	}
	return count(int(math.Floor(d.Hours()/24)), "day") + " old"
}

// count is "n thing" or "n things".
func count(n int, thing string) string { return fmt.Sprintf("%d %s%s", n, thing, plural(n)) }

// configName is the base name of the config a document's key names ("ab:"
// and the directories left out): what the HTML report calls a document
// without a title. Empty for a key that names no file.
func configName(key string) string {
	key = strings.TrimPrefix(key, "ab:")
	if key == "" || key == "merged" {
		return ""
	}
	return filepath.Base(key)
}
