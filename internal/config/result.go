package config

import (
	"time"

	"github.com/perfgate/perfgate/internal/result"
)

// A result records what the config said when it ran (the load shape, the
// SLOs, the gates, the comparison settings, the price) in the result file's own types,
// so that a result outlives the config's Go types. These conversions are
// the one place the two meet: result never imports config.

// Result is the load shape as a result records it.
func (l Load) Result() result.Load {
	return result.Load{Type: l.Type, Concurrency: l.Concurrency, Rate: l.Rate, Burstiness: l.Burstiness,
		MaxInFlight: l.MaxInFlight, Speedup: l.Speedup, ThinkTime: l.ThinkTime, Overload: l.resultOverload(),
		Arrivals: l.resultArrivals(), Steps: l.Steps, At: l.At, RecoveryWindow: l.RecoveryWindow}
}

// Result is the SLOs as a result records them, in milliseconds.
func (s SLO) Result() result.SLO {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return result.SLO{TTFT: ms(s.TTFT), TPOT: ms(s.TPOT), E2E: ms(s.E2E)}
}

// Result is the gate as a result records it: the metric's name and the
// tolerance as written.
func (g Gate) Result() result.Gate {
	return result.Gate{Metric: g.Metric, Tolerance: g.Tolerance.Text}
}

// ResultGates are gates as a result records them. An empty list stays an
// empty list (every gate off), apart from nil (no gates recorded).
func ResultGates(gates []Gate) []result.Gate {
	if gates == nil {
		return nil
	}
	out := make([]result.Gate, len(gates))
	for i, g := range gates {
		out[i] = g.Result()
	}
	return out
}

// Result is the comparison settings as a result records them.
func (c Compare) Result() result.CompareSettings {
	return result.CompareSettings{Alpha: c.Alpha, OnInconclusive: c.OnInconclusive, Baselines: c.Baselines, Tail: c.Tail, Estimator: c.Estimator}
}

// Result is the price as a result records it.
func (c Cost) Result() result.Price {
	return result.Price{USDPerGPUHour: c.USDPerGPUHour, GPUs: c.GPUs}
}
