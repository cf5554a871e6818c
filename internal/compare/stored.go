package compare

import (
	"fmt"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
)

// storedGates turns the gates a result recorded (a metric's name and its
// tolerance as text) into gates, with today's metric catalogue. A result
// may be years old: a gate whose metric this perfgate does not know (renamed
// or retired since), whose tolerance it cannot read for that metric, or of
// the wrong kind (a quality metric among a scenario's gates, or the other
// way round) is left out with a warning, never an error, so that an old
// baseline still compares on every gate it can. quality says which kind is
// wanted: an eval suite's gates (true) or a scenario's.
func storedGates(stored []result.Gate, quality bool) ([]config.Gate, []string) {
	gates := make([]config.Gate, 0, len(stored))
	var warnings []string
	for _, g := range stored {
		m, err := metric.Lookup(g.Metric)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("not gated: unknown metric %s (a gate the result recorded; this perfgate has no such metric)", clip(g.Metric, 64)))
			continue
		}
		if m.Quality != quality {
			kind := "a latency, throughput or telemetry metric, gated per scenario"
			if m.Quality {
				kind = "a quality metric, gated per eval suite"
			}
			warnings = append(warnings, fmt.Sprintf("not gated: %s is %s, but the result recorded it among the other kind's gates", m.Name, kind))
			continue
		}
		t, err := metric.ParseTolerance(m, g.Tolerance)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("not gated: %s: the result's recorded tolerance cannot be read: %s", m.Name, clip(err.Error(), 256)))
			continue
		}
		gates = append(gates, config.Gate{Metric: m.Name, Tolerance: t})
	}
	return gates, warnings
}

// clip cuts text from a file to n bytes for a message, on a rune.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
