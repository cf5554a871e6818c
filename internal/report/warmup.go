package report

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// warmupText is a warm-up in a few words for the run summary: "warm-up
// 8.0 s, steady (windows, 138 requests, 104 failed: http 60, stream 44),
// drained in 0.4 s"; "" for none.
func warmupText(w *result.Warmup) string {
	if w == nil || w.Method == config.WarmupNone {
		return ""
	}
	state := "steady"
	switch {
	case w.Steady:
	case w.Overload != nil && w.Overload.Overloaded:
		state = "NOT steady: the server could not keep up (" + w.Overload.Sentence() + "; measured anyway)"
	default:
		state = "NOT steady (measured anyway: warmup.on_unsteady warn)"
	}
	n := w.Requests + w.Failed
	out := fmt.Sprintf("warm-up %.1f s, %s (%s, %d request%s%s)", float64(w.Duration), state, w.Method, n, plural(n), warmupFailures(w))
	if w.Drain != nil {
		out += fmt.Sprintf(", drained in %.1f s", float64(*w.Drain))
		if w.DrainCut > 0 {
			out += fmt.Sprintf(" (%d cancelled %s)", w.DrainCut, cutWhen(w))
		}
		if w.DrainQueue != nil {
			out += fmt.Sprintf(" (the engine still held %g)", *w.DrainQueue)
		}
	}
	return out
}

// roundWarmupsText is an A/B arm's warm-ups over its rounds in a few
// words: "8 warm-ups over the rounds: 1 full, 7 short; 42.0 s in all,
// drains included"; "" for fewer than two (outside an A/B, or one round).
func roundWarmupsText(ws []result.RoundWarmup) string {
	if len(ws) < 2 {
		return ""
	}
	full, short := 0, 0
	var total float64
	for _, rw := range ws {
		if rw.Kind == result.WarmupShort {
			short++
		} else {
			full++
		}
		if w := rw.Warmup; w != nil {
			total += float64(w.Duration)
			if w.Drain != nil {
				total += float64(*w.Drain)
			}
		}
	}
	return fmt.Sprintf("%d warm-ups over the rounds: %d full, %d short; %.1f s in all, drains included", len(ws), full, short, total)
}

// cutWhen says when a drain cancelled requests: at once for the backlog of
// a server that could not keep up, else at the drain's bound.
func cutWhen(w *result.Warmup) string {
	if w.BacklogCut() {
		return "at once: a backlog the server could not clear"
	}
	return "at target.timeout"
}

// warmupFailures is ", 104 failed: http 60, stream 44", or "" when no
// warm-up request failed.
func warmupFailures(w *result.Warmup) string {
	if w.Failed == 0 {
		return ""
	}
	out := fmt.Sprintf(", %d failed", w.Failed)
	if kinds := w.FailureKinds(); kinds != "" {
		out += ": " + kinds
	}
	return out
}

// warmupItems are a scenario's warm-up notes as report notes.
func warmupItems(notes []string) []item {
	out := make([]item, 0, len(notes))
	for _, n := range notes {
		out = append(out, item{Subject: plain("warm-up"), Text: untrusted(n)})
	}
	return out
}
