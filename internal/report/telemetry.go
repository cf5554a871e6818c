package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

// Telemetry in the reports: the engine's, the GPUs' and the cost's metrics
// (metric.Info.Telemetry), which a repetition may lack when its source was
// unavailable. The terminal summary shows a run's own; a Document keeps
// each scenario's medians on both sides as TelemetryRows, which the view
// shows as one table (build.go's telemetryTable).

// telemetrySource is a telemetry source of a run that was not read: its
// name, why (untrusted: the result's own words), and whether it was turned
// off rather than unavailable.
type telemetrySource struct {
	name, why string
	off       bool
}

// telemetryInfo is where a run's telemetry came from.
type telemetryInfo = result.TelemetryInfo

// telemetrySources are the telemetry sources of a run that were not read,
// engine first.
func telemetrySources(info *telemetryInfo) []telemetrySource {
	if info == nil {
		return nil
	}
	var out []telemetrySource
	for _, src := range []struct {
		name string
		info result.SourceInfo
	}{{"engine telemetry", info.Engine}, {"GPU telemetry", info.GPU}} {
		if why := strings.TrimSpace(src.info.Unavailable); why != "" {
			out = append(out, telemetrySource{name: src.name, why: why, off: src.info.Off()})
		}
	}
	return out
}

// unavailableSources are the lines that say which telemetry sources of a run
// were not read and why ("GPU telemetry: unavailable (no GPU tool: ...)"),
// engine first; a source turned off says "off" when withOff is set and
// nothing otherwise. esc makes the reason safe for the output.
func unavailableSources(info *result.TelemetryInfo, withOff bool, esc func(string) string) []string {
	var out []string
	for _, s := range telemetrySources(info) {
		switch {
		case !s.off:
			out = append(out, s.name+": unavailable ("+esc(s.why)+")")
		case withOff:
			out = append(out, s.name+": "+esc(s.why))
		}
	}
	return out
}

// summaryTelemetryWidth is the width the summary's telemetry lines wrap at.
const summaryTelemetryWidth = 100

// summaryTelemetry writes a scenario's telemetry block for the terminal
// summary: per source, each telemetry metric's median over the repetitions
// that measured it; nothing when no repetition carries telemetry. MBU and
// MFU computed on what perfgate's simulator declares are labelled so.
func summaryTelemetry(w *verdictPrinter, s *result.ScenarioResult, cost *result.Price, basis *result.UtilizationBasis) error {
	var withTelemetry int
	var adapter, source string
	var totals []float64
	for _, r := range s.Repetitions {
		if r.Engine == nil && r.GPU == nil && r.Cost == nil && r.Utilization == nil {
			continue
		}
		withTelemetry++
		if r.Engine != nil && adapter == "" {
			adapter = r.Engine.Adapter
		}
		if r.GPU != nil {
			if source == "" {
				source = r.GPU.Source
			}
			if r.GPU.MemoryTotalMiB > 0 {
				totals = append(totals, r.GPU.MemoryTotalMiB)
			}
		}
	}
	if withTelemetry == 0 {
		return nil
	}
	// item is one metric's median, with how many repetitions it is over
	// when that is not all of them.
	item := func(vals []float64, text func(float64) string) string {
		out := text(median(vals))
		if len(vals) < withTelemetry {
			out += fmt.Sprintf(" (%d of %d)", len(vals), withTelemetry)
		}
		return out
	}
	type line struct {
		label string
		items []string
	}
	var lines []line
	for _, g := range []struct{ group, label string }{
		{metric.GroupEngine, "engine"}, {metric.GroupGPU, "GPU"}, {metric.GroupCost, "cost"},
	} {
		l := line{label: g.label}
		switch {
		case g.group == metric.GroupEngine && adapter != "":
			l.label += " (" + clean(adapter, 40) + ")"
		case g.group == metric.GroupGPU && source != "":
			l.label += " (" + clean(source, 40) + ")"
		case g.group == metric.GroupGPU && basis != nil && basis.Simulated:
			l.label += " (" + clean(basis.GPU, 60) + ", as the simulator declares it)"
		case g.group == metric.GroupGPU && basis != nil:
			l.label += fmt.Sprintf(" (MBU and MFU of %d × %s)", max(basis.GPUs, 1), clean(basis.GPU, 40))
		case g.group == metric.GroupCost && cost != nil:
			l.items = append(l.items, fmt.Sprintf("at $%s per GPU-hour × %d GPU%s", verdictSigFigs(cost.USDPerGPUHour), cost.GPUs, plural(cost.GPUs)))
		}
		measured := false
		for _, m := range metric.All() {
			if m.Group != g.group {
				continue
			}
			if m.Name == "waiting_peak" {
				// The catalogue gates the queue, not the batch; the
				// summary shows both.
				var running []float64
				for _, r := range s.Repetitions {
					if r.Engine != nil && r.Engine.RunningPeak != nil && finite(*r.Engine.RunningPeak) {
						running = append(running, *r.Engine.RunningPeak)
					}
				}
				if len(running) > 0 {
					l.items = append(l.items, item(running, func(v float64) string { return "running peak " + summaryNumber(v) }))
				}
				l.items = append(l.items, loraItems(s.Repetitions)...)
			}
			vals, err := s.MeasuredValues(m.Name)
			if err != nil {
				return fmt.Errorf("scenario %s: %w", s.Name, err)
			}
			if len(vals) == 0 {
				continue
			}
			measured = true
			text := func(v float64) string { return summaryTelemetryItem(m, v) }
			if m.Name == "gpu_memory_peak" && len(totals) > 0 {
				text = func(v float64) string {
					return fmt.Sprintf("memory peak %.0f of %.0f MiB", v, median(totals))
				}
			}
			l.items = append(l.items, item(vals, text))
		}
		if measured {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil
	}
	w.println()
	w.printf("telemetry (median over %d repetition%s)\n", withTelemetry, plural(withTelemetry))
	width := 0
	for _, l := range lines {
		width = max(width, len([]rune(l.label)))
	}
	for _, l := range lines {
		label := l.label + strings.Repeat(" ", width-len([]rune(l.label)))
		indent := "  " + strings.Repeat(" ", width+2)
		cur := "  " + label + "  "
		fresh := true
		for _, it := range l.items {
			switch {
			case fresh:
				cur += it
				fresh = false
			case len([]rune(cur))+len(" · ")+len([]rune(it)) > summaryTelemetryWidth:
				w.println(cur)
				cur = indent + it
			default:
				cur += " · " + it
			}
		}
		w.println(cur)
	}
	return w.err
}

// summaryTelemetryItem is one telemetry metric's median for the summary:
// its title (without the "GPU " its line already says) and its value in
// the metric's unit; a price reads "$0.352 per M output tokens".
func summaryTelemetryItem(m metric.Info, v float64) string {
	title := clean(strings.TrimPrefix(m.Title, "GPU "), 60)
	switch m.Kind {
	case metric.Money:
		return "$" + verdictSigFigs(v) + " " + strings.TrimPrefix(title, "$ ")
	case metric.Fraction:
		return fmt.Sprintf("%s %.1f%%", title, 100*v)
	case metric.Latency:
		return fmt.Sprintf("%s %.2f ms", title, v)
	case metric.Count:
		return title + " " + summaryNumber(v)
	case metric.Memory:
		return fmt.Sprintf("%s %.0f MiB", title, v)
	case metric.Power:
		return fmt.Sprintf("%s %.0f W", title, v)
	case metric.Energy:
		return verdictSigFigs(v) + " J/token"
	case metric.Efficiency:
		return verdictSigFigs(v) + " tokens/J"
	}
	return title + " " + verdictSigFigs(v) + " " + m.Unit()
}

// summaryNumber is a count: whole when it is one ("4"), else to one
// decimal (a median of two: "2.5").
func summaryNumber(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// loraItems are what the engine said of its LoRA adapters, over the
// repetitions that read it: the most adapters running at once (of its
// max_loras) and waiting for a slot, medians. None when no repetition did.
func loraItems(reps []result.Repetition) []string {
	var running, waiting []float64
	maxLoras := 0
	for _, r := range reps {
		if r.Engine == nil || r.Engine.LoRA == nil {
			continue
		}
		l := r.Engine.LoRA
		running, waiting = append(running, float64(l.RunningPeak)), append(waiting, float64(l.WaitingPeak))
		if l.MaxLoras != nil {
			maxLoras = *l.MaxLoras
		}
	}
	if len(running) == 0 {
		return nil
	}
	run := "adapters running peak " + summaryNumber(median(running))
	if maxLoras > 0 {
		run += fmt.Sprintf(" of %d", maxLoras)
	}
	return []string{run, "adapters waiting peak " + summaryNumber(median(waiting))}
}
