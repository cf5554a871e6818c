package baseline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/metric"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/textsafe"
)

// historyFile is the name of the history log inside a store's directory.
const historyFile = "history.jsonl"

// Store is a baselines directory (baselines/ by default, committed to the
// repository): one <scenario>.json per promoted scenario and history.jsonl.
// An empty Dir is config.DefaultBaselines.
type Store struct{ Dir string }

func (s Store) dir() string {
	if s.Dir == "" {
		return config.DefaultBaselines
	}
	return s.Dir
}

// Path is the baseline file of a scenario: <Dir>/<scenario>.json.
func (s Store) Path(scenario string) string {
	return filepath.Join(s.dir(), scenario+".json")
}

// HistoryPath is the history log: <Dir>/history.jsonl.
func (s Store) HistoryPath() string {
	return filepath.Join(s.dir(), historyFile)
}

// namePattern is what a scenario name may be, as config validates it: the
// name becomes a file name, so it must not climb out of Dir or hide a file.
var namePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

func checkName(scenario string) error {
	if !namePattern.MatchString(scenario) {
		return fmt.Errorf("scenario name %q cannot name a baseline file (want %s)", scenario, namePattern)
	}
	return nil
}

// notFound is Load's error for a scenario never promoted. It wraps
// fs.ErrNotExist so callers can tell "no baseline yet" from a broken one.
type notFound struct{ scenario, path string }

func (e *notFound) Error() string {
	return fmt.Sprintf("no baseline for scenario %s at %s (promote one with `perfgate baseline promote RESULT`)", e.scenario, e.path)
}

func (e *notFound) Unwrap() error { return fs.ErrNotExist }

// Load reads the promoted baseline of one scenario: a Result holding that one
// scenario. A missing file is an error that wraps fs.ErrNotExist and says how
// to promote one; a corrupt file (bad or truncated JSON, another schema, no
// scenario of that name, no repetitions, an incomplete run's) is an error
// naming the file and what is wrong with it, for a baseline that cannot be
// read must stop a gate rather than pass it.
func (s Store) Load(scenario string) (*result.Result, error) {
	if err := checkName(scenario); err != nil {
		return nil, err
	}
	path := s.Path(scenario)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &notFound{scenario: scenario, path: path}
	}
	if err == nil && info.Mode().IsRegular() && info.Size() == 0 {
		return nil, fmt.Errorf("baseline %s: empty file", path)
	}
	r, err := result.Read(path) // its errors name path
	if err != nil {
		return nil, fmt.Errorf("baseline for scenario %s: %w", scenario, err)
	}
	if err := r.CheckComplete(); err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	var names []string
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		if sc.Name != scenario {
			names = append(names, sc.Name)
			continue
		}
		if len(sc.Repetitions) == 0 {
			return nil, fmt.Errorf("baseline %s: scenario %s has no repetitions", path, scenario)
		}
		r.Scenarios = []result.ScenarioResult{*sc}
		return r, nil
	}
	return nil, fmt.Errorf("baseline %s: holds scenario %s, not %s", path, strings.Join(names, ", "), scenario)
}

// Meta says where a promoted result came from: the commit it measured and
// when (a zero Date stands for the result's finish time), and where known
// the release tag at that commit, the pull request that brought it, and
// the workflow run that measured it (its report and artifacts).
type Meta struct {
	Commit string
	Date   time.Time
	Tag    string
	PR     int
	Run    string
}

// Promote makes r the baseline: each scenario of r is written as its own
// baseline file (a Result with r's schema, identity and times holding only
// that scenario) and one Entry per scenario is appended to history.jsonl. It
// creates Dir if missing and returns the baseline files written, in r's
// order (the history is HistoryPath).
//
// Every file is replaced atomically (a temporary file in Dir, fsync, rename,
// fsync of Dir), so a reader or a killed promotion never sees half a
// baseline; all the new files are written before any is renamed, so a failed
// write leaves the old baselines as they were. The history gets one O_APPEND
// write of whole lines, fsynced, after the renames. The whole promotion holds
// the store's lock (Lock), so promotions into one directory at once take
// turns: the baselines are all from the last, and it is last in the history.
// A result that cannot be a baseline (another schema, a scenario without
// repetitions, two scenarios of one name, numbers that cannot be true:
// Result.Validate; an incomplete run's: Result.CheckComplete) is refused before anything is written, with an error that
// wraps result.ErrInvalid. On an error, the paths returned are those already
// replaced.
func (s Store) Promote(r *result.Result, meta Meta) ([]string, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	lines, err := historyLines(r, meta, KindPromotion)
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	if err := os.MkdirAll(s.dir(), 0o755); err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	lock, err := s.Lock()
	if err != nil {
		return nil, fmt.Errorf("promote: %w", err)
	}
	defer lock.Unlock()
	// Every new baseline is written to a synced temporary file first, and
	// only when all are whole are they renamed into place: a failure while
	// writing leaves every old baseline as it was.
	files := make([]*safeio.AtomicFile, 0, len(r.Scenarios))
	defer func() {
		for _, f := range files {
			f.Abort() // those not renamed; nothing for the others
		}
	}()
	for i := range r.Scenarios {
		one := *r
		one.Scenarios = r.Scenarios[i : i+1]
		data, err := json.MarshalIndent(&one, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("promote: encode baseline of %s: %w", r.Scenarios[i].Name, err)
		}
		f, err := writeTemp(s.Path(r.Scenarios[i].Name), append(data, '\n'))
		if err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		files = append(files, f)
	}
	n, err := safeio.CommitAll(files)
	paths := make([]string, 0, n)
	for _, f := range files[:n] {
		paths = append(paths, f.Path())
	}
	if err != nil {
		return paths, fmt.Errorf("baseline: %w", err)
	}
	if err := appendLines(s.HistoryPath(), lines); err != nil {
		return paths, fmt.Errorf("history %s: %w", s.HistoryPath(), err)
	}
	return paths, nil
}

// lockWait is how long Lock waits for another promotion into the same
// directory to finish: a promotion takes well under a second.
const lockWait = 2 * time.Minute

// Lock takes the store's lock, which Promote and Record hold while they
// write: an flock on history.jsonl (created empty if missing), which every
// promotion appends to, so the lock adds no file to the directory. It waits
// at most lockWait for another holder. Dir must exist.
func (s Store) Lock() (*safeio.FileLock, error) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), lockWait,
		fmt.Errorf("waited %s for another perfgate writing %s to finish", lockWait, s.dir()))
	defer cancel()
	return safeio.Lock(ctx, s.HistoryPath())
}

// Record appends one Entry per scenario of r to history.jsonl without
// making r the baseline: how a scheduled (nightly) run keeps the trend that
// `perfgate baseline history` draws and change points are found in. It
// refuses what Promote refuses, before writing anything.
func (s Store) Record(r *result.Result, meta Meta) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	lines, err := historyLines(r, meta, KindRecord)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := os.MkdirAll(s.dir(), 0o755); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	lock, err := s.Lock()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer lock.Unlock()
	if err := appendLines(s.HistoryPath(), lines); err != nil {
		return fmt.Errorf("history %s: %w", s.HistoryPath(), err)
	}
	return nil
}

// historyLines are the history.jsonl lines of r's scenarios: one Entry
// each, of kind. An incomplete result (Result.CheckComplete), and a scenario whose
// name cannot name a file, that appears twice or has no repetitions, is an
// error that wraps result.ErrInvalid.
func historyLines(r *result.Result, meta Meta, kind string) ([]byte, error) {
	if err := r.CheckComplete(); err != nil {
		return nil, err
	}
	if len(r.Scenarios) == 0 {
		return nil, result.Invalid(result.Problem{Path: "scenarios", Msg: "the result has no scenarios"})
	}
	seen := map[string]bool{}
	var lines bytes.Buffer
	for i := range r.Scenarios {
		sc := &r.Scenarios[i]
		field := fmt.Sprintf("scenarios[%d]", i)
		if err := checkName(sc.Name); err != nil {
			return nil, result.Invalid(result.Problem{Path: field + ".name", Msg: err.Error()})
		}
		if seen[sc.Name] {
			return nil, result.Invalid(result.Problem{Path: field + ".name", Msg: fmt.Sprintf("scenario %s appears twice in the result", sc.Name)})
		}
		seen[sc.Name] = true
		e, err := NewEntry(r, sc, meta)
		if err != nil {
			return nil, result.Invalid(result.Problem{Path: field, Msg: err.Error()})
		}
		e.Kind = kind
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode history entry of %s: %w", sc.Name, err)
		}
		lines.Write(line)
		lines.WriteByte('\n')
	}
	return lines.Bytes(), nil
}

// fsync syncs history.jsonl to disk, and syncTemp a new baseline; variables
// so tests can make them fail.
var (
	fsync    = (*os.File).Sync
	syncTemp = (*safeio.AtomicFile).Sync
)

// writeTemp writes data to a new temporary file beside path (hidden, so List
// skips it) and syncs it; its Commit then replaces path atomically: path
// holds either its old content or all of data, whatever happens.
func writeTemp(path string, data []byte) (*safeio.AtomicFile, error) {
	f, err := safeio.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return nil, err
	}
	if err := syncTemp(f); err != nil {
		f.Abort()
		return nil, err
	}
	return f, nil
}

// appendLines appends whole lines to path in one O_APPEND write and syncs it.
// A write or sync that fails (a full disk) is undone: the file is cut back to
// its old size, so it never keeps part of a line. When the file does not end
// in a newline (torn by a crash mid-write), a newline goes first so the new
// lines stay whole and History reports only the bad one.
func appendLines(path string, lines []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return err
		}
		if last[0] != '\n' {
			lines = append([]byte{'\n'}, lines...)
		}
	}
	undo := func(err error) error {
		if terr := f.Truncate(size); terr != nil {
			return fmt.Errorf("%w (and cutting it back to its old size failed: %v)", err, terr)
		}
		_ = fsync(f)
		return err
	}
	if _, err := f.Write(lines); err != nil {
		return undo(err)
	}
	if err := fsync(f); err != nil {
		return undo(err)
	}
	return f.Close()
}

// Bounds on history.jsonl, which a pull request may change like any file.
const (
	// MaxHistoryBytes is the largest history perfgate reads: 64 MiB. An
	// entry is under 2 KB, so this is tens of thousands of runs.
	MaxHistoryBytes = 64 << 20
	// MaxHistoryLineBytes is the longest line it reads: 1 MiB, hundreds of
	// times an entry.
	MaxHistoryLineBytes = 1 << 20
)

// History reads history.jsonl, oldest line first. A missing file is an empty
// history; blank lines are skipped; a line that is not an entry is an error
// "PATH:LINE:COLUMN: field: ..." (a *result.Problem) so it can be found and
// mended by hand. Only a regular file is read, at most MaxHistoryBytes, in
// lines of at most MaxHistoryLineBytes; a UTF-8 byte-order mark at its start
// is read as one.
func (s Store) History() ([]Entry, error) {
	path := s.HistoryPath()
	f, err := safeio.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	return parseHistory(f, path, MaxHistoryBytes)
}

// parseHistory reads the lines of a history file named path from r, at most
// limit bytes of it.
func parseHistory(r io.Reader, path string, limit int64) ([]Entry, error) {
	var entries []Entry
	rd := bufio.NewReaderSize(safeio.LimitReader(r, limit, path), 64<<10)
	for n := 1; ; n++ {
		line, err := safeio.ReadLine(rd, MaxHistoryLineBytes)
		if errors.Is(err, safeio.ErrLineTooLong) {
			return nil, result.Invalid(result.Problem{File: path, Line: n, Msg: fmt.Sprintf(
				"the line is longer than %s, the most perfgate reads in one line", safeio.FormatBytes(MaxHistoryLineBytes))})
		}
		var tooLarge *safeio.TooLargeError
		if errors.As(err, &tooLarge) {
			return nil, result.Invalid(result.Problem{File: path, Line: n, Msg: fmt.Sprintf(
				"the file is larger than %s, the most perfgate reads for a history", safeio.FormatBytes(limit))})
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a byte-order mark
		}
		if text := bytes.TrimSpace(line); len(text) > 0 {
			e, perr := parseEntry(text, path, n)
			if perr != nil {
				return nil, perr
			}
			entries = append(entries, e)
		}
		if err != nil { // io.EOF
			return entries, nil
		}
	}
}

// runURL is what an entry's Run may be: an https URL without spaces,
// quotes or angle brackets.
var runURL = regexp.MustCompile(`^https://[^\s"'<>\\]{1,300}$`)

// parseEntry decodes and checks one history line, numbered n.
func parseEntry(text []byte, path string, n int) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(text, &e); err != nil {
		jerr := result.JSONError(path, text, err)
		if p, ok := jerr.(*result.Problem); ok {
			p.Line = n // the line of the file, not of the line alone
			if p.Column == 0 {
				p.Column = 1
			}
		}
		return Entry{}, jerr
	}
	bad := func(field, format string, args ...any) (Entry, error) {
		return Entry{}, result.Invalid(result.Problem{File: path, Line: n, Path: field, Msg: fmt.Sprintf(format, args...)})
	}
	if e.Scenario == "" {
		return bad("scenario", "missing: every entry names its scenario")
	}
	if e.Repetitions < 0 {
		return bad("repetitions", "want a count >= 0, got %d", e.Repetitions)
	}
	if e.PR < 0 {
		return bad("pr", "want a pull request number, got %d", e.PR)
	}
	if e.Run != "" && !runURL.MatchString(e.Run) {
		return bad("run", "want the workflow run's https URL, got %q", textsafe.Cut(e.Run, 80))
	}
	if e.Kind != "" && e.Kind != KindPromotion && e.Kind != KindRecord {
		return bad("kind", "want %s or %s, got %q", KindPromotion, KindRecord, textsafe.Cut(e.Kind, 40))
	}
	for _, name := range slices.Sorted(maps.Keys(e.Metrics)) {
		m := e.Metrics[name]
		if m.N < 0 {
			return bad("metrics."+name+".n", "want a count >= 0, got %d", m.N)
		}
		if !(m.Median >= 0) || math.IsInf(m.Median, 0) {
			return bad("metrics."+name+".median", "want a number >= 0, got %v", m.Median)
		}
		if info, err := metric.Lookup(name); err == nil && info.Points() && m.Median > 1 {
			return bad("metrics."+name+".median", "want a share from 0 to 1, got %v", m.Median)
		}
		if m.Lo != nil && m.Hi != nil && !(*m.Lo <= m.Median && m.Median <= *m.Hi) {
			return bad("metrics."+name, "the interval [%v, %v] does not hold the median %v", *m.Lo, *m.Hi, m.Median)
		}
	}
	return e, nil
}

// List loads every baseline in Dir (each <scenario>.json; not history.jsonl,
// nor hidden or temporary files), sorted by scenario. A missing Dir holds no
// baselines; any corrupt baseline is an error naming it, for a listing that
// silently skipped one would hide it.
func (s Store) List() ([]*result.Result, error) {
	ents, err := os.ReadDir(s.dir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("baselines: %w", err)
	}
	var names []string
	for _, de := range ents {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if ok && !de.IsDir() && namePattern.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names) // by scenario, not by file name: "a" before "a-b"
	var out []*result.Result
	for _, name := range names {
		r, err := s.Load(name)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
