package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/textsafe"

	"github.com/perfgate/perfgate/internal/stat"
)

// Summary writes the terminal summary of a run: per scenario, the throughput
// figures and the latency percentiles, each the median over repetitions (with
// the range when there are several), in the spirit of vLLM's benchmark table,
// then what the engine, the GPUs and the price said when the repetitions
// carry telemetry; last, a line for each telemetry source that was
// unavailable or off.
func Summary(w io.Writer, r *result.Result) error {
	id := r.Identity
	server := id.Server.Engine
	if id.Server.Version != "" {
		server += " " + id.Server.Version
	}
	fmt.Fprintf(w, "perfgate %s · %s · model %s", id.PerfgateVersion, clean(id.Target.BaseURL, 80), clean(id.Target.Model, 80))
	if server != "" {
		fmt.Fprintf(w, " · server %s", clean(server, 60))
	}
	fmt.Fprintln(w)
	if id.Simulated {
		fmt.Fprintln(w, "target is perfgate's simulator: a test double, not a GPU measurement")
	}
	if line := clusterLine(id.Stack); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, s := range r.Scenarios {
		fmt.Fprintln(w)
		if err := scenario(w, &s, r.AB, r.Cost, r.Utilization, r.PercentileNames()); err != nil {
			return err
		}
	}
	if lines := unavailableSources(r.Telemetry, true, func(s string) string { return clean(s, verdictMaxShown) }); len(lines) > 0 {
		fmt.Fprintln(w)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

// scenario writes one scenario's summary; its latency table has the mean
// and percentiles, the result's measured percentiles. ab is the result's
// A/B arm, nil outside an A/B: its notes name the arm and round.
func scenario(w io.Writer, s *result.ScenarioResult, ab *result.ABArm, cost *result.Price, basis *result.UtilizationBasis, percentiles []string) error {
	reps := s.Repetitions
	load, at := describeLoad(s.Load), ""
	switch {
	case s.Capacity != nil && s.Capacity.Search.Headroom != nil:
		load, at = describeShape(s.Load)+", headroom search", " at the headroom point"
	case s.Capacity != nil:
		load, at = describeShape(s.Load)+", capacity search", " at the capacity point"
	}
	if f := firstFault(reps); f != nil {
		load += fmt.Sprintf(" · replica %d of %d killed at %.4gs", f.Replica, f.Replicas, f.AtS)
		if !f.Restarted {
			load += ", left down"
		}
	}
	fmt.Fprintf(w, "== %s · %s · %d repetition%s%s · workload %s (%s)\n",
		clean(s.Name, 80), load, len(reps), plural(len(reps)), at, clean(s.Workload, 80), shortHash(s.WorkloadHash))
	if line := workloadLine(s.Workload, s.WorkloadHash, s.WorkloadShape); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := preparation(s); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := recoveryLine(s); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := loadedBeforeLine(s); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := overloadLine(s); line != "" {
		fmt.Fprintln(w, line)
	}
	if c := s.Capacity; c != nil {
		for _, line := range capacityLines(c) {
			fmt.Fprintln(w, line)
		}
	}
	if len(reps) == 0 {
		fmt.Fprintln(w, "no repetitions")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	across := len(reps) > 1
	if across {
		fmt.Fprintln(tw, "\tmedian\tmin\tmax\t")
	}
	row := func(name, format string, get func(result.Repetition) float64) {
		vals := make([]float64, 0, len(reps))
		for _, rep := range reps {
			if v := get(rep); !math.IsNaN(v) { // NaN: the repetition has no such value
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return
		}
		if across {
			fmt.Fprintf(tw, "%s\t"+format+"\t"+format+"\t"+format+"\t\n", name, median(vals), slices.Min(vals), slices.Max(vals))
		} else {
			fmt.Fprintf(tw, "%s\t"+format+"\t\n", name, vals[0])
		}
	}
	row("requests sent", "%.0f", func(r result.Repetition) float64 { return float64(r.Sent) })
	row("requests failed", "%.0f", func(r result.Repetition) float64 { return float64(r.Failed) })
	// Structured output (JSON, tool calls): the answers checked and the
	// wrong ones, in a scenario that asked for any.
	if slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.Structured > 0 }) {
		row("structured answers", "%.0f", func(r result.Repetition) float64 { return float64(r.Structured) })
		row("structured answers wrong", "%.0f", func(r result.Repetition) float64 { return float64(r.StructuredErrors) })
	}
	// A reasoning model: its thinking and its answer apart (the TTFT rows
	// below are the first thought).
	if slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.Reasoning != nil }) {
		reasoning := func(f func(*result.ReasoningStats) float64) func(result.Repetition) float64 {
			return func(r result.Repetition) float64 {
				if r.Reasoning == nil {
					return math.NaN()
				}
				return f(r.Reasoning)
			}
		}
		row("requests that reasoned", "%.0f", reasoning(func(rs *result.ReasoningStats) float64 { return float64(rs.Requests) }))
		row("reasoning tokens a request", "%.1f", reasoning(func(rs *result.ReasoningStats) float64 {
			return float64(rs.ReasoningTokens) / float64(max(rs.Requests, 1))
		}))
		row("cut before an answer", "%.0f", reasoning(func(rs *result.ReasoningStats) float64 { return float64(rs.Truncated) }))
		row("time to first answer p50 (ms)", "%.2f", reasoning(func(rs *result.ReasoningStats) float64 { return nanIfNone(rs.TTFA.Count, rs.TTFA.P50) }))
		row("time to first answer p95 (ms)", "%.2f", reasoning(func(rs *result.ReasoningStats) float64 { return nanIfNone(rs.TTFA.Count, rs.TTFA.P95) }))
	}
	row("duration (s)", "%.2f", func(r result.Repetition) float64 { return float64(r.Duration) })
	row("request throughput (req/s)", "%.2f", func(r result.Repetition) float64 { return r.RequestThroughput })
	row("output throughput (tok/s)", "%.1f", func(r result.Repetition) float64 { return r.OutputThroughput })
	row("input throughput (tok/s)", "%.1f", func(r result.Repetition) float64 { return r.InputThroughput })
	// Per request, beside the totals: the prompt's way to the first token
	// and the decode after it, so a change that helps one phase and hurts
	// the other shows. Absent from results of a perfgate before them.
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.PrefillThroughput == nil }) {
		row("prefill throughput (tok/s)", "%.1f", func(r result.Repetition) float64 { return *r.PrefillThroughput })
	}
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.DecodeThroughput == nil }) {
		row("decode throughput (tok/s)", "%.1f", func(r result.Repetition) float64 { return *r.DecodeThroughput })
	}
	if s.SLO != (result.SLO{}) {
		row("goodput (req/s)", "%.2f", func(r result.Repetition) float64 { return r.Goodput })
	}
	row("mean concurrency", "%.2f", func(r result.Repetition) float64 { return r.Concurrency })
	// Sessions (multi-turn workloads): shown, not gated. A percentile of a
	// repetition with no such turn or no completed session reads NaN.
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.Sessions == nil }) {
		row("sessions started", "%.0f", func(r result.Repetition) float64 { return float64(r.Sessions.Started) })
		row("sessions completed", "%.0f", func(r result.Repetition) float64 { return float64(r.Sessions.Completed) })
		row("turns a session", "%.2f", func(r result.Repetition) float64 { return r.Sessions.TurnsMean })
		row("TTFT p50, turn 1 (ms)", "%.2f", func(r result.Repetition) float64 { return statP50(r.Sessions.FirstTurnTTFT) })
		row("TTFT p50, later turns (ms)", "%.2f", func(r result.Repetition) float64 { return statP50(r.Sessions.LaterTurnTTFT) })
		row("session E2E p50 (s)", "%.2f", func(r result.Repetition) float64 { return statP50(r.Sessions.E2E) / 1000 })
	}
	// A step load's recovery: a lower bound where the server never
	// recovered, which the line below the table says.
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.Recovery == nil }) {
		row("recovery (s)", "%.1f", func(r result.Repetition) float64 { return r.Recovery.Seconds })
		row("requests over slo.ttft meanwhile", "%.0f", func(r result.Repetition) float64 { return float64(r.Recovery.Breaches) })
		row("TTFT p95 peak (ms)", "%.0f", func(r result.Repetition) float64 { return r.Recovery.PeakP95MS })
	}
	// A fault's effect: the errors from the kill on, when the killed
	// replica was back (left out where it was not within the repetition)
	// and the goodput of the requests sent before and while it was down.
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return r.Fault == nil }) {
		row("errors from the fault on", "%.0f", func(r result.Repetition) float64 { return float64(r.Fault.Errors) })
		row("replica back after (s)", "%.1f", func(r result.Repetition) float64 {
			if r.Fault.BackS == nil {
				return math.NaN()
			}
			return *r.Fault.BackS - r.Fault.KilledS
		})
		row("goodput before the fault (req/s)", "%.2f", func(r result.Repetition) float64 { return nanIfNil(r.Fault.BeforeRPS) })
		row("goodput while down (req/s)", "%.2f", func(r result.Repetition) float64 { return nanIfNil(r.Fault.DuringRPS) })
	}
	// A kubernetes stack's ready pods behind its Service, as an
	// autoscaler or a fault changed them.
	if !slices.ContainsFunc(reps, func(r result.Repetition) bool { return len(r.Replicas) == 0 }) {
		row("ready replicas at start", "%.0f", func(r result.Repetition) float64 { return float64(r.Replicas[0].Ready) })
		row("ready replicas, fewest", "%.0f", func(r result.Repetition) float64 { return float64(readyExtreme(r.Replicas, false)) })
		row("ready replicas, most", "%.0f", func(r result.Repetition) float64 { return float64(readyExtreme(r.Replicas, true)) })
	}
	if reps[0].Schedule != nil {
		row("achieved rate (req/s)", "%.2f", func(r result.Repetition) float64 { return r.Schedule.AchievedRate })
		row("send lag p99 (ms)", "%.2f", func(r result.Repetition) float64 { return r.Schedule.SendLag.P99 })
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	label := "latency (ms)"
	if across {
		label = "latency (ms), median of repetitions"
	}
	fmt.Fprintf(tw, "%s\tmean\t%s\t\n", label, strings.Join(percentiles, "\t"))
	lat := func(name string, get func(result.Repetition) result.Stats) {
		cols := []func(result.Stats) (float64, bool){func(s result.Stats) (float64, bool) { return s.Mean, true }}
		for _, p := range percentiles {
			cols = append(cols, func(s result.Stats) (float64, bool) { return s.Percentile(p) })
		}
		fmt.Fprintf(tw, "%s\t", name)
		for _, col := range cols {
			vals := make([]float64, 0, len(reps))
			for _, rep := range reps {
				if v, ok := col(get(rep)); ok {
					vals = append(vals, v)
				}
			}
			if len(vals) < len(reps) {
				fmt.Fprint(tw, "—\t") // not measured here (the schedule's distributions)
				continue
			}
			fmt.Fprintf(tw, "%.2f\t", median(vals))
		}
		fmt.Fprintln(tw)
	}
	lat("TTFT", func(r result.Repetition) result.Stats { return r.TTFT })
	lat("TPOT", func(r result.Repetition) result.Stats { return r.TPOT })
	lat("ITL", func(r result.Repetition) result.Stats { return r.ITL })
	lat("E2E", func(r result.Repetition) result.Stats { return r.E2E })
	if reps[0].Schedule != nil {
		lat("TTFT from schedule", func(r result.Repetition) result.Stats { return r.Schedule.TTFTFromSchedule })
		lat("E2E from schedule", func(r result.Repetition) result.Stats { return r.Schedule.E2EFromSchedule })
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := subsetTable(w, reps); err != nil {
		return err
	}
	if err := summaryTelemetry(&verdictPrinter{w: w}, s, cost, basis); err != nil {
		return err
	}
	if len(s.Quality) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "eval suite	items	right	accuracy	failed	answered amid load	mode")
		for _, q := range s.Quality {
			// Accuracy is over the items answered: a failed request is no
			// answer, neither right nor wrong.
			pass, answered := q.Answered()
			acc := "—"
			if answered > 0 {
				acc = fmt.Sprintf("%.1f%%", 100*float64(pass)/float64(answered))
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%d\t%s\n", clean(q.Name, 60), len(q.Items), pass, acc, summaryFailed(&q), q.Interleaved, clean(q.Mode, 20))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, note := range notes(s, ab) {
		fmt.Fprintln(w, "note: "+note)
	}
	return nil
}

// notes are the warnings a reader must not miss. ab, the result's A/B
// arm (nil outside an A/B), makes each name its arm and round rather than
// its repetition: an A/B's summary and notes are of one arm, and round r
// measured repetition r on both.
func notes(s *result.ScenarioResult, ab *result.ABArm) []string {
	var out []string
	for _, r := range s.Repetitions {
		rep := fmt.Sprintf("repetition %d", r.Index)
		if ab != nil {
			rep = fmt.Sprintf("the %s arm, round %d", clean(ab.Arm, 20), r.Index)
		}
		if r.Schedule != nil && !r.Schedule.Achieved {
			out = append(out, fmt.Sprintf("%s did not keep to its schedule (achieved %.2f of %.2f req/s, p99 send lag %.1f ms): the client or a max_in_flight cap fell behind, and latency from the actual send hides it — read the 'from schedule' rows",
				rep, r.Schedule.AchievedRate, r.Schedule.ScheduledRate, r.Schedule.SendLag.P99))
		}
		if r.UsageRefused > 0 {
			out = append(out, fmt.Sprintf("%s: the server's usage was not believed for %d request%s (a count that cannot be true, or far from what the stream showed): their tokens were counted from the stream; the records say why", rep, r.UsageRefused, plural(r.UsageRefused)))
		}
		if rs := r.Reasoning; rs != nil && rs.Truncated > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d requests that reasoned were cut by max_tokens before any answer (finish_reason length): the model thought past the budget; they have no time to first answer",
				rep, rs.Truncated, rs.Requests))
		}
		if r.StructuredErrors > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d structured answers were not what their requests asked for (counted in structured_error_rate, kept out of latency and goodput; the records say what was wrong), first %s",
				rep, r.StructuredErrors, r.Structured, clean(r.FirstStructuredError, 200)))
		}
		if u := r.Utilization; u != nil && u.Impossible != "" {
			out = append(out, fmt.Sprintf("%s: %s (the utilization section)", rep, clean(u.Impossible, 300)))
		}
		if r.Retries > 0 {
			out = append(out, fmt.Sprintf("%s: %d request%s sent again on a new connection, because the server had closed the reused one before answering (not errors; latency is the retry's)", rep, r.Retries, plural(r.Retries)))
		}
		if r.TokensFrom != "usage" && r.Completed > 0 {
			out = append(out, fmt.Sprintf("%s: token counts from %s, not the server's usage: counts are content chunks, which may differ from tokens", rep, r.TokensFrom))
		}
		if len(r.Errors) > 0 {
			kinds := make([]string, 0, len(r.Errors))
			for k, n := range r.Errors {
				kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
			}
			slices.Sort(kinds)
			out = append(out, fmt.Sprintf("%s: %d of %d requests failed (%s)", rep, r.Failed, r.Sent, strings.Join(kinds, ", ")))
		}
	}
	return out
}

// Notes writes the notes of every scenario of r, as Summary writes them
// under each scenario but each led by its scenario's name ("note: chat,
// the base arm, round 3: ..."): what perfgate ab prints of the arm whose
// summary it does not print.
func Notes(w io.Writer, r *result.Result) {
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for _, note := range notes(s, r.AB) {
			fmt.Fprintf(w, "note: %s, %s\n", clean(s.Name, 80), note)
		}
	}
}

// preparation describes how the scenario's stack got to where it was
// measured: its cold start and its warm-up; "" when there is neither.
func preparation(s *result.ScenarioResult) string {
	var parts []string
	if s.ColdStartMS > 0 {
		parts = append(parts, fmt.Sprintf("cold start %.2f s", s.ColdStartMS/1000))
	}
	if w := warmupText(s.Warmup); w != "" {
		parts = append(parts, w)
	}
	if w := roundWarmupsText(s.Warmups); w != "" {
		parts = append(parts, w)
	}
	if s.Salt == result.SaltOff {
		parts = append(parts, "prompt salting off (a prompt cache may serve repeated prompts)")
	}
	if len(parts) == 0 {
		return ""
	}
	return "   " + strings.Join(parts, " · ")
}

// capacityLines are a capacity search's lines in the summary: the
// headline (`capacity 148 req/s [148, 155) · 2,370 output tok/s ·
// $0.83/Mtok · 8 of 8 probes + 2 closing`), the outcome in words, the
// samples' median, and the search's warnings. The interval, the outcome's
// words and the loads are the report's (capacityInterval,
// capacityOutcomeText, loadText).
func capacityLines(c *result.Capacity) []string {
	unit := capacityUnit(c.Search)
	parts := []string{searchNoun(c.Search) + " " + capacityInterval(c, unit)}
	if unit == "users" && c.Search.Headroom == nil {
		parts = append(parts, fmt.Sprintf("%s req/s", grouped(c.RequestRate, 2)))
	}
	parts = append(parts, fmt.Sprintf("%s output tok/s", grouped(c.OutputThroughput, 0)))
	if c.CostPerMTok != nil {
		parts = append(parts, fmt.Sprintf("$%.2f/Mtok", *c.CostPerMTok))
	}
	parts = append(parts, probesText(c))
	lines := []string{strings.Join(parts, " · ")}
	outcome, known := capacityOutcomeText(c, unit)
	if !known {
		outcome = "outcome " + clean(outcome, 60)
	}
	lines = append(lines, outcome)
	if c.Boundary != "" {
		lines = append(lines, "where it stopped holding: "+clean(c.Boundary, 300))
	}
	if len(c.Samples) > 0 {
		loads := make([]float64, 0, len(c.Samples))
		censored := 0
		for _, smp := range c.Samples {
			loads = append(loads, smp.Load)
			if smp.Censored != "" {
				censored++
			}
		}
		line := fmt.Sprintf("per-repetition %s (the gate's samples): median %s %s over %d, from %s to %s",
			searchNoun(c.Search), loadText(median(loads)), unit, len(loads), loadText(slices.Min(loads)), loadText(slices.Max(loads)))
		if censored > 0 {
			line += fmt.Sprintf("; %d a bound, not a crossing", censored)
		}
		lines = append(lines, line)
	}
	for _, warning := range c.Warnings {
		lines = append(lines, "note: "+clean(warning, 300))
	}
	return lines
}

// grouped writes x with decimals places and its thousands separated by
// commas: 2,370.
func grouped(x float64, decimals int) string {
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return s
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// describeShape is a load's shape without its rate or concurrency: what a
// capacity search's result records (the search chose the load).
func describeShape(l result.Load) string {
	var s string
	switch l.Type {
	case config.LoadClosed:
		s = "closed loop"
	case config.LoadGamma:
		s = fmt.Sprintf("gamma, burstiness %.3g", l.Burstiness)
	default:
		s = clean(l.Type, 40) // a result file's: untrusted
	}
	if l.MaxInFlight > 0 {
		s += fmt.Sprintf(", max %d in flight", l.MaxInFlight)
	}
	return s
}

func describeLoad(l result.Load) string {
	var s string
	switch l.Type {
	case config.LoadClosed:
		s = fmt.Sprintf("closed loop, concurrency %d", l.Concurrency)
	case config.LoadPoisson:
		s = fmt.Sprintf("poisson %.4g req/s", l.Rate)
	case config.LoadGamma:
		s = fmt.Sprintf("gamma %.4g req/s, burstiness %.3g", l.Rate, l.Burstiness)
	case config.LoadTrace:
		s = fmt.Sprintf("trace replay, speed-up %.3g", l.Speedup)
	case config.LoadStep:
		s = "step " + stepsText(l)
	default:
		s = clean(l.Type, 40) // a result file's: untrusted
	}
	if l.MaxInFlight > 0 {
		s += fmt.Sprintf(", max %d in flight", l.MaxInFlight)
	}
	return s
}

// clusterLine is what a kubernetes stack's cluster said of it: its
// namespace, the ready pods and their starts (scheduled to ready), the
// GPUs; "" for another stack.
func clusterLine(st result.Stack) string {
	if st.Kind != config.StackKubernetes {
		return ""
	}
	line := fmt.Sprintf("kubernetes namespace %s · %d pod%s ready", clean(st.Namespace, 63), st.Replicas, plural(st.Replicas))
	if len(st.PodStartsS) > 0 {
		starts := make([]string, 0, len(st.PodStartsS))
		for _, x := range st.PodStartsS[:min(len(st.PodStartsS), 8)] {
			starts = append(starts, fmt.Sprintf("%.0f s", x))
		}
		line += " (scheduled to ready: " + strings.Join(starts, ", ") + ")"
	}
	if st.GPUs > 0 {
		line += fmt.Sprintf(" · %d GPU%s", st.GPUs, plural(st.GPUs))
		if len(st.GPUProducts) > 0 {
			line += " " + clean(strings.Join(st.GPUProducts, ", "), 80)
		}
	}
	return line
}

// nanIfNil is *x, or NaN (not shown) for nil.
func nanIfNil(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// loadedBeforeLine is the run summary's line for a step load or a fault
// whose TTFT p95 was over slo.ttft before the step or the fault in some
// repetitions: the stack was not keeping up before it was disturbed, so
// the recovery measures that too; "" when it kept up in every one.
func loadedBeforeLine(s *result.ScenarioResult) string {
	if s.SLO.TTFT <= 0 {
		return ""
	}
	var over []string
	for _, r := range s.Repetitions {
		if r.Recovery != nil && r.Recovery.BeforeP95MS > s.SLO.TTFT {
			over = append(over, strconv.Itoa(r.Index))
		}
	}
	if len(over) == 0 {
		return ""
	}
	event := "the step"
	if firstFault(s.Repetitions) != nil {
		event = "the fault"
	}
	return fmt.Sprintf("   OVER THE SLO BEFORE %s in repetition %s: TTFT p95 was past slo.ttft (%.4g ms) already, so the load was too much before it and the recovery measures that too; lower the load",
		strings.ToUpper(event), strings.Join(over, ", "), s.SLO.TTFT)
}

// firstFault is the first repetition's fault, nil without one.
func firstFault(reps []result.Repetition) *result.Fault {
	if len(reps) == 0 {
		return nil
	}
	return reps[0].Fault
}

// recoveryLine is the run summary's line for a step load whose server did
// not recover in some repetitions; "" when it recovered in every one.
func recoveryLine(s *result.ScenarioResult) string {
	var not []string
	for _, r := range s.Repetitions {
		if r.Recovery != nil && !r.Recovery.Recovered {
			not = append(not, strconv.Itoa(r.Index))
		}
	}
	if len(not) == 0 {
		return ""
	}
	return fmt.Sprintf("   NOT RECOVERED in repetition %s: TTFT p95 was still over slo.ttft at the end; the recovery shown is a lower bound", strings.Join(not, ", "))
}

// stepsText is a step load's rates and times: "4 req/s, 16 from 60s"; its
// numbers printed as numbers, whatever the file held.
func stepsText(l result.Load) string {
	if len(l.Steps) == 0 {
		return "(no rates)"
	}
	parts := []string{fmt.Sprintf("%.4g req/s", l.Steps[0])}
	for i, r := range l.Steps[1:] {
		if i < len(l.At) {
			parts = append(parts, fmt.Sprintf("%.4g from %s", r, l.At[i]))
		}
	}
	return strings.Join(parts, ", ")
}

// median is stat.Median: NaN for none.
func median(v []float64) float64 { return stat.Median(v) }

// statP50 is st's median, NaN when it has no values.
func statP50(st result.Stats) float64 {
	if st.Count == 0 {
		return math.NaN()
	}
	return st.P50
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// shortHash is result.ShortHash.
func shortHash(h string) string { return result.ShortHash(h) }

// clean makes untrusted text safe for a terminal: control and format
// characters become spaces, and it is cut to at most n runes.
func clean(s string, n int) string { return textsafe.Cut(s, n) }

// nanIfNone is v, or NaN (no value: the row skips it) when count is 0.
func nanIfNone(count int64, v float64) float64 {
	if count == 0 {
		return math.NaN()
	}
	return v
}

// subsetTable writes the subsets of the requests measured apart
// (structured and free, each model), side by side, medians of the
// repetitions that had each: "JSON mode is 1.4x slower per token" is a
// glance across its rows. Nothing when no repetition kept any.
func subsetTable(w io.Writer, reps []result.Repetition) error {
	var names []string
	for i := range reps {
		for _, n := range reps[i].SubsetNames() {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.SortStableFunc(names, func(a, b string) int { return metric.Order("ttft.p50@"+a) - metric.Order("ttft.p50@"+b) })
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "by kind and model, median of repetitions\tsent\tfailed\tTTFT p50\tTTFT p95\tTPOT p50\tE2E p50\tdecode tok/s\toutput tok/s\t")
	for _, name := range names {
		var subs []*result.Subset
		for i := range reps {
			if s := reps[i].Subsets[name]; s != nil {
				subs = append(subs, s)
			}
		}
		med := func(get func(*result.Subset) (float64, bool)) string {
			var vals []float64
			for _, s := range subs {
				if v, ok := get(s); ok {
					vals = append(vals, v)
				}
			}
			if len(vals) == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f", median(vals))
		}
		stat := func(f func(*result.Subset) result.Stats, p func(result.Stats) float64) func(*result.Subset) (float64, bool) {
			return func(s *result.Subset) (float64, bool) { st := f(s); return p(st), st.Count > 0 }
		}
		ttft := func(s *result.Subset) result.Stats { return s.TTFT }
		tpot := func(s *result.Subset) result.Stats { return s.TPOT }
		e2e := func(s *result.Subset) result.Stats { return s.E2E }
		p50 := func(st result.Stats) float64 { return st.P50 }
		p95 := func(st result.Stats) float64 { return st.P95 }
		label := clean(name, 60)
		if len(subs) < len(reps) {
			label += fmt.Sprintf(" (%d of %d repetitions)", len(subs), len(reps))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", label,
			strings.TrimSuffix(med(func(s *result.Subset) (float64, bool) { return float64(s.Sent), true }), ".00"),
			strings.TrimSuffix(med(func(s *result.Subset) (float64, bool) { return float64(s.Failed), true }), ".00"),
			med(stat(ttft, p50)), med(stat(ttft, p95)), med(stat(tpot, p50)), med(stat(e2e, p50)),
			med(func(s *result.Subset) (float64, bool) {
				if s.DecodeThroughput == nil {
					return 0, false
				}
				return *s.DecodeThroughput, true
			}),
			med(func(s *result.Subset) (float64, bool) { return s.OutputThroughput, true }))
	}
	return tw.Flush()
}

// readyExtreme is the most (or, not most, the fewest) ready replicas of a
// repetition's counts.
func readyExtreme(counts []result.ReadyReplicas, most bool) int {
	n := counts[0].Ready
	for _, c := range counts[1:] {
		if most {
			n = max(n, c.Ready)
		} else {
			n = min(n, c.Ready)
		}
	}
	return n
}
