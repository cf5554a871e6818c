package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"

	"github.com/perfgate/perfgate/internal/safeio"
)

// LoadFile reads, decodes, defaults and validates the config file at path. On
// bad input the error is *Errors, listing every problem found; the returned
// config's Path is path and its Dir the absolute directory of the file.
//
// (It is not called Load: that name is the load-shape type, Scenario.Load.)
//
// Only a regular file is read (a FIFO or a device such as /dev/zero is
// refused at once, naming the path), and only up to MaxFileBytes.
func LoadFile(path string) (*Config, error) {
	data, err := safeio.ReadFile(path, MaxFileBytes)
	var tooLarge *safeio.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &Errors{Problems: []Problem{tooLargeProblem(path)}}
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes, defaults and validates a config file's contents. path names
// the file in problems, and its directory is the one relative paths (workload
// files) resolve against. On bad input the error is *Errors.
//
// It works in three passes so that one run reports as much as it can:
//
//  1. parse: a YAML syntax error stops here (one problem, with its position);
//  2. shape: the parsed document is checked against the Config struct, field
//     by field: unknown keys, values of the wrong kind and durations that are
//     not Go duration strings are all reported, each with its path and line;
//  3. defaults are applied to the keys the file leaves out, then every rule is
//     checked (validate.go), each problem with its path and line.
func Parse(data []byte, path string) (*Config, error) {
	dir, err := filepath.Abs(filepath.Dir(cmp.Or(path, ".")))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	// A byte-order mark is read as one: it marks the file as UTF-8 and is
	// no part of the first key.
	data = bytes.TrimPrefix(data, utf8BOM)
	src, body, probs := parseSource(data, path)
	if len(probs) > 0 {
		return nil, src.errors(probs)
	}
	c := &Config{}
	if body != nil {
		if err := decode(body, c); err != nil {
			return nil, src.errors([]Problem{src.decodeProblem(err)})
		}
	}
	c.Path, c.Dir, c.src = path, dir, src
	applyDefaults(c, src.isSet)
	probs, c.Warnings = validate(c, src)
	if len(probs) > 0 {
		return nil, src.errors(probs)
	}
	return c, nil
}

// decode runs goccy/go-yaml over a document whose shape has been checked.
// Strictness is kept as a second line of defence: the shape pass should have
// reported anything these options would reject.
func decode(body ast.Node, c *Config) (err error) {
	defer func() {
		// A bug of the YAML library must not crash the CLI: a panic
		// becomes a problem like any other.
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml decoder failed: %v", r)
		}
	}()
	return yaml.NodeToValue(body, c,
		yaml.DisallowUnknownField(),
		yaml.AllowFieldPrefixes(extensionPrefix), // the shape pass allows them at the top level only
		yaml.CustomUnmarshaler(unmarshalDuration),
		yaml.CustomUnmarshaler(unmarshalRepetitions),
		yaml.CustomUnmarshaler(unmarshalLoad),
	)
}

// unmarshalDuration decodes a duration the way the shape pass accepts it: a Go
// duration string ("500ms", "2m"), or a bare 0. goccy alone would take any
// string time.ParseDuration takes, but reports a bad one without a position,
// and rejects a bare 0.
func unmarshalDuration(d *time.Duration, b []byte) error {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*d = 0
		return nil
	case string:
		x, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		*d = x
		return nil
	case uint64:
		if v == 0 {
			*d = 0
			return nil
		}
	case int64:
		if v == 0 {
			*d = 0
			return nil
		}
	}
	return fmt.Errorf("want a duration like 500ms or 2m, got %s", strings.TrimSpace(string(b)))
}

// unmarshalRepetitions decodes `repetitions: 5` as {5, 5} and
// `repetitions: {min: 5, max: 15}` as it is.
func unmarshalRepetitions(r *Repetitions, b []byte) error {
	var n int
	if err := yaml.Unmarshal(b, &n); err == nil {
		*r = Repetitions{Min: n, Max: n}
		return nil
	}
	var m struct {
		Min int `yaml:"min"`
		Max int `yaml:"max"`
	}
	if err := yaml.UnmarshalWithOptions(b, &m, yaml.DisallowUnknownField()); err != nil {
		return err
	}
	*r = Repetitions(m)
	return nil
}

// unmarshalLoad decodes a load shape. A list given to rate or concurrency
// (the fields tagged perfgate:"sweepable") makes a sweep: its values go to
// Sweep, the field's name to SweepParam, and the field itself stays 0. A load
// without a list decodes as it always has.
func unmarshalLoad(l *Load, b []byte) error {
	type plain Load // the same fields, without this unmarshaler
	shadow := reflect.New(sweepShadow)
	if err := yaml.UnmarshalWithOptions(b, shadow.Interface(), yaml.DisallowUnknownField()); err != nil {
		return err
	}
	sv := shadow.Elem()
	swept := false
	for _, i := range sweepableFields {
		_, isList := sv.Field(i).Interface().([]any)
		swept = swept || isList
	}
	if !swept {
		return yaml.UnmarshalWithOptions(b, (*plain)(l), yaml.DisallowUnknownField())
	}
	var out Load
	ov := reflect.ValueOf(&out).Elem()
	for i := range ov.NumField() {
		f := loadType.Field(i)
		if !slices.Contains(sweepableFields, i) {
			if tag := f.Tag.Get("yaml"); tag != "" && tag != "-" {
				ov.Field(i).Set(sv.Field(i))
			}
			continue
		}
		items, isList := sv.Field(i).Interface().([]any)
		if !isList {
			if x := sv.Field(i).Interface(); x != nil {
				v, err := sweepValue(x)
				if err != nil {
					return fmt.Errorf("load.%s: %w", yamlName(f), err)
				}
				ov.Field(i).Set(reflect.ValueOf(v).Convert(f.Type))
			}
			continue
		}
		if out.SweepParam != "" {
			continue // both listed: validation refuses the one the type does not read
		}
		out.SweepParam = yamlName(f)
		out.Sweep = make([]float64, len(items))
		for j, x := range items {
			v, err := sweepValue(x)
			if err != nil {
				return fmt.Errorf("load.%s[%d]: %w", out.SweepParam, j, err)
			}
			out.Sweep[j] = v
		}
	}
	stepRates(&out)
	*l = out
	return nil
}

// stepRates makes a step load's list of rates its Steps: for a step load,
// `rate: [4, 16]` is the rates of its steps, not a sweep.
func stepRates(l *Load) {
	if l.Type == LoadStep && l.SweepParam == SweepRate {
		l.Steps, l.Sweep, l.SweepParam = l.Sweep, nil, ""
	}
}

var (
	loadType = reflect.TypeFor[Load]()
	// sweepableFields are the indexes of Load's fields tagged
	// perfgate:"sweepable", and sweepShadow is Load with those fields of
	// type any, so that a list or a number decodes into them.
	sweepableFields, sweepShadow = shadowLoad()
)

func shadowLoad() ([]int, reflect.Type) {
	var idx []int
	fields := make([]reflect.StructField, loadType.NumField())
	for i := range loadType.NumField() {
		fields[i] = loadType.Field(i)
		if fields[i].Tag.Get("perfgate") == "sweepable" {
			idx = append(idx, i)
			fields[i].Type = reflect.TypeFor[any]()
		}
	}
	return idx, reflect.StructOf(fields)
}

// yamlName is a field's key in YAML.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// sweepValue reads one number of a sweep as the YAML library gives it: an
// integer, a float, or (for 1e3, which YAML 1.2 reads as a number and the
// library as a string) a string the shape pass has checked.
func sweepValue(x any) (float64, error) {
	switch v := x.(type) {
	case int64:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	case float64:
		return v, nil
	case string:
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err == nil && !math.IsInf(f, 0) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("want a number, got %v", x)
}

// source is what the parsed file says about where each field is.
type source struct {
	file string
	// at maps a field path to the position of its key (or, for a list item,
	// of the item).
	at map[string]pos
	// val maps the path of a scalar value to the value's position.
	val map[string]pos
	// set holds the paths the file gives a non-null value.
	set map[string]bool
	// lines maps a line to the deepest path that starts on it, to place
	// errors that carry only a position.
	lines map[int]string
	// parsed is true when the config came from a file; a Config built in
	// code has no source, and a non-zero value counts as set.
	parsed bool
	// root is the position of the document's first key, for problems with
	// the file as a whole.
	root pos
}

type pos struct{ line, col int }

func newSource(file string) *source {
	return &source{file: file, at: map[string]pos{}, val: map[string]pos{}, set: map[string]bool{}, lines: map[int]string{}}
}

func (s *source) isSet(path string) bool { return s.set[path] }

func (s *source) record(path string, p pos) {
	s.at[path] = p
	if old, ok := s.lines[p.line]; !ok || len(path) > len(old) {
		s.lines[p.line] = path
	}
}

// problem makes a Problem at path, placed at the path's position or, when the
// file does not have that key (a required key left out), its nearest parent's.
func (s *source) problem(path, format string, args ...any) Problem {
	p := Problem{File: s.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if at, ok := s.val[path]; ok {
		p.Line, p.Column = at.line, at.col
		return p
	}
	for q := path; ; q = parentPath(q) {
		if at, ok := s.at[q]; ok {
			p.Line, p.Column = at.line, at.col
			break
		}
		if q == "" {
			p.Line, p.Column = s.root.line, s.root.col
			break
		}
	}
	return p
}

// errors makes the *Errors of a parse: the problems in file order, the
// first maxProblems of them and a count of the rest.
func (s *source) errors(probs []Problem) *Errors {
	sortProblems(probs)
	if len(probs) > maxProblems {
		more := len(probs) - maxProblems
		probs = append(probs[:maxProblems:maxProblems], Problem{File: s.file,
			Msg: fmt.Sprintf("... and %d more problems", more)})
	}
	return &Errors{Problems: probs}
}

// decodeProblem turns an error of the YAML library into a Problem, placed by
// the token it carries.
func (s *source) decodeProblem(err error) Problem {
	p := Problem{File: s.file, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		p.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			p.Line, p.Column = tk.Position.Line, tk.Position.Column
			p.Path = s.lines[p.Line]
		}
	}
	if p.Line == 0 {
		// An error without a position is about the document: place it at
		// its start, so that every problem has a line.
		p.Line, p.Column = s.root.line, s.root.col
	}
	if goSyntax.MatchString(p.Msg) {
		// The shape pass should have caught it; say what is wrong in the
		// user's terms rather than in Go's.
		p.Msg = "this value cannot be read as the field's kind of value"
	}
	return p
}

// goSyntax matches the YAML library's messages that speak of Go types.
var goSyntax = regexp.MustCompile(`Go (struct field|value)|of type |cannot unmarshal|reflect|%!`)

// parentPath is the path of the field that holds path:
// scenarios[1].load → scenarios[1] → scenarios → "".
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// parseSource parses data and checks its shape against Config. It returns the
// body of the one document (nil for an empty file) and every problem found.
func parseSource(data []byte, file string) (src *source, body ast.Node, probs []Problem) {
	src = newSource(file)
	src.parsed = true
	defer func() {
		if r := recover(); r != nil {
			body = nil
			probs = []Problem{{File: file, Msg: fmt.Sprintf("yaml parser failed: %v", r)}}
		}
	}()
	if probs := checkBytes(data, file); len(probs) > 0 {
		return src, nil, probs
	}
	tokens := lexer.Tokenize(string(data))
	if p, ok := checkTokens(tokens); !ok {
		p.File = file
		return src, nil, []Problem{p}
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		p := src.decodeProblem(err)
		p.Msg = "invalid YAML: " + p.Msg
		return src, nil, []Problem{p}
	}
	var docs []ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	if len(docs) == 0 {
		return src, nil, nil
	}
	if len(docs) > 1 {
		at := nodePos(docs[1])
		return src, nil, []Problem{{File: file, Line: at.line, Column: at.col,
			Msg: fmt.Sprintf("want one YAML document, found %d (remove the --- separator)", len(docs))}}
	}
	body = docs[0]
	src.root = nodePos(body)
	sh := newShape(src, body)
	sh.walk(body, configType, "", src.root)
	return src, body, sh.probs
}

// nodePos is where a node starts: for a block mapping, its first key (goccy
// gives a mapping the position of its first ':').
func nodePos(n ast.Node) pos {
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return tokenPos(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return tokenPos(m.Key)
	}
	return tokenPos(n)
}

func tokenPos(n ast.Node) pos {
	if n == nil {
		return pos{}
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// WarmupLoad is the load a warm-up runs at: a step load's first step, as a
// gamma load of its burstiness (1 is Poisson), since steady state is
// reached before the spike; any other load as it is.
func (l Load) WarmupLoad() Load {
	if l.Type != LoadStep || len(l.Steps) == 0 {
		return l
	}
	w := l
	w.Type, w.Rate, w.Steps, w.At, w.RecoveryWindow = LoadGamma, l.Steps[0], nil, nil, 0
	return w
}

// OfferedRate is the mean rate an open loop offers over a repetition of d:
// its rate, or a step load's rates weighted by how long each holds within
// d (the first alone when d is 0). 0 for a closed loop or a trace.
func (l Load) OfferedRate(d time.Duration) float64 {
	if l.Type != LoadStep {
		return l.Rate
	}
	if len(l.Steps) == 0 {
		return 0
	}
	if d <= 0 || len(l.At) != len(l.Steps)-1 {
		return l.Steps[0]
	}
	var sum float64
	from := time.Duration(0)
	for i, r := range l.Steps {
		to := d
		if i < len(l.At) {
			to = min(l.At[i], d)
		}
		if to > from {
			sum += r * (to - from).Seconds()
			from = to
		}
	}
	return sum / d.Seconds()
}
