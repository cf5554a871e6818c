package main

import (
	"encoding/json"
	"fmt"

	"github.com/perfgate/perfgate/internal/workload"
)

// Kinds of the agents workload, used as ids' prefixes and as tags.
const (
	kindExtract = "extract" // response_format json_schema
	kindTool    = "tool"    // tools, tool_choice required or auto
)

// extractSchema is the schema of the extraction requests' answers: a
// contact record, as a CRM agent's extraction step asks for.
const extractSchema = `{"type":"json_schema","json_schema":{"name":"contact","strict":true,"schema":{"type":"object",
"properties":{"name":{"type":"string","minLength":24},"company":{"type":"string","minLength":24},
"email":{"type":"string","minLength":24},"topics":{"type":"array","items":{"type":"string","minLength":16},"minItems":3},
"priority":{"type":"string","enum":["low","normal","high"]},"follow_up_days":{"type":"integer","minimum":1}},
"required":["name","company","email","topics","priority","follow_up_days"],"additionalProperties":false}}}`

// agentTools are the functions of the tool requests: a travel agent's.
const agentTools = `[{"type":"function","function":{"name":"search_flights","description":"Find flights between two airports on a date.",
"parameters":{"type":"object","properties":{"origin":{"type":"string","minLength":20},"destination":{"type":"string","minLength":20},
"date":{"type":"string","minLength":10},"passengers":{"type":"integer","minimum":1},"cabin":{"type":"string","enum":["economy","business"]}},
"required":["origin","destination","date","passengers","cabin"]}}},
{"type":"function","function":{"name":"get_weather","description":"The forecast for a city.",
"parameters":{"type":"object","properties":{"city":{"type":"string","minLength":20},"days":{"type":"integer","minimum":3}},"required":["city","days"]}}}]`

var (
	extractNotes = []string{
		"Met %s from %s at the trade fair; they want a demo of the reporting module and asked about volume pricing for %d seats.",
		"Call notes: %s (%s) is evaluating us against two vendors, needs SSO and an audit log, decision in %d weeks.",
		"Inbound email from %s at %s: their pilot went well, they want to expand to %d more teams and ask for a security review.",
		"Support escalation: %s from %s reports slow exports since the last release; %d users affected, renewal next quarter.",
	}
	extractNames     = []string{"Dana Okafor", "Ravi Menon", "Lucía Ortega", "Tomasz Nowak", "Aiko Tanaka", "Sam Whitfield"}
	extractCompanies = []string{"Northwind Logistics", "Bluefin Analytics", "Cedar & Lane", "Orbital Foods", "Hexa Health"}
	toolAsks         = []string{
		"Find me a business flight from Lisbon to Toronto on %d March for %d people.",
		"What will the weather be in Kyoto for the next %d days? We land there with %d kids.",
		"Book-search: economy from Nairobi to Berlin, the %dth of May, %d passengers.",
		"I need flights from Denver to Reykjavik on %d June, %d adults, cheapest cabin.",
	}
)

// agents makes the agents workload: contact extraction with a JSON schema
// and tool calls of a travel agent, interleaved. The tool requests alternate
// tool_choice required and auto.
func (g *gen) agents() []workload.Request {
	var reqs []workload.Request
	for i := range 60 {
		r := workload.Request{MaxTokens: 256}
		if i%2 == 0 {
			note := fmt.Sprintf(g.pick(extractNotes), g.pick(extractNames), g.pick(extractCompanies), 2+g.r.IntN(40))
			r.ID = fmt.Sprintf("%s-%03d", kindExtract, i)
			r.Messages = []workload.Message{
				{Role: "system", Content: "Extract a contact record from the note. Answer with JSON only."},
				{Role: "user", Content: note},
			}
			r.ResponseFormat = json.RawMessage(extractSchema)
			r.Tags = []string{kindExtract}
		} else {
			r.ID = fmt.Sprintf("%s-%03d", kindTool, i)
			r.Messages = []workload.Message{
				{Role: "system", Content: "You are a travel assistant. Use the tools to answer."},
				{Role: "user", Content: fmt.Sprintf(g.pick(toolAsks), 1+g.r.IntN(28), 1+g.r.IntN(5))},
			}
			r.Tools = json.RawMessage(agentTools)
			r.ToolChoice = json.RawMessage(`"required"`)
			if i%4 == 3 {
				r.ToolChoice = json.RawMessage(`"auto"`)
			}
			r.Tags = []string{kindTool}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }
