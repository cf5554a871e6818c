package telemetry

import (
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/perfgate/perfgate/internal/result"
	"unicode/utf8"
)

// vLLM's LoRA gauge, vllm:lora_requests_info: one series per combination
// of its labels, valued the time it was last set, whose labels name the
// adapters of the running and the waiting requests (comma-separated) and
// the engine's --max-loras. The series with the latest value is the
// engine's state at the scrape; the others are older states it still
// exports.
const (
	loraInfo         = "vllm:lora_requests_info"
	loraRunningLabel = "running_lora_adapters"
	loraWaitingLabel = "waiting_lora_adapters"
	loraMaxLabel     = "max_lora"
	// maxAdapterNames bounds the adapters a window remembers, and
	// maxAdapterName the length of each name, as a server sends them.
	maxAdapterNames = 64
	maxAdapterName  = 256
)

// loraWindow folds the LoRA gauge of a window's pages.
type loraWindow struct {
	pages                    int
	runningPeak, waitingPeak int
	maxLoras                 int
	running                  []string // every adapter seen running, in order met
	cut                      bool     // names past maxAdapterNames were left out
}

// add reads one page's LoRA state: its latest series.
func (w *loraWindow) add(p *Page) {
	f := p.Families[loraInfo]
	if f == nil || f.GetType() != dto.MetricType_GAUGE {
		return
	}
	var latest *dto.Metric
	at := 0.0
	for _, m := range f.GetMetric() {
		if v, ok := sampleValue(m); ok && (latest == nil || v > at) {
			latest, at = m, v
		}
	}
	if latest == nil {
		return
	}
	w.pages++
	var running, waiting []string
	for _, l := range latest.GetLabel() {
		switch l.GetName() {
		case loraRunningLabel:
			running = adapterNames(l.GetValue())
		case loraWaitingLabel:
			waiting = adapterNames(l.GetValue())
		case loraMaxLabel:
			if n, err := strconv.Atoi(l.GetValue()); err == nil && n > 0 && n <= 1<<20 {
				w.maxLoras = n
			}
		}
	}
	w.runningPeak = max(w.runningPeak, len(running))
	w.waitingPeak = max(w.waitingPeak, len(waiting))
	for _, name := range running {
		if slices.Contains(w.running, name) {
			continue
		}
		if len(w.running) >= maxAdapterNames {
			w.cut = true
			continue
		}
		w.running = append(w.running, name)
	}
}

// adapterNames splits a label's comma-separated adapter names, each once,
// without empty ones, and each cut to maxAdapterName bytes.
func adapterNames(v string) []string {
	var out []string
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if len(name) > maxAdapterName {
			n := maxAdapterName
			for n > 0 && !utf8.RuneStart(name[n]) {
				n-- // cut on a rune, or JSON would turn the rest into U+FFFD and lengthen it
			}
			name = name[:n]
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
			if len(out) > maxAdapterNames {
				break // the count is all a peak needs past this
			}
		}
	}
	return out
}

// summary is the window's LoRA telemetry, nil when no page had the gauge.
func (w *loraWindow) summary() *result.LoRATelemetry {
	if w.pages == 0 {
		return nil
	}
	t := &result.LoRATelemetry{RunningPeak: w.runningPeak, WaitingPeak: w.waitingPeak, Adapters: slices.Clone(w.running), AdaptersCut: w.cut}
	if w.maxLoras > 0 {
		t.MaxLoras = &w.maxLoras
	}
	return t
}
