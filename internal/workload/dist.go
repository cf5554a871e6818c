package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/safeio"
)

// Distribution types.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

var distTypes = []string{DistFixed, DistUniform, DistNormal, DistLognormal, DistEmpirical}

// distParams lists, per type, the parameters that apply, in the order that
// ParseDist's messages and Dist.String give them.
var distParams = map[string][]string{
	DistFixed:     {"value"},
	DistUniform:   {"min", "max"},
	DistNormal:    {"mean", "stddev", "min", "max"},
	DistLognormal: {"mean", "stddev", "min", "max"},
	DistEmpirical: {"file", "min", "max"},
}

// maxLength caps a sampled length (a lognormal tail could otherwise
// overflow): a length is at most what a request may ask for.
const maxLength = MaxLength

// Problem is one thing wrong with a SynthSpec. Field is relative to the spec
// ("input.stddev"); the config package prefixes its own path.
type Problem struct {
	Field string
	Msg   string
}

// String gives "field: message".
func (p Problem) String() string {
	if p.Field == "" {
		return p.Msg
	}
	return p.Field + ": " + p.Msg
}

// Problems validates the spec without touching the file system (an empirical
// file is read by Synthesize). It returns nil when the spec is valid.
func (s SynthSpec) Problems() []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if s.Requests <= 0 || s.Requests > MaxSynthRequests {
		add("requests", "must be from 1 to %d, got %d", MaxSynthRequests, s.Requests)
	}
	ps = append(ps, s.Input.problems("input.")...)
	ps = append(ps, s.Output.problems("output.")...)
	if pr := s.Prefix; pr != nil {
		if pr.Count <= 0 || pr.Count > MaxPrefixes {
			add("prefix.count", "must be from 1 to %d, got %d", MaxPrefixes, pr.Count)
		}
		if pr.Length <= 0 || pr.Length > MaxLength {
			add("prefix.length", "must be from 1 to %d, got %d", MaxLength, pr.Length)
		}
		if !(pr.Rate > 0 && pr.Rate <= 1) {
			add("prefix.rate", "must be in (0, 1], got %s", fmtFloat(pr.Rate))
		}
	}
	switch s.API {
	case "", "chat", "completions":
	default:
		add("api", "must be chat or completions, got %q", s.API)
	}
	seen := map[string]bool{}
	for i, m := range s.Models {
		f := fmt.Sprintf("models[%d]", i)
		switch {
		case m.Name == "":
			add(f+".name", "must not be empty")
		case len(m.Name) > MaxModelName:
			add(f+".name", "%d bytes, more than the %d a model name may have", len(m.Name), MaxModelName)
		case seen[m.Name]:
			add(f+".name", "%q is listed twice", m.Name)
		}
		seen[m.Name] = true
		if !(m.Weight > 0) || math.IsInf(m.Weight, 0) {
			add(f+".weight", "must be a number > 0, got %s", fmtFloat(m.Weight))
		}
	}
	if len(s.Models) > MaxSynthModels {
		add("models", "%d models, more than the %d perfgate mixes", len(s.Models), MaxSynthModels)
	}
	return ps
}

// problems validates d; prefix is prepended to field names ("input.").
func (d Dist) problems(prefix string) []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: prefix + field, Msg: fmt.Sprintf(format, args...)})
	}
	params, ok := distParams[d.Type]
	if !ok {
		if d.Type == "" {
			add("type", "required; want one of %s", strings.Join(distTypes, ", "))
		} else {
			add("type", "unknown distribution %q; want one of %s", d.Type, strings.Join(distTypes, ", "))
		}
		return ps
	}
	// A parameter set that the type does not use is most likely a mistake.
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"value", d.Value != 0}, {"min", d.Min != 0}, {"max", d.Max != 0},
		{"mean", d.Mean != 0}, {"stddev", d.Stddev != 0}, {"file", d.File != ""},
	} {
		if f.set && !slices.Contains(params, f.name) {
			add(f.name, "not used by %s (it takes %s)", d.Type, strings.Join(params, ", "))
		}
	}
	switch d.Type {
	case DistFixed:
		if d.Value <= 0 || d.Value > MaxLength {
			add("value", "must be from 1 to %d, got %d", MaxLength, d.Value)
		}
	case DistUniform:
		if d.Max <= 0 {
			add("max", "must be > 0, got %d", d.Max)
		}
	case DistNormal, DistLognormal:
		if !(d.Mean > 0 && d.Mean <= MaxLength) {
			add("mean", "must be > 0 and at most %d, got %s", MaxLength, fmtFloat(d.Mean))
		}
		if !(d.Stddev >= 0 && d.Stddev <= MaxLength) {
			add("stddev", "must be from 0 to %d, got %s", MaxLength, fmtFloat(d.Stddev))
		}
	case DistEmpirical:
		if d.File == "" {
			add("file", "required for empirical (a file of one length a line)")
		}
	}
	if d.Type != DistFixed {
		if d.Min < 0 || d.Min > MaxLength {
			add("min", "must be from 0 to %d, got %d", MaxLength, d.Min)
		}
		if d.Max < 0 || d.Max > MaxLength {
			add("max", "must be from 0 to %d, got %d", MaxLength, d.Max)
		}
		if d.Min > 0 && d.Max > 0 && d.Min > d.Max {
			add("min", "must be <= max (%d), got %d", d.Max, d.Min)
		}
	}
	return ps
}

// String gives d in the syntax ParseDist reads, e.g. "normal:mean=200,stddev=50".
func (d Dist) String() string {
	if d.Type == DistFixed {
		return DistFixed + ":" + strconv.Itoa(d.Value)
	}
	var parts []string
	for _, p := range distParams[d.Type] {
		switch p {
		case "min":
			if d.Min != 0 || d.Type == DistUniform {
				parts = append(parts, "min="+strconv.Itoa(d.Min))
			}
		case "max":
			if d.Max != 0 || d.Type == DistUniform {
				parts = append(parts, "max="+strconv.Itoa(d.Max))
			}
		case "mean":
			parts = append(parts, "mean="+fmtFloat(d.Mean))
		case "stddev":
			parts = append(parts, "stddev="+fmtFloat(d.Stddev))
		case "file":
			parts = append(parts, "file="+d.File)
		}
	}
	return d.Type + ":" + strings.Join(parts, ",")
}

// ParseDist reads the CLI syntax of a distribution, TYPE:PARAM=VALUE,...:
//
//	fixed:128                     (or fixed:value=128)
//	uniform:min=10,max=100        (inclusive)
//	normal:mean=200,stddev=50[,min=..][,max=..]
//	lognormal:mean=512,stddev=300,min=4,max=4096
//	empirical:file=lengths.txt[,min=..][,max=..]
//
// The result is validated as Problems would.
func ParseDist(s string) (Dist, error) {
	typ, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	typ = strings.TrimSpace(typ)
	params, ok := distParams[typ]
	if !ok {
		if typ == "" {
			return Dist{}, fmt.Errorf("distribution %q: want TYPE:PARAM=VALUE,... with TYPE one of %s", s, strings.Join(distTypes, ", "))
		}
		return Dist{}, fmt.Errorf("unknown distribution %q; want one of %s", typ, strings.Join(distTypes, ", "))
	}
	d := Dist{Type: typ}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return Dist{}, fmt.Errorf("%s: missing parameters; want %s", typ, strings.Join(params, ", "))
	}
	if typ == DistFixed && !strings.Contains(rest, "=") {
		rest = "value=" + rest
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return Dist{}, fmt.Errorf("%s: parameter %q: want NAME=VALUE", typ, strings.TrimSpace(part))
		}
		if !slices.Contains(params, k) {
			return Dist{}, fmt.Errorf("%s: unknown parameter %q; want %s", typ, k, strings.Join(params, ", "))
		}
		if seen[k] {
			return Dist{}, fmt.Errorf("%s: parameter %q given twice", typ, k)
		}
		seen[k] = true
		var err error
		switch k {
		case "value":
			d.Value, err = parseDistInt(v)
		case "min":
			d.Min, err = parseDistInt(v)
		case "max":
			d.Max, err = parseDistInt(v)
		case "mean":
			d.Mean, err = parseDistFloat(v)
		case "stddev":
			d.Stddev, err = parseDistFloat(v)
		case "file":
			if v == "" {
				err = errors.New("want a file name")
			}
			d.File = v
		}
		if err != nil {
			return Dist{}, fmt.Errorf("%s: %s: %w", typ, k, err)
		}
	}
	for _, p := range params {
		// min and max are optional clamps, except that uniform needs its max.
		optional := p == "min" || (p == "max" && typ != DistUniform)
		if !optional && !seen[p] {
			return Dist{}, fmt.Errorf("%s: missing parameter %q; want %s", typ, p, strings.Join(params, ", "))
		}
	}
	if ps := d.problems(""); len(ps) > 0 {
		return Dist{}, fmt.Errorf("%s: %s", typ, ps[0])
	}
	return d, nil
}

func parseDistInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q", v)
	}
	return n, nil
}

func parseDistFloat(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("want a number, got %q", v)
	}
	return f, nil
}

// Check reads what d draws from (an empirical lengths file, resolved
// against baseDir) and reports its problems, as Synthesize would: what
// `perfgate validate` calls so that a bad lengths file is found before a run.
func (d Dist) Check(baseDir string) error {
	_, err := d.sampler(baseDir)
	return err
}

// sampler returns a function drawing one length from d: an integer >= 1,
// clamped to [Min, Max] where those are set. baseDir resolves an empirical file.
func (d Dist) sampler(baseDir string) (func(*rand.Rand) int, error) {
	clamp := func(x float64) int {
		x = math.Round(x)
		if d.Min > 0 && x < float64(d.Min) {
			x = float64(d.Min)
		}
		if d.Max > 0 && x > float64(d.Max) {
			x = float64(d.Max)
		}
		// Written so that NaN ends at 1.
		if !(x >= 1) {
			x = 1
		}
		if x > maxLength {
			x = maxLength
		}
		return int(x)
	}
	switch d.Type {
	case DistFixed:
		return func(*rand.Rand) int { return clamp(float64(d.Value)) }, nil
	case DistUniform:
		lo := max(d.Min, 0)
		n := d.Max - lo + 1
		return func(r *rand.Rand) int { return clamp(float64(lo + r.IntN(n))) }, nil
	case DistNormal:
		return func(r *rand.Rand) int { return clamp(d.Mean + d.Stddev*r.NormFloat64()) }, nil
	case DistLognormal:
		// For X = exp(mu + sigma Z): E[X] = exp(mu + sigma²/2) and
		// CV² = exp(sigma²) - 1, so from the mean m and stddev s of the lengths:
		// sigma² = ln(1 + s²/m²), mu = ln(m) - sigma²/2.
		s2 := math.Log1p(d.Stddev * d.Stddev / (d.Mean * d.Mean))
		mu, sigma := math.Log(d.Mean)-s2/2, math.Sqrt(s2)
		return func(r *rand.Rand) int { return clamp(math.Exp(mu + sigma*r.NormFloat64())) }, nil
	case DistEmpirical:
		path := d.File
		if !filepath.IsAbs(path) && baseDir != "" {
			path = filepath.Join(baseDir, path)
		}
		lengths, err := readLengths(path)
		if err != nil {
			return nil, err
		}
		return func(r *rand.Rand) int { return clamp(float64(lengths[r.IntN(len(lengths))])) }, nil
	}
	return nil, fmt.Errorf("unknown distribution %q", d.Type)
}

// readLengths reads an empirical lengths file: one positive integer a line;
// blank lines and '#' comments (whole-line or trailing) are ignored. Errors are
// *LineError, every bad line reported. Only a regular file is read, up to
// MaxFileBytes.
func readLengths(path string) ([]int, error) {
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("read lengths: %w", err)
	}
	defer f.Close()
	var lengths []int
	p := &Problems{File: path}
	err = ReadLines(safeio.LimitReader(f, MaxFileBytes, path), path, func(n int, text []byte) {
		line, _, _ := strings.Cut(string(text), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			return
		}
		v, err := strconv.Atoi(line)
		if err != nil || v <= 0 || v > MaxLength {
			p.Errorf(n, "", "want a length from 1 to %d, got %q", MaxLength, clip(line, 32))
			return
		}
		lengths = append(lengths, v)
	})
	if le, ok := err.(*LineError); ok {
		p.Add(le)
	} else if err != nil {
		return nil, fmt.Errorf("read lengths: %w", err)
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if len(lengths) == 0 {
		return nil, &LineError{File: path, Msg: "no lengths"}
	}
	return lengths, nil
}

// clip cuts s to n bytes (on a character boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
