package config

import (
	"math"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/metric"
)

// Bounds on the values a run can use. Each value outside them is refused by
// `perfgate validate` (and every command that loads the config), with its
// field path and line, before anything is started or measured: a value a
// run could never use (a rate of 1e300 requests a second, a timeout of a
// century) otherwise runs in full and fails at the end, or measures
// nonsense. docs/config.md states each bound.
const (
	// MinRate and MaxRate bound an open-loop rate, in requests per second.
	// Below 0.001 (one request in 17 minutes) a repetition of any sane
	// length holds a handful of requests and its percentiles mean nothing;
	// above 100,000 no single serving stack answers and one client cannot
	// send.
	MinRate, MaxRate = 0.001, 100_000.0
	// MinBurstiness and MaxBurstiness bound the gamma shape: 0.01 is a
	// coefficient of variation of 10 (nearly all requests in a few bursts),
	// 100 one of 0.1 (nearly evenly spaced); past either end the gaps are
	// degenerate (all zero, or all equal) and the shape says nothing.
	MinBurstiness, MaxBurstiness = 0.01, 100.0
	// MinSpeedup and MaxSpeedup bound a trace's speedup: a hundred times
	// slower to a thousand times faster than recorded. Past them a trace
	// of minutes lasts days, or collapses into one burst.
	MinSpeedup, MaxSpeedup = 0.01, 1000.0
	// MinRecoveryWindow and MaxRecoveryWindow bound a step load's recovery
	// window: under a second a window holds too few requests for a p95 at
	// the rates a spike starts from; over ten minutes the recovery can only
	// be told to within ten minutes.
	MinRecoveryWindow, MaxRecoveryWindow = time.Second, 10 * time.Minute
	// StepRecoveryWindows is how many recovery windows a step load's
	// repetition must run past its last step: two to see TTFT p95 back
	// within the SLO and stay there, the rest for the recovery itself.
	StepRecoveryWindows = 6
	// MaxConcurrency bounds closed-loop users, open-loop max_in_flight and
	// quality.concurrency: 10,000. Each in-flight request holds a
	// connection and a goroutine; a single serving stack batches a few
	// hundred at most, and the default open-file limit is 1,024.
	MaxConcurrency = 10_000
	// MaxRequests bounds requests per repetition and the requests of a
	// synthetic workload: a million. Every request's record is kept in
	// memory until its repetition ends; a million is hours at any rate a
	// stack serves.
	MaxRequests = 1_000_000
	// MaxRepetitions bounds repetitions (and repetitions.max): 1,000.
	// Significance needs 4 to 20; a thousand repetitions of even one second
	// each outlast a CI job.
	MaxRepetitions = 1000
	// MaxRunDuration bounds every span of a run: a repetition's duration,
	// warm-up's min and max, a stack's ready_timeout. Six hours is the
	// longest a GitHub Actions job runs by default (timeout-minutes 360).
	MaxRunDuration = 6 * time.Hour
	// MaxRequestTimeout bounds target.timeout and the SLOs: one hour. A
	// streamed request that runs longer is stuck, and an SLO longer than
	// the timeout can never be missed.
	MaxRequestTimeout = time.Hour
	// MaxPause bounds cooldown and stack.stop_grace: ten minutes. A pause
	// between repetitions or a grace before SIGKILL longer than that holds
	// a CI runner for nothing.
	MaxPause = 10 * time.Minute
	// MinHealthInterval and MaxHealthInterval bound stack.health_interval:
	// faster than 100ms the checks load the server; slower than 5m a
	// crashed stack goes unnoticed for minutes of measurement.
	MinHealthInterval, MaxHealthInterval = 100 * time.Millisecond, 5 * time.Minute
	// MaxHealthFailures bounds stack.health_failures: 100 failed checks in
	// a row is already minutes of a dead stack at the default interval.
	MaxHealthFailures = 100
	// MinWarmupWindow and MaxWarmupWindow bound warmup.window: a window
	// under 100ms holds no completed request; one over 10m makes warm-up
	// (windows × window) outlast any run.
	MinWarmupWindow, MaxWarmupWindow = 100 * time.Millisecond, 10 * time.Minute
	// MaxWarmupWindows bounds warmup.windows: steadiness over more than
	// 100 windows is never reached in a warm-up of sane length.
	MaxWarmupWindows = 100
	// MaxNameLength bounds a scenario's name (and quality.scenario): 64
	// characters. It titles report tables and names a baseline file.
	MaxNameLength = 64
	// MaxUSDPerGPUHour bounds cost.usd_per_gpu_hour: the dearest cloud GPU
	// rents for well under $100 an hour, so $1,000 is a typo.
	MaxUSDPerGPUHour = 1000.0
	// MaxGPUs bounds cost.gpus: 1,024 GPUs serving one model is past any
	// deployment a pull request gates.
	MaxGPUs = 1024
	// MaxSweepPoints bounds the values of a sweep (load.rate or
	// load.concurrency as a list): 16 points draw a curve finely enough,
	// and each is a scenario measured in full, warm-up and repetitions.
	MaxSweepPoints = 16
	// MaxCapacityProbes bounds capacity.probes: 64. The worst case of a
	// search over the widest range at the finest resolution is 22;
	// each probe is a warm-up and a scenario's repetitions.
	MaxCapacityProbes = 64
)

// inRange reports whether x is a number in [lo, hi]; NaN never is.
func inRange(x, lo, hi float64) bool { return x >= lo && x <= hi }

// intIn checks an integer field against [lo, hi], with the field's unit
// (a plural noun, "users") in the message.
func (v *validator) intIn(path string, x, lo, hi int, unit string) {
	if x < lo || x > hi {
		v.add(path, "must be from %d to %d%s, got %d", lo, hi, unitSuffix(unit), x)
	}
}

// floatIn checks a number field against [lo, hi].
func (v *validator) floatIn(path string, x, lo, hi float64, unit string) {
	if !inRange(x, lo, hi) {
		v.add(path, "must be from %s to %s%s, got %s", fmtFloat(lo), fmtFloat(hi), unitSuffix(unit), fmtFloat(x))
	}
}

// durationIn checks a duration field against [lo, hi].
func (v *validator) durationIn(path string, d, lo, hi time.Duration) {
	if d < lo || d > hi {
		v.add(path, "must be from %s to %s, got %s", shortDur(lo), shortDur(hi), d)
	}
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

// shortDur writes a bound the way docs/config.md does: 6h rather than
// 6h0m0s, 0 rather than 0s.
func shortDur(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// toleranceProblem says what is wrong with a parsed tolerance that no
// measurement could ever cross, or "": a drop of 100% or more of a metric
// that cannot go below zero, more than 100 points of a share, or more than
// +1000% (a gate that wide is a gate turned off, and off says so).
func toleranceProblem(m metric.Info, t metric.Tolerance) string {
	switch {
	case math.IsNaN(t.Value) || math.IsInf(t.Value, 0):
		return "tolerance " + t.Text + " is not a finite number"
	case t.Relative && m.HigherIsBetter && t.Value >= 1:
		return "tolerance " + t.Text + ": " + m.Name + " cannot drop by 100% or more, so this gate could never fail; write off to turn it off"
	case t.Relative && t.Value > 10:
		return "tolerance " + t.Text + " is wider than +1000%, so this gate could hardly fail; write off to turn it off"
	case !t.Relative && m.Kind == metric.Fraction && t.Value > 1:
		return "tolerance " + t.Text + " is more than 100 points, so this gate could never fail; write off to turn it off"
	}
	return ""
}
