package workload

import (
	"bytes"
	"encoding/json"
	"math"
)

// DecodeSampling decodes one of a request's sampling and output-shape keys
// (temperature, top_p, seed, ignore_eos, min_tokens, response_format,
// tools, tool_choice) into req with the workload format's rules, and
// reports whether key is one of them. key is the bare name; m.Key is the
// field path problems are reported at (body.temperature, for an importer
// reading a wrapped body). It is the one decoder of these keys: a
// workload line, an eval item and every importer go through it.
// min_tokens is checked against max_tokens by the caller, who has both.
func (p *Problems) DecodeSampling(n int, key string, m Member, req *Request) bool {
	switch key {
	case "temperature":
		var v float64
		if p.floatIn(n, m, &v, 0, MaxTemperature, "from 0 to 2") {
			req.Temperature = &v
		}
	case "top_p":
		var v float64
		if p.floatIn(n, m, &v, math.SmallestNonzeroFloat64, 1, "greater than 0 and at most 1") {
			req.TopP = &v
		}
	case "seed":
		var v int64
		if p.Decode(n, m, &v, "integer") {
			req.Seed = &v
		}
	case "ignore_eos":
		var v bool
		if p.Decode(n, m, &v, "boolean") {
			req.IgnoreEOS = &v
		}
	case "min_tokens":
		var v int
		if p.intIn(n, m, &v, 0, MaxLength) {
			req.MinTokens = &v
		}
	case "response_format":
		if m.Raw[0] != '{' {
			p.Errorf(n, m.Key, "want a JSON object, got %s", Describe(m.Raw))
			break
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.Raw); err != nil { // cannot fail: the line is valid JSON
			p.Errorf(n, m.Key, "%v", err)
			break
		}
		req.ResponseFormat = json.RawMessage(buf.Bytes())
	case "tools":
		if m.Raw[0] != '[' {
			p.Errorf(n, m.Key, "want a JSON array of tools, got %s", Describe(m.Raw))
			break
		}
		req.Tools = Compact(m.Raw)
	case "tool_choice":
		if m.Raw[0] != '"' && m.Raw[0] != '{' {
			p.Errorf(n, m.Key, "want a string or a JSON object, got %s", Describe(m.Raw))
			break
		}
		req.ToolChoice = Compact(m.Raw)
	default:
		return false
	}
	return true
}
