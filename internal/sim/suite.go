package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// The simulator reads eval suites on its own: it answers their items from
// each item's own expected value through this code, never through
// perfgate's scorers (internal/quality), so that a scorer bug cannot make
// the simulator agree with it. It reads only what answering needs (the
// prompt, the scorer's name, the expected value, the ideal and the options
// that shape an answer) and trusts perfgate's loader for the rest: a suite
// perfgate refuses is never sent to it.

// AnswerSuite is an eval suite as the simulator answers it.
type AnswerSuite struct {
	// Name is the file's base name without its extension, as perfgate
	// names a suite; Path is where it was read from.
	Name, Path string
	Items      []AnswerItem
}

// AnswerItem is one item: its prompt text as a request carries it, and
// the right and the wrong answer the simulator gives.
type AnswerItem struct {
	ID   string
	Line int
	// Prompt is the text decodeRequest computes for the item's request:
	// its messages' contents joined by newlines, or its prompt.
	Prompt string
	// Scorer names the item's scorer, Key what identifies its expected
	// answers (scorer, expected value, ideal and options, compact JSON):
	// two items with one prompt must have the same Key.
	Scorer, Key string
	// Right and Wrong are the answers' texts. Call is a tool_call item's
	// right answer, its first expected call; Right is then its JSON.
	Right, Wrong string
	Call         *toolCall
}

// maxSuiteBytes bounds a suite file, and maxSuiteLine one of its lines.
const (
	maxSuiteBytes = 64 << 20
	maxSuiteLine  = 16 << 20
)

// LoadAnswers reads the eval suites of --answers, one per path, reporting
// every suite's problems.
func LoadAnswers(paths []string) ([]*AnswerSuite, error) {
	var suites []*AnswerSuite
	var errs []error
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := ReadAnswers(f, p)
		f.Close()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		suites = append(suites, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return suites, nil
}

// ReadAnswers reads one suite from r; path names it (its base name without
// the extension is the suite's name) and its errors ("path:line: ...").
func ReadAnswers(r io.Reader, path string) (*AnswerSuite, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	s := &AnswerSuite{Name: name, Path: path}
	sc := bufio.NewScanner(io.LimitReader(r, maxSuiteBytes+1))
	sc.Buffer(nil, maxSuiteLine)
	var errs []error
	n, read := 0, 0
	for sc.Scan() {
		n++
		read += len(sc.Bytes()) + 1
		if read > maxSuiteBytes {
			return nil, fmt.Errorf("%s: more than %d MiB: not an eval suite perfgate sim reads", path, maxSuiteBytes>>20)
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		it, err := answerItem(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, n, err))
			continue
		}
		it.Line = n
		s.Items = append(s.Items, it)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(s.Items) == 0 {
		return nil, fmt.Errorf("%s: no items", path)
	}
	return s, nil
}

// suiteLine is what the simulator reads of an item's line.
type suiteLine struct {
	ID       string            `json:"id"`
	Messages []json.RawMessage `json:"messages"`
	Prompt   *string           `json:"prompt"`
	Scorer   string            `json:"scorer"`
	Expected json.RawMessage   `json:"expected"`
	Ideal    string            `json:"ideal"`
	Options  struct {
		Choices         string   `json:"choices"`
		AbsTol          *float64 `json:"abs_tol"`
		RelTol          *float64 `json:"rel_tol"`
		CaseInsensitive bool     `json:"case_insensitive"`
		CaseSensitive   bool     `json:"case_sensitive"`
	} `json:"options"`
}

// answerItem reads one item and makes its answers.
func answerItem(line []byte) (AnswerItem, error) {
	var l suiteLine
	if err := json.Unmarshal(line, &l); err != nil {
		return AnswerItem{}, fmt.Errorf("not an eval item: %w", err)
	}
	if l.ID == "" || l.Scorer == "" {
		return AnswerItem{}, errors.New("an eval item needs an id and a scorer")
	}
	it := AnswerItem{ID: l.ID, Scorer: l.Scorer}
	var err error
	if it.Prompt, err = linePrompt(l); err != nil {
		return AnswerItem{}, err
	}
	var key bytes.Buffer
	key.WriteString(l.Scorer + "\x00")
	_ = json.Compact(&key, l.Expected) // empty when absent
	key.WriteString("\x00" + l.Ideal + "\x00")
	opts, _ := json.Marshal(l.Options)
	key.Write(opts)
	it.Key = key.String()
	if it.Right, it.Call, err = rightAnswer(l); err != nil {
		return AnswerItem{}, fmt.Errorf("item %q: no right answer to serve: %w", l.ID, err)
	}
	it.Wrong = wrongAnswer(l)
	return it, nil
}

// linePrompt is the prompt text of an item's request as decodeRequest
// computes it.
func linePrompt(l suiteLine) (string, error) {
	if len(l.Messages) == 0 {
		if l.Prompt == nil {
			return "", errors.New("an eval item needs messages or a prompt")
		}
		return *l.Prompt, nil
	}
	parts := make([]string, 0, len(l.Messages))
	for i, raw := range l.Messages {
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return "", fmt.Errorf("messages[%d]: %w", i, err)
		}
		c, err := messageText(m.Content)
		if err != nil {
			return "", fmt.Errorf("messages[%d].content: %w", i, err)
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "\n"), nil
}

// expectedValues are an item's expected answers as written: a string as it
// is, a number in its written form, an array element by element.
func expectedValues(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	one := func(r json.RawMessage) string {
		var s string
		if json.Unmarshal(r, &s) == nil {
			return s
		}
		return string(bytes.TrimSpace(r))
	}
	if raw[0] != '[' {
		return []string{one(raw)}
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return nil
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = one(e)
	}
	return out
}

// rightAnswer is a whole response an item's scorer should pass: its ideal
// when it has one, else one made from its expected value the way a model
// that knows the answer would put it.
func rightAnswer(l suiteLine) (string, *toolCall, error) {
	if l.Scorer == "tool_call" {
		return rightCall(l.Expected)
	}
	if l.Ideal != "" {
		return l.Ideal, nil, nil
	}
	exp := expectedValues(l.Expected)
	switch {
	case l.Scorer == "json_valid":
		return "{}", nil, nil
	case l.Scorer == "json_schema":
		if len(bytes.TrimSpace(l.Expected)) == 0 {
			return "", nil, errors.New("a json_schema item without an expected value needs an ideal")
		}
		var b bytes.Buffer
		if err := json.Compact(&b, l.Expected); err != nil {
			return "", nil, err
		}
		return "```json\n" + b.String() + "\n```", nil, nil
	case len(exp) == 0:
		return "", nil, fmt.Errorf("scorer %s has no expected value to answer with: set ideal", l.Scorer)
	case l.Scorer == "regex":
		return "", nil, errors.New("a regex item needs an ideal, a whole right response")
	case l.Scorer == "choice":
		return "The answer is (" + strings.ToUpper(strings.TrimSpace(exp[0])) + ").", nil, nil
	case l.Scorer == "numeric":
		return "The answer is " + strings.TrimSpace(exp[0]) + ".", nil, nil
	}
	return exp[0], nil, nil // exact, contains, reference
}

// rightCall is a tool_call item's right answer: its first expected call,
// and the JSON of every expected call.
func rightCall(expected json.RawMessage) (string, *toolCall, error) {
	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var calls []call
	raw := bytes.TrimSpace(expected)
	if len(raw) > 0 && raw[0] == '{' {
		var c call
		if err := json.Unmarshal(raw, &c); err != nil {
			return "", nil, err
		}
		calls = []call{c}
	} else if err := json.Unmarshal(raw, &calls); err != nil {
		return "", nil, fmt.Errorf("expected: want a call or an array of calls: %w", err)
	}
	if len(calls) == 0 || calls[0].Name == "" {
		return "", nil, errors.New("expected: want a call with a name")
	}
	if len(calls) > 1 {
		return "", nil, fmt.Errorf("expects %d calls in parallel; perfgate sim answers with one call", len(calls))
	}
	text, err := json.Marshal(calls)
	if err != nil {
		return "", nil, err
	}
	var args bytes.Buffer
	if err := json.Compact(&args, calls[0].Arguments); err != nil {
		return "", nil, fmt.Errorf("expected: arguments: %w", err)
	}
	return string(text), &toolCall{name: calls[0].Name, args: args.String()}, nil
}

// refusals are the texts of a wrong answer to a free-text item, tried in
// order: the first that holds none of the expected answers is given.
var refusals = []string{"I do not know.", "No idea, sorry.", "Cannot say."}

// wrongAnswer is a response an item's scorer should fail: for numeric a
// number beyond the tolerance, for choice another letter, for JSON and
// tool calls text that is neither, otherwise a refusal that holds none of
// the expected answers (or matches none of a regex's patterns).
func wrongAnswer(l suiteLine) string {
	exp := expectedValues(l.Expected)
	switch l.Scorer {
	case "json_valid", "json_schema", "tool_call":
		return "I cannot produce that."
	case "numeric":
		// Far beyond every expected number and its tolerance.
		m, ok := 0.0, false
		for _, e := range exp {
			if v, err := strconv.ParseFloat(strings.TrimSpace(e), 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
				m, ok = math.Max(m, math.Abs(v)), true
			}
		}
		if ok {
			abs, rel := 0.0, 0.0
			if l.Options.AbsTol != nil {
				abs = *l.Options.AbsTol
			}
			if l.Options.RelTol != nil {
				rel = *l.Options.RelTol
			}
			wrong := (m + abs + 1) * (2 + 4*rel)
			return "The answer is " + strconv.FormatFloat(wrong, 'f', -1, 64) + "."
		}
	case "choice":
		choices := l.Options.Choices
		if choices == "" {
			choices = "ABCD"
		}
		for _, c := range choices {
			if !strings.ContainsFunc(strings.Join(exp, ""), func(r rune) bool { return strings.EqualFold(string(r), string(c)) }) {
				return "The answer is (" + string(c) + ")."
			}
		}
	case "regex":
		var res []*regexp.Regexp
		for _, e := range exp {
			pat := e
			if l.Options.CaseInsensitive {
				pat = "(?i)" + pat
			}
			if re, err := regexp.Compile(pat); err == nil {
				res = append(res, re)
			}
		}
		for _, r := range refusals {
			if !matchesAny(res, r) {
				return r
			}
		}
	}
	for _, r := range refusals {
		if !holdsAny(r, exp) {
			return r
		}
	}
	return refusals[len(refusals)-1]
}

// matchesAny reports whether any of res matches s.
func matchesAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// holdsAny reports whether text holds any of the expected answers, case
// and punctuation aside.
func holdsAny(text string, expected []string) bool {
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127)
		}), " ")
	}
	t := " " + norm(text) + " "
	for _, e := range expected {
		if n := norm(e); n != "" && strings.Contains(t, " "+n+" ") {
			return true
		}
	}
	return false
}
