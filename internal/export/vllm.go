package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
)

// The vllm format is the result JSON that `vllm bench serve --save-result`
// writes, which vLLM's own tools (`vllm bench sweep plot`, the benchmark
// dashboards' scripts) and many users' notebooks read. Its keys and types are
// those vllm/benchmarks/serve.py sets (the result dict of benchmark() and
// result_json of main_async()); testdata/schema/vllm-result.schema.json lists
// them, and its README names the commit they were read at.
//
// vLLM's file describes one run: one window of requests at one load. A
// perfgate repetition is exactly that, so the format writes one object per
// repetition, each on its own line (JSON lines, as `vllm bench serve
// --append-result` appends them), in scenario and repetition order; every
// value is what that repetition measured, none is a statistic over
// repetitions. `jq -s .` makes the lines one JSON array, the summary.json
// that `vllm bench sweep plot` reads; `perfgate export --scenario` keeps one
// scenario's.
//
// What perfgate measures is mapped to vLLM's keys by their definitions:
//
//   - date: the run's start (result started_at, UTC) as vLLM's
//     "20060102-150405";
//   - backend and endpoint_type: "openai-chat" for the chat API,
//     "openai" for completions; label "perfgate"; model_id the model asked
//     for; tokenizer_id null (perfgate does not tokenise);
//   - num_prompts: the requests the repetition sent; request_rate: an open
//     loop's offered rate (the repetition's schedule, else the scenario's
//     load), "inf" for a closed loop or a trace, as vLLM writes an unlimited
//     rate; burstiness: a gamma loop's, else 1 (vLLM's Poisson default);
//     max_concurrency: a closed loop's users, an open loop's max_in_flight
//     cap, else null;
//   - duration, completed, failed, total_input_tokens,
//     total_output_tokens, request_throughput, output_throughput,
//     total_token_throughput (input plus output tokens per second), and
//     request_goodput (null when the scenario sets no SLO, as vLLM writes
//     it without --goodput);
//   - mean_<m>_ms, median_<m>_ms and p<q>_<m>_ms for m in ttft, tpot, itl
//     and e2el (perfgate's e2e), for every percentile perfgate keeps
//     (metric.LatencyStats: p50, p90, p95, p99, p99.9 as "p99.9", as vLLM
//     writes a fractional percentile). A distribution with no requests in it
//     is left out.
//
// vLLM's std_<m>_ms, max_output_tokens_per_s, max_concurrent_requests and
// rtfx have no perfgate measurement and are left out, not written as zero.
// Three keys say where each object came from, as `vllm bench serve
// --metadata KEY=VALUE` adds top-level keys: perfgate_scenario,
// perfgate_repetition and, when known, perfgate_engine (engine and version).

// vllmFamilies maps perfgate's latency families to vLLM's names, in the
// order vLLM writes them.
var vllmFamilies = []struct{ perfgate, vllm string }{
	{"ttft", "ttft"}, {"tpot", "tpot"}, {"itl", "itl"}, {"e2e", "e2el"},
}

// vllmDate is the layout of vLLM's "date": datetime.now().strftime("%Y%m%d-%H%M%S").
const vllmDate = "20060102-150405"

func vllm(r *result.Result) ([]byte, error) {
	var buf bytes.Buffer
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		for j := range s.Repetitions {
			obj, err := vllmObject(r, s, &s.Repetitions[j])
			if err != nil {
				return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
			}
			line, err := json.Marshal(obj)
			if err != nil {
				return nil, fmt.Errorf("scenario %s repetition %d: %w", s.Name, s.Repetitions[j].Index, err)
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes(), nil
}

// vllmObject is one repetition as vLLM's result JSON.
func vllmObject(r *result.Result, s *result.ScenarioResult, rep *result.Repetition) (object, error) {
	var o object
	if !r.StartedAt.IsZero() {
		o.add("date", r.StartedAt.UTC().Format(vllmDate))
	}
	backend := "openai"
	if r.Identity.Target.API == "chat" {
		backend = "openai-chat"
	}
	o.add("endpoint_type", backend)
	o.add("backend", backend)
	o.add("label", "perfgate")
	o.add("model_id", cleanName(r.Identity.Target.Model))
	o.add("tokenizer_id", nil)
	o.add("num_prompts", rep.Sent)

	switch s.Load.Type {
	case config.LoadPoisson, config.LoadGamma, config.LoadStep:
		rate := s.Load.Rate // a step load's mean is its schedule's offered rate
		if rep.Schedule != nil && rep.Schedule.OfferedRate > 0 {
			rate = rep.Schedule.OfferedRate
		}
		if rate > 0 && finite(rate) {
			o.add("request_rate", round(rate))
		}
	default:
		o.add("request_rate", "inf")
	}
	burstiness := 1.0
	if (s.Load.Type == config.LoadGamma || s.Load.Type == config.LoadStep) && s.Load.Burstiness > 0 {
		burstiness = s.Load.Burstiness
	}
	o.add("burstiness", round(burstiness))
	switch {
	case s.Load.Type == config.LoadClosed && s.Load.Concurrency > 0:
		o.add("max_concurrency", s.Load.Concurrency)
	case s.Load.MaxInFlight > 0:
		o.add("max_concurrency", s.Load.MaxInFlight)
	default:
		o.add("max_concurrency", nil)
	}

	o.addNumber("duration", float64(rep.Duration))
	o.add("completed", rep.Completed)
	o.add("failed", rep.Failed)
	o.add("total_input_tokens", rep.PromptTokens)
	o.add("total_output_tokens", rep.OutputTokens)
	o.addNumber("request_throughput", rep.RequestThroughput)
	if s.SLO == (result.SLO{}) {
		o.add("request_goodput", nil)
	} else {
		o.addNumber("request_goodput", rep.Goodput)
	}
	o.addNumber("output_throughput", rep.OutputThroughput)
	o.addNumber("total_token_throughput", rep.InputThroughput+rep.OutputThroughput)

	for _, f := range vllmFamilies {
		if latencyCount(rep, f.perfgate) == 0 {
			continue
		}
		for _, stat := range append([]string{"mean", "median"}, r.PercentileNames()...) {
			name := f.perfgate + "." + stat
			if stat == "median" {
				name = f.perfgate + ".p50"
			}
			v, err := rep.Value(name)
			if err != nil {
				return nil, err
			}
			// "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", and
			// "p99.9_ttft_ms" as vLLM writes a fractional percentile.
			o.addNumber(stat+"_"+f.vllm+"_ms", v)
		}
	}

	o.add("perfgate_scenario", cleanName(s.Name))
	o.add("perfgate_repetition", rep.Index)
	if e := strings.TrimSpace(cleanName(r.Identity.Server.Engine + " " + r.Identity.Server.Version)); e != "" {
		o.add("perfgate_engine", e)
	}
	return o, nil
}

// object is a JSON object whose keys keep the order they were added in, as
// vLLM's dict does.
type object []field

type field struct {
	key string
	val any
}

func (o *object) add(key string, v any) { *o = append(*o, field{key, v}) }

// addNumber adds v, rounded, unless it is not finite: a key whose value
// cannot be written as JSON is left out.
func (o *object) addNumber(key string, v float64) {
	if finite(v) {
		o.add(key, round(v))
	}
}

// MarshalJSON writes the object's fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.key, err)
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
