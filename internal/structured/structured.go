package structured

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/internal/quality"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// spec is what one request asks of its answer, read once per distinct
// response_format, tools and tool_choice.
type spec struct {
	// format is "json_object" or "json_schema" when the text must be JSON;
	// schema its schema, if any.
	format string
	schema *quality.Schema
	// tools are the declared functions' parameter schemas (nil: any
	// object); callMust says the answer must call one, named the one it
	// must call ("" for any).
	tools    map[string]*quality.Schema
	callMust bool
	named    string
}

func (s *spec) structured() bool { return s.format != "" || s.tools != nil }

// Checker checks answers. It compiles each distinct request shape once and
// is safe for concurrent use.
type Checker struct {
	mu    sync.Mutex
	specs map[string]*spec
	errs  map[string]error
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	return &Checker{specs: map[string]*spec{}, errs: map[string]error{}}
}

// Validate checks every structured request of a workload once, before any
// is sent: a schema perfgate cannot compile, an unknown response_format
// type or a tool_choice naming an undeclared function is the workload's
// error, with the request's id and the field.
func Validate(reqs []workload.Request) error {
	c := NewChecker()
	for i := range reqs {
		if _, err := c.spec(&reqs[i]); err != nil {
			return fmt.Errorf("request %s: %w", reqs[i].ID, err)
		}
	}
	return nil
}

// Check checks one successful answer to req: its text, its tool calls and
// its finish reason. structured says whether req asked for structured
// output; problem says what is wrong with the answer, in one line, or is
// empty.
func (c *Checker) Check(req *workload.Request, text string, calls []result.ToolCall, finish string) (structured bool, problem string) {
	if isNull(req.ResponseFormat) && isNull(req.Tools) {
		return false, "" // most requests: no lock, no lookup
	}
	s, err := c.spec(req)
	if err != nil {
		return true, "the request cannot be checked: " + err.Error()
	}
	if !s.structured() {
		return false, ""
	}
	problem = s.check(text, calls)
	if problem != "" && finish == "length" {
		problem = "cut by max_tokens (finish_reason length): " + problem
	}
	return true, problem
}

func (c *Checker) spec(req *workload.Request) (*spec, error) {
	key := string(req.ResponseFormat) + "\x00" + string(req.Tools) + "\x00" + string(req.ToolChoice)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.specs[key]; ok {
		return s, nil
	}
	if err, ok := c.errs[key]; ok {
		return nil, err
	}
	s, err := parse(req)
	if err != nil {
		c.errs[key] = err
		return nil, err
	}
	c.specs[key] = s
	return s, nil
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// parse reads what req asks of its answer.
func parse(req *workload.Request) (*spec, error) {
	s := &spec{}
	if !isNull(req.ResponseFormat) {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
			Schema json.RawMessage `json:"schema"` // llama.cpp's json_object with a schema beside it
		}
		if err := json.Unmarshal(req.ResponseFormat, &rf); err != nil {
			return nil, fmt.Errorf("response_format: %w", err)
		}
		var raw json.RawMessage
		switch rf.Type {
		case "text":
		case "json_object":
			s.format, raw = rf.Type, rf.Schema
		case "json_schema":
			s.format = rf.Type
			if rf.JSONSchema != nil {
				raw = rf.JSONSchema.Schema
			}
		default:
			return nil, fmt.Errorf("response_format.type: want text, json_object or json_schema (the ones perfgate checks), got %q", rf.Type)
		}
		if !isNull(raw) {
			sch, err := quality.CompileSchema(raw)
			if err != nil {
				return nil, fmt.Errorf("response_format schema: %w", err)
			}
			s.schema = sch
		}
	}
	if isNull(req.Tools) {
		return s, nil
	}
	choice := "auto"
	if !isNull(req.ToolChoice) {
		var str string
		if json.Unmarshal(req.ToolChoice, &str) == nil {
			choice = str
		} else {
			var named struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(req.ToolChoice, &named); err != nil || named.Function.Name == "" {
				return nil, fmt.Errorf("tool_choice: want none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}")
			}
			choice, s.named = "named", named.Function.Name
		}
	}
	switch choice {
	case "none":
		return s, nil
	case "auto":
	case "required", "named":
		s.callMust = true
	default:
		return nil, fmt.Errorf("tool_choice: want none, auto, required or a named function, got %q", choice)
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(req.Tools, &tools); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	if len(tools) == 0 {
		return s, nil
	}
	s.tools = map[string]*quality.Schema{}
	for i, t := range tools {
		if t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d].function.name: required", i)
		}
		var sch *quality.Schema
		if !isNull(t.Function.Parameters) {
			var err error
			if sch, err = quality.CompileSchema(t.Function.Parameters); err != nil {
				return nil, fmt.Errorf("tools[%d].function.parameters: %w", i, err)
			}
		}
		s.tools[t.Function.Name] = sch
	}
	if _, ok := s.tools[s.named]; s.named != "" && !ok {
		return nil, fmt.Errorf("tool_choice: function %q is not one of the request's tools", s.named)
	}
	return s, nil
}

// check says what is wrong with an answer of text and calls, or "".
func (s *spec) check(text string, calls []result.ToolCall) string {
	if s.tools != nil && len(calls) > 0 {
		for _, c := range calls {
			if p := s.checkCall(c); p != "" {
				return p
			}
		}
		return ""
	}
	if s.callMust {
		if s.named != "" {
			return fmt.Sprintf("no tool call (tool_choice names %s)", quote(s.named))
		}
		return "no tool call (tool_choice required)"
	}
	if s.format == "" {
		return "" // tools the answer was free not to call, answered in text
	}
	v, problem := quality.ParseJSON(text)
	if problem != "" {
		return problem
	}
	if _, ok := v.(map[string]any); !ok && s.format == "json_object" {
		return "not a JSON object"
	}
	if s.schema != nil {
		return s.schema.Check(v)
	}
	return ""
}

// checkCall says what is wrong with one tool call, or "".
func (s *spec) checkCall(c result.ToolCall) string {
	sch, ok := s.tools[c.Name]
	switch {
	case !ok:
		return fmt.Sprintf("a call to %s, which the request does not declare", quote(c.Name))
	case s.named != "" && c.Name != s.named:
		return fmt.Sprintf("a call to %s where tool_choice names %s", quote(c.Name), quote(s.named))
	}
	v, problem := quality.ParseJSON(c.Arguments)
	if problem != "" {
		return fmt.Sprintf("%s's arguments: %s", quote(c.Name), problem)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Sprintf("%s's arguments: not a JSON object", quote(c.Name))
	}
	if sch != nil {
		if p := sch.Check(v); p != "" {
			return fmt.Sprintf("%s's arguments: %s", quote(c.Name), p)
		}
	}
	return ""
}

// quote quotes a server-given name, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}
