package traceimport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/workload"
)

// Formats lists the formats Import reads, as --from names them.
var Formats = []string{"openai", "sharegpt", "mooncake", "aiperf"}

// Options tune an import. The zero value is valid for every format, with
// the defaults noted.
type Options struct {
	// MaxTokens is the max_tokens of a request whose source gives none;
	// 0: such a request is an error.
	MaxTokens int
	// MaxOutput caps a max_tokens derived from a recorded reply (sharegpt);
	// 0: DefaultMaxOutput.
	MaxOutput int
	// MaxTokensFrom says where sharegpt's max_tokens comes from: "reply"
	// (the recorded answer's length in words, the default) or "fixed:N".
	MaxTokensFrom string
	// Sessions imports whole conversations as sessions (sharegpt), rather
	// than each conversation's first human turn.
	Sessions bool
	// ThinkMS, when set, is the think_ms of every later turn of a session
	// built from a source without timing (sharegpt --sessions).
	ThinkMS *float64
	// BlockSize is the words a Mooncake hash id stands for; 0:
	// DefaultBlockSize (Mooncake's 512).
	BlockSize int
	// Seed seeds the synthesised text of Mooncake blocks.
	Seed int64
	// ForceOutput sets min_tokens = max_tokens and ignore_eos on every
	// request, so that a real engine generates the recorded length instead
	// of stopping early at an end-of-sequence token.
	ForceOutput bool
	// KeepModels keeps each openai body's model as its request's model
	// (the adapters of a multi-LoRA deployment), which perfgate then sends
	// in place of the target's. Off, model is ignored (counted in
	// Summary.Ignored): a log of a hosted API names models a local engine
	// does not serve.
	KeepModels bool
	// SkipUnsupported skips (and counts) a request with content perfgate
	// cannot send, such as an image part, instead of failing.
	SkipUnsupported bool
	// Redact, when set, replaces the words of all text and the source's
	// ids; see Redactor.
	Redact *Redactor
}

// DefaultMaxOutput is the largest max_tokens a recorded reply's length
// gives by default: 4096, more than chat answers in ShareGPT-style data
// run to, and short enough that one long answer does not dominate a run.
const DefaultMaxOutput = 4096

// DefaultBlockSize is the tokens (here words) one Mooncake hash id stands
// for: 512, the block size of Mooncake's published traces.
const DefaultBlockSize = 512

// Result is an imported workload and what the import left out.
type Result struct {
	Requests []workload.Request
	Summary  Summary
}

// Summary says what an import did beyond the requests themselves, so that
// nothing is dropped silently. Each Tally counts requests (or source
// records) per reason.
type Summary struct {
	Format string
	// Requests and Sessions written (a request outside a session is not
	// counted as a session).
	Requests, Sessions int
	// Dropped counts, per source key path, requests that had a value
	// perfgate's request has no field for ("stop", "messages[].name").
	Dropped Tally
	// Ignored counts, per key, values perfgate sets itself when it sends
	// ("model", "stream"): not an omission, but said.
	Ignored Tally
	// Skipped counts, per reason, source records not imported at all.
	Skipped Tally
	// Defaulted is how many requests took Options.MaxTokens.
	Defaulted, DefaultMaxTokens int
	// Notes are other things the user should know, said once each.
	Notes []string
	// Redacted is true when the text was redacted.
	Redacted bool
}

// Tally counts occurrences per reason.
type Tally map[string]int

// add counts one occurrence of reason.
func (t Tally) add(reason string) { t[reason]++ }

// String lists the reasons in order with their counts: "stop (12
// requests), logprobs (1 request)"; unit names what is counted.
func (t Tally) String(unit string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(t)) {
		u := unit + "s"
		if t[k] == 1 {
			u = unit
		}
		parts = append(parts, fmt.Sprintf("%s (%d %s)", k, t[k], u))
	}
	return strings.Join(parts, ", ")
}

// Lines renders the summary for the terminal, one fact a line.
func (s *Summary) Lines() []string {
	lines := []string{fmt.Sprintf("%d requests (%d sessions) written", s.Requests, s.Sessions)}
	if len(s.Skipped) > 0 {
		lines = append(lines, "skipped: "+s.Skipped.String("record"))
	}
	if len(s.Dropped) > 0 {
		lines = append(lines, "dropped (perfgate's request has no field for them): "+s.Dropped.String("request"))
	}
	if len(s.Ignored) > 0 {
		lines = append(lines, "not carried (perfgate sets them when it sends): "+s.Ignored.String("request"))
	}
	if s.Defaulted > 0 {
		lines = append(lines, fmt.Sprintf("max_tokens %d from --max-tokens: %d requests had none", s.DefaultMaxTokens, s.Defaulted))
	}
	lines = append(lines, s.Notes...)
	return lines
}

// note records a note once.
func (s *Summary) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(s.Notes, n) {
		s.Notes = append(s.Notes, n)
	}
}

// Import reads r (named name in errors) in the given format and returns
// its requests, in source order, and the summary. Every error about the
// content is a *workload.LineError (joined when there are several); an
// unknown format or bad option is a plain error.
func Import(r io.Reader, name, format string, o Options) (*Result, error) {
	if name == "" {
		name = format
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	im := &importer{
		Problems: workload.Problems{File: name},
		o:        o,
		sum:      Summary{Format: format, Dropped: Tally{}, Ignored: Tally{}, Skipped: Tally{}, Redacted: o.Redact != nil, DefaultMaxTokens: o.MaxTokens},
		ids:      map[string]int{},
	}
	var err error
	switch format {
	case "openai":
		err = im.openai(r)
	case "sharegpt":
		err = im.sharegpt(r)
	case "mooncake":
		err = im.mooncake(r)
	case "aiperf":
		err = im.aiperf(r)
	default:
		return nil, fmt.Errorf("unknown format %q%s; want one of %s", format, workload.DidYouMean(format, Formats), strings.Join(Formats, ", "))
	}
	if err != nil {
		return nil, err
	}
	if im.Count() == 0 && len(im.reqs) == 0 {
		im.Errorf(0, "", "no requests imported%s", im.skippedSuffix())
	}
	if err := im.Err(); err != nil {
		return nil, err
	}
	im.finish()
	// The whole result must load: a failure here is a bug in an importer,
	// said as one rather than written out.
	var buf bytes.Buffer
	if err := workload.Write(&buf, im.reqs); err != nil {
		return nil, fmt.Errorf("import %s: %w", name, err)
	}
	if _, err := workload.Parse(&buf, name+" (imported)"); err != nil {
		return nil, fmt.Errorf("import %s: the imported workload does not load (a bug in the %s importer): %w", name, format, err)
	}
	im.sum.Requests = len(im.reqs)
	sessions := map[string]bool{}
	for _, r := range im.reqs {
		if r.SessionID != "" {
			sessions[r.SessionID] = true
		}
	}
	im.sum.Sessions = len(sessions)
	return &Result{Requests: im.reqs, Summary: im.sum}, nil
}

// check validates the options that do not depend on the format.
func (o *Options) check() error {
	var errs []error
	if o.MaxTokens < 0 || o.MaxTokens > workload.MaxLength {
		errs = append(errs, fmt.Errorf("--max-tokens: want an integer from 1 to %d, got %d", workload.MaxLength, o.MaxTokens))
	}
	if o.MaxOutput < 0 || o.MaxOutput > workload.MaxLength {
		errs = append(errs, fmt.Errorf("--max-output: want an integer from 1 to %d, got %d", workload.MaxLength, o.MaxOutput))
	}
	if o.BlockSize < 0 || o.BlockSize > workload.MaxLength {
		errs = append(errs, fmt.Errorf("--block-size: want an integer from 1 to %d, got %d", workload.MaxLength, o.BlockSize))
	}
	if o.ThinkMS != nil && !(*o.ThinkMS >= 0 && *o.ThinkMS <= workload.MaxArrivalMS) {
		errs = append(errs, fmt.Errorf("--think-time: want milliseconds from 0 to 1e9, got %v", *o.ThinkMS))
	}
	if _, err := parseMaxTokensFrom(o.MaxTokensFrom); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// importer holds one import's state, shared by the formats.
type importer struct {
	workload.Problems
	o    Options
	sum  Summary
	reqs []workload.Request
	// ids maps each id used to the line it was first used on.
	ids map[string]int
	// at holds each request's source time in milliseconds (nil: none),
	// made relative to the earliest by finish.
	at []*float64
	// lines holds each request's source line.
	lines []int
}

// skippedSuffix explains an empty result by what was skipped.
func (im *importer) skippedSuffix() string {
	if len(im.sum.Skipped) == 0 {
		return ""
	}
	return " (skipped: " + im.sum.Skipped.String("record") + ")"
}

// id returns the id a request gets: the source's (src, unless redacting)
// or "<format>-<n>", n the 1-based number of the source record.
func (im *importer) id(src string, n int) string {
	if src == "" || im.o.Redact != nil {
		return im.sum.Format + "-" + strconv.Itoa(n)
	}
	return src
}

// add checks req (built from the source record at line, whose key paths
// start with prefix) with workload.Parse and appends it when it is valid,
// with its source time in ms (nil: none). Parse's problems are said at
// the source line, and an id already used is an error.
func (im *importer) add(line int, prefix string, req workload.Request, at *float64) bool {
	if im.o.ForceOutput {
		mt := req.MaxTokens
		req.MinTokens = &mt
		t := true
		req.IgnoreEOS = &t
	}
	if im.o.Redact != nil {
		im.o.Redact.Request(&req)
	}
	before := im.Count()
	if prev, dup := im.ids[req.ID]; dup {
		im.Errorf(line, prefix+"id", "%q already used on line %d; ids must be unique", req.ID, prev)
	}
	// Parse checks one request alone: session keys are checked across the
	// result, so leave them out here.
	probe := req
	probe.SessionID, probe.Turn, probe.ThinkMS, probe.ArrivalMS = "", 0, nil, nil
	var buf bytes.Buffer
	if err := workload.Write(&buf, []workload.Request{probe}); err != nil {
		im.Errorf(line, prefix, "%v", err)
	} else if _, err := workload.Parse(&buf, im.File); err != nil {
		for _, e := range flatten(err) {
			var le *workload.LineError
			if errors.As(e, &le) {
				field := le.Field
				if field == "id" {
					field = "" // the id is said by the source's own key
				}
				im.Add(&workload.LineError{File: im.File, Line: line, Field: prefix + field, Msg: le.Msg})
			} else {
				im.Errorf(line, prefix, "%v", e)
			}
		}
	}
	if im.Count() > before {
		return false
	}
	im.ids[req.ID] = line
	req.Line = 0
	im.reqs = append(im.reqs, req)
	im.at = append(im.at, at)
	im.lines = append(im.lines, line)
	return true
}

// flatten lists the errors errors.Join put together.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// finish turns the source times into arrival_ms from the earliest one.
func (im *importer) finish() {
	first := 0.0
	have := false
	for _, t := range im.at {
		if t != nil && (!have || *t < first) {
			first, have = *t, true
		}
	}
	if !have {
		return
	}
	for i, t := range im.at {
		if t == nil {
			continue
		}
		v := *t - first
		im.reqs[i].ArrivalMS = &v
	}
}

// checkTimes reports requests without a time when others have one, and
// a trace longer than perfgate replays; key names the source's time key.
func (im *importer) checkTimes(key string) {
	first := -1
	for i, t := range im.at {
		if t != nil && im.reqs[i].Turn <= 1 {
			first = i
			break
		}
	}
	if first < 0 {
		return
	}
	lo, hi := *im.at[first], *im.at[first]
	for i, t := range im.at {
		if im.reqs[i].Turn > 1 {
			continue // a later turn is timed by its session
		}
		if t == nil {
			im.Errorf(im.lines[i], key, "required on every record once one has it (line %d has one): the trace's arrival times would be incomplete", im.lines[first])
			continue
		}
		lo, hi = min(lo, *t), max(hi, *t)
	}
	if hi-lo > workload.MaxArrivalMS {
		im.Errorf(0, key, "the trace spans %.0f ms, more than the 1e9 ms (about 11.6 days) perfgate replays", hi-lo)
	}
}

// parseMaxTokensFrom reads --max-tokens-from: "reply" (or "") gives 0,
// "fixed:N" gives N.
func parseMaxTokensFrom(s string) (int, error) {
	if s == "" || s == "reply" {
		return 0, nil
	}
	if v, ok := strings.CutPrefix(s, "fixed:"); ok {
		n, err := strconv.Atoi(v)
		if err == nil && n >= 1 && n <= workload.MaxLength {
			return n, nil
		}
	}
	return 0, fmt.Errorf("--max-tokens-from: want reply or fixed:N (N from 1 to %d), got %q", workload.MaxLength, s)
}
