package report

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/capacity"
	"github.com/perfgate/perfgate/internal/result"
)

// The capacity fixtures: a baseline and a candidate result with a swept
// scenario and a capacity search, built here from a queueing model of the
// simulator (DESIGN §6: a step of b/(1 − k·λ), slowed 1.3× on the
// candidate), with no simulator run. testdata/capacity/{base,cand}.json are
// what `go test ./internal/report -run TestCapacityFixtures -update` writes;
// the browser check (scripts/check-report-browser.sh) renders them.

// fixtureModel is the simulator's latency against its load: a decode step
// of StepMS/(1 − Slow·K·λ) ms, times Slow, at λ req/s.
type fixtureModel struct {
	// Slow scales the step (1 on the baseline, 1.3 on the candidate).
	Slow float64
	// Seed seeds the repetitions' noise.
	Seed uint64
}

const (
	fixtureStepMS   = 1.0     // the step at no load, ms
	fixtureK        = 4.48e-3 // seconds of step per request per second
	fixturePrefill  = 1.28    // prefill of 64 tokens at 20µs, ms
	fixtureRequests = 64      // requests a repetition
	fixtureInput    = 64      // prompt tokens a request
	fixtureOutput   = 16      // output tokens a request
	fixturePrice    = 2.5     // $ per GPU-hour
)

// rep is repetition index (1-based) at offered load rate: its latencies
// grow as the load nears saturation; noise is the repetition's own factor
// (the same arrivals at every load: DESIGN §3's common random numbers)
// times a little of the load's.
func (m fixtureModel) rep(index int, rate, noise float64, rnd *rand.Rand) result.Repetition {
	util := min(m.Slow*fixtureK*rate, 0.97)
	achieved := math.Min(rate, 0.97/(m.Slow*fixtureK)) * (1 - 0.01*rnd.Float64())
	step := m.Slow * fixtureStepMS / (1 - util) * noise * (1 + 0.02*rnd.NormFloat64())
	ttft50 := m.Slow*fixturePrefill + 2*step
	tpot, ttft := fixtureStats(step, 1.2), fixtureStats(ttft50, 2.2)
	e2e := fixtureStats(ttft50+fixtureOutput*step, 1.3)
	out := achieved * fixtureOutput
	return result.Repetition{
		Index: index, Duration: result.Seconds(roundSig(fixtureRequests/achieved, 4)),
		Sent: fixtureRequests, Completed: fixtureRequests, TokensFrom: "usage",
		PromptTokens: fixtureRequests * fixtureInput, OutputTokens: fixtureRequests * fixtureOutput,
		RequestThroughput: roundSig(achieved, 5), OutputThroughput: roundSig(out, 5), InputThroughput: roundSig(achieved*fixtureInput, 5),
		Goodput: roundSig(achieved, 5), GoodRequests: fixtureRequests, GoodPromptTokens: fixtureRequests * fixtureInput, GoodOutputTokens: fixtureRequests * fixtureOutput,
		Concurrency: roundSig(achieved*e2e.Mean/1000, 4),
		TTFT:        ttft, TPOT: tpot, ITL: tpot, E2E: e2e,
		Cost: &result.Cost{USDPerMOutput: roundSig(fixturePrice/(out*3600)*1e6, 4)},
	}
}

// fixtureStats are the statistics of a latency whose median is p50 and
// whose p99 is tail times it.
func fixtureStats(p50, tail float64) result.Stats {
	r := func(x float64) float64 { return roundSig(x, 4) }
	return result.Stats{Count: fixtureRequests, Mean: r(p50 * 1.05), Min: r(p50 * 0.6), P50: r(p50), P90: r(p50 * (1 + 0.6*(tail-1))),
		P95: r(p50 * (1 + 0.8*(tail-1))), P99: r(p50 * tail), P999: r(p50 * tail * 1.1), Max: r(p50 * tail * 1.15)}
}

// fixtureNoise is each repetition's own factor on its latencies.
func fixtureNoise(reps int, rnd *rand.Rand) []float64 {
	out := make([]float64, reps)
	for i := range out {
		out[i] = 1 + 0.04*rnd.NormFloat64()
	}
	return out
}

// point is a sweep point of the scenario of, at rate, with reps
// repetitions and the gates given (none by default).
func (m fixtureModel) point(of string, index, points int, rate float64, reps int, gates []result.Gate, rnd *rand.Rand) result.ScenarioResult {
	s := result.ScenarioResult{Name: fmt.Sprintf("%s.rate-%g", of, rate), Workload: "synth", WorkloadHash: "sha256:5eed0f00d5eed0f00d",
		Load: result.Load{Type: "poisson", Rate: rate}, Gates: gates,
		Sweep: &result.SweepPoint{Of: of, Param: "rate", Value: rate, Index: index, Points: points}}
	if s.Gates == nil {
		s.Gates = []result.Gate{}
	}
	noise := fixtureNoise(reps, rnd)
	for r := range reps {
		s.Repetitions = append(s.Repetitions, m.rep(r+1, rate, noise[r], rnd))
	}
	return s
}

// fixtureSearch is the capacity search of the fixtures: SLOs on TTFT and
// TPOT p99, from 10 to 640 req/s, holds every.
var fixtureSearch = result.CapacitySearch{Metric: "request_rate", SLO: map[string]float64{"ttft.p99": 25, "tpot.p99": 3},
	Min: 10, Max: 640, Start: 80, Resolution: 0.05, Rule: "every", Repetitions: 6, Budget: 8}

// margin is repetition rep's largest SLO statistic over its limit, each
// capacity is a capacity scenario of that name, searched by the search
// perfgate runs (capacity.Search) against the model: each probe's
// repetition r has the model's latency at the probe's load with its own
// noise, as repetition r of a real search replays one arrival sequence.
func (m fixtureModel) capacity(name string, search result.CapacitySearch, rnd *rand.Rand) result.ScenarioResult {
	noise := fixtureNoise(search.Repetitions, rnd)
	spec := capacity.Spec{Metric: search.Metric, Min: search.Min, Max: search.Max, Start: search.Start,
		Resolution: search.Resolution, Rule: search.Rule, Confidence: search.Confidence,
		Repetitions: search.Repetitions, Budget: search.Budget, MaxErrorRate: 0.05}
	for _, k := range slices.Sorted(maps.Keys(search.SLO)) {
		spec.SLO = append(spec.SLO, capacity.Objective{Metric: k, LimitMS: search.SLO[k]})
	}
	probe := func(_ context.Context, load float64, _ string) ([]result.Repetition, *result.Warmup, error) {
		reps := make([]result.Repetition, search.Repetitions)
		for r := range reps {
			reps[r] = m.rep(r+1, load, noise[r], rnd)
		}
		return reps, nil, nil
	}
	c, at, err := capacity.Search(context.Background(), spec, probe, nil)
	if err != nil {
		panic(fmt.Sprintf("capacity fixture %s: %v", name, err))
	}
	return result.ScenarioResult{Name: name, Workload: "synth", WorkloadHash: "sha256:5eed0f00d5eed0f00d",
		Load: result.Load{Type: "poisson"}, Gates: []result.Gate{{Metric: "capacity", Tolerance: "-5%"}},
		Capacity: c, Repetitions: at}
}

// capacityResult is a result of the sweeps (each of the rates, 6
// repetitions a point; the point at gated, if any, gated on TPOT p99) and
// the capacity searches named, under model m.
func capacityResult(m fixtureModel, sweeps []string, rates []float64, gated float64, searches []string) *result.Result {
	rnd := rand.New(rand.NewPCG(m.Seed, 18))
	r := &result.Result{Schema: result.Schema,
		Identity: result.Identity{PerfgateVersion: "dev", ConfigHash: "sha256:c0ffee", Target: result.Target{BaseURL: "http://127.0.0.1:18000", API: "chat", Model: "sim"},
			Server: result.Server{Engine: "perfgate-sim", Version: "dev"}, Stack: result.Stack{Kind: "process"},
			Host: result.Host{OS: "linux", Arch: "amd64", CPUs: 2, GoVersion: "go1.26"}, Simulated: true},
		StartedAt:  time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
		FinishedAt: time.Date(2026, 11, 24, 12, 1, 0, 0, time.UTC),
		Compare:    &result.CompareSettings{Alpha: 0.05, OnInconclusive: "fail"},
		Cost:       &result.Price{USDPerGPUHour: fixturePrice, GPUs: 1}}
	for _, of := range sweeps {
		for i, rate := range rates {
			var gates []result.Gate
			if rate == gated {
				gates = []result.Gate{{Metric: "tpot.p99", Tolerance: "+10%"}}
			}
			r.Scenarios = append(r.Scenarios, m.point(of, i, len(rates), rate, 6, gates, rnd))
		}
	}
	for _, name := range searches {
		r.Scenarios = append(r.Scenarios, m.capacity(name, fixtureSearch, rnd))
	}
	return r
}

// capacityFixtures are the committed fixtures: a sweep chat at 25, 50, 100
// and 150 req/s (100 gated on TPOT p99) and a capacity search
// chat-capacity; the candidate's step is 1.3 times the baseline's.
func capacityFixtures() (base, cand *result.Result) {
	rates := []float64{25, 50, 100, 150}
	base = capacityResult(fixtureModel{Slow: 1, Seed: 1}, []string{"chat"}, rates, 100, []string{"chat-capacity"})
	cand = capacityResult(fixtureModel{Slow: 1.3, Seed: 2}, []string{"chat"}, rates, 100, []string{"chat-capacity"})
	return base, cand
}

// The committed fixtures are what capacityFixtures builds, and read back
// as results (result.Read validates them).
func TestCapacityFixtures(t *testing.T) {
	base, cand := capacityFixtures()
	for name, r := range map[string]*result.Result{"base.json": base, "cand.json": cand} {
		path := filepath.Join("testdata", "capacity", name)
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, result.Write(path, r))
		}
		got, err := result.Read(path)
		require.NoError(t, err, "go test ./internal/report -run TestCapacityFixtures -update writes it")
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, result.Write(filepath.Join(dir, name), r))
		built, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		if string(built) != string(want) {
			t.Errorf("%s is stale: capacityFixtures builds another result; go test ./internal/report -run TestCapacityFixtures -update rewrites it", path)
		}
		require.Len(t, got.Scenarios, 5)
	}
}
