package reportfile

import (
	"fmt"
	"slices"

	"github.com/perfgate/perfgate/internal/compare"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/stat"
)

// telemetryMetrics are the catalogue's telemetry and cost metrics, in
// report order.
func telemetryMetrics() []metric.Info {
	var out []metric.Info
	for _, m := range metric.All() {
		if m.Telemetry() {
			out = append(out, m)
		}
	}
	return out
}

// telemetryRows are scenario vs's TelemetryRows: one per telemetry metric
// that the baseline bs or the candidate cs (either may be nil) measured.
func telemetryRows(vs *compare.Scenario, bs, cs *result.ScenarioResult) ([]TelemetryRow, error) {
	side := func(s *result.ScenarioResult, name string) (*float64, error) {
		if s == nil {
			return nil, nil
		}
		vals, err := s.MeasuredValues(name)
		if err != nil || len(vals) == 0 {
			return nil, err
		}
		m := stat.Median(vals)
		return &m, nil
	}
	var rows []TelemetryRow
	for _, m := range telemetryMetrics() {
		b, err := side(bs, m.Name)
		if err != nil {
			return nil, fmt.Errorf("baseline: scenario %s: %w", vs.Name, err)
		}
		c, err := side(cs, m.Name)
		if err != nil {
			return nil, fmt.Errorf("candidate: scenario %s: %w", vs.Name, err)
		}
		if b == nil && c == nil {
			continue
		}
		row := TelemetryRow{Metric: m.Name, Title: m.Title, Unit: m.Unit(), Group: m.Group, Baseline: b, Candidate: c}
		row.Gated = slices.ContainsFunc(vs.Gates, func(g compare.Gate) bool { return g.Metric == m.Name })
		rows = append(rows, row)
	}
	return rows, nil
}
