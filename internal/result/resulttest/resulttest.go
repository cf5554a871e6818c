// Package resulttest builds result fixtures for tests of the packages that
// read results (report, export): a distribution, a repetition, telemetry.
// One set of builders, so that two packages' goldens describe the same
// figures.
//
// Where it sits among perfgate's packages, and what it may import:
// docs/architecture.md.
package resulttest

import "github.com/perfgate/perfgate/internal/result"

// Stats is a distribution of 100 values around base: its percentiles a
// fixed shape of it (p90 1.5x, p99 2x, max 3x).
func Stats(base float64) result.Stats {
	return result.Stats{Count: 100, Mean: base, Min: base / 2, P50: base, P90: base * 1.5, P95: base * 1.7, P99: base * 2, P999: base * 2.5, Max: base * 3}
}

// Rep is repetition i of a hundred requests, all completed, TTFT around
// ttft.
func Rep(i int, ttft float64) result.Repetition {
	return result.Repetition{
		Index: i, Duration: 12.5, Sent: 100, Completed: 100, TokensFrom: "usage",
		RequestThroughput: 8 + float64(i), OutputThroughput: 1600, InputThroughput: 2400, Goodput: 7, Concurrency: 7.9,
		TTFT: Stats(ttft), TPOT: Stats(14), ITL: Stats(13.5), E2E: Stats(2500),
	}
}

// WithTelemetry gives r engine, GPU and cost figures that grow with k.
func WithTelemetry(r result.Repetition, k float64) result.Repetition {
	f := func(v float64) *float64 { return &v }
	r.Engine = &result.EngineTelemetry{Adapter: "vllm", Scrapes: 25,
		KVCachePeak: f(0.80 + 0.02*k), KVCacheMean: f(0.60 + 0.01*k), PrefixCacheHitRate: f(0.40 + 0.05*k),
		RunningPeak: f(16), WaitingPeak: f(3 + k), Preemptions: f(2 + k),
		ServerTTFT:     &result.ServerLatency{Count: 100, Mean: 28 + k, P50: 27, P90: 40, P99: 60},
		TTFTOverheadMS: f(3 + 0.5*k)}
	r.GPU = &result.GPUTelemetry{Source: "nvml", Interval: 0.5, Samples: 25,
		MemoryPeakMiB: 40000 + 500*k, MemoryTotalMiB: 81559, UtilizationMean: f(0.90 + 0.01*k),
		PowerMeanW: f(600 + 10*k), EnergyJ: f(7500 + 125*k), EnergyPerToken: f(0.40 + 0.01*k), TokensPerJoule: f(2.5 - 0.05*k)}
	r.Cost = &result.Cost{USDPerMOutput: 0.35 + 0.01*k, USDPerMInput: f(0.12 + 0.005*k),
		USDPerMOutputGoodput: f(0.40 + 0.01*k), USDPerMInputGoodput: f(0.15 + 0.005*k)}
	return r
}
