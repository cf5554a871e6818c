package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/reportfile"
)

// What a report says was measured: the line under its verdict that names
// the model, the engine and its version, the GPUs, the workload and the
// baseline's commit and age. Every part that is not known is said to be
// unknown, not left out.

// measuredLine is what d measured, in a line: "model «m» · engine «vllm
// 0.6.3» · GPU «NVIDIA H100» × 8 · workload «sha256:…» · baseline
// «a1b2c3d», 3 days old"; nil for a document from before it was kept. An
// A/B's base arm was measured beside its candidate, so it has no baseline
// part.
func measuredLine(d *reportfile.Document) sentence {
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
func workloadPart(d *reportfile.Document) sentence {
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
func baselinePart(d *reportfile.Document, at time.Time) sentence {
	var refs []reportfile.BaselineRef
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
