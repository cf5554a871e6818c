package quality

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/perfgate/perfgate/internal/workload"
)

// scorerOptions lists the options each scorer takes, in the order
// docs/evals.md gives them.
var scorerOptions = map[string][]string{
	"exact":       {"case_sensitive", "keep_punctuation"},
	"contains":    {"case_sensitive", "keep_punctuation"},
	"regex":       {"case_insensitive"},
	"choice":      {"choices"},
	"numeric":     {"abs_tol", "rel_tol"},
	"json_valid":  nil,
	"json_schema": {"schema", "schema_file"},
	"tool_call":   nil,
	"reference":   {"metric", "threshold"},
}

// Defaults of the options.
const (
	defaultChoices   = "ABCD"
	defaultMetric    = "rouge_l"
	defaultThreshold = 0.5
)

var metrics = []string{"rouge_l", "chrf"}

// options are an item's scorer options, decoded and checked; absent ones
// have their defaults.
type options struct {
	caseSensitive   bool
	keepPunctuation bool
	caseInsensitive bool
	choices         string
	absTol, relTol  float64
	schema          json.RawMessage // inline schema, or nil
	schemaFile      string
	metric          string
	threshold       float64
}

func defaultOptions() options {
	return options{choices: defaultChoices, metric: defaultMetric, threshold: defaultThreshold}
}

// options decodes and checks the options of an item whose scorer is name.
// set is whether the line has an options key at all.
func (p *parser) options(n int, name string, members []workload.Member, set bool) options {
	o := defaultOptions()
	allowed := scorerOptions[name]
	seen, present := map[string]bool{}, map[string]bool{}
	for _, m := range members {
		field := "options." + m.Key
		if seen[m.Key] {
			p.errorf(n, field, "key appears more than once")
			continue
		}
		seen[m.Key] = true
		if !slices.Contains(allowed, m.Key) {
			if len(allowed) == 0 {
				p.errorf(n, field, "unknown option; scorer %s takes no options", name)
			} else {
				p.errorf(n, field, "unknown option for scorer %s%s; want one of %s", name, workload.DidYouMean(m.Key, allowed), strings.Join(allowed, ", "))
			}
			continue
		}
		if string(m.Raw) == "null" {
			continue
		}
		present[m.Key] = true
		fm := workload.Member{Key: field, Raw: m.Raw}
		switch m.Key {
		case "case_sensitive":
			p.Decode(n, fm, &o.caseSensitive, "boolean")
		case "keep_punctuation":
			p.Decode(n, fm, &o.keepPunctuation, "boolean")
		case "case_insensitive":
			p.Decode(n, fm, &o.caseInsensitive, "boolean")
		case "choices":
			if p.Decode(n, fm, &o.choices, "string") {
				p.checkChoices(n, o.choices)
			}
		case "abs_tol":
			if p.Decode(n, fm, &o.absTol, "number") && o.absTol < 0 {
				p.errorf(n, field, "must be >= 0, got %s", fmtFloat(o.absTol))
			}
		case "rel_tol":
			if p.Decode(n, fm, &o.relTol, "number") && o.relTol < 0 {
				p.errorf(n, field, "must be >= 0, got %s", fmtFloat(o.relTol))
			}
		case "schema":
			if m.Raw[0] != '{' {
				p.errorf(n, field, "want an object (a JSON Schema), got %s", workload.Describe(m.Raw))
				continue
			}
			o.schema = m.Raw
		case "schema_file":
			if p.Decode(n, fm, &o.schemaFile, "string") && o.schemaFile == "" {
				p.errorf(n, field, "must not be empty")
			}
		case "metric":
			if p.Decode(n, fm, &o.metric, "string") && !slices.Contains(metrics, o.metric) {
				p.errorf(n, field, "unknown metric %q%s; want one of %s", o.metric, workload.DidYouMean(o.metric, metrics), strings.Join(metrics, ", "))
			}
		case "threshold":
			if p.Decode(n, fm, &o.threshold, "number") && !(o.threshold > 0 && o.threshold <= 1) {
				p.errorf(n, field, "must be in (0, 1], got %s", fmtFloat(o.threshold))
			}
		}
	}
	if name == "json_schema" {
		switch s, f := present["schema"], present["schema_file"]; {
		case s && f:
			p.errorf(n, "options.schema_file", "not allowed together with options.schema; set exactly one")
		case !s && !f && set:
			p.errorf(n, "options.schema", "required: set options.schema (an inline JSON Schema) or options.schema_file")
		case !s && !f:
			p.errorf(n, "options", "required for scorer json_schema: set options.schema (an inline JSON Schema) or options.schema_file")
		}
	}
	return o
}

// checkChoices checks the choices option: distinct upper-case letters.
func (p *parser) checkChoices(n int, choices string) {
	if choices == "" {
		p.errorf(n, "options.choices", "must not be empty; want the valid letters, e.g. %q", defaultChoices)
		return
	}
	seen := map[rune]bool{}
	for _, r := range choices {
		if r > unicode.MaxASCII || !unicode.IsUpper(r) {
			p.errorf(n, "options.choices", "must be upper-case letters A-Z, got %q", choices)
			return
		}
		if seen[r] {
			p.errorf(n, "options.choices", "letter %c appears more than once in %q", r, choices)
			return
		}
		seen[r] = true
	}
}
