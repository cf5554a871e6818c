package telemetry

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/config"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/safeio"
)

// smiQuery is what nvidia-smi is asked for, in this column order.
var smiQuery = []string{
	"index", "name", "uuid", "memory.used", "memory.total",
	"utilization.gpu", "power.draw", "driver_version",
}

// The columns of smiQuery.
const (
	smiIndex = iota
	smiName
	smiUUID
	smiMemoryUsed
	smiMemoryTotal
	smiUtilization
	smiPower
	smiDriver
)

// nvidiaSMI reads the GPUs with nvidia-smi --query-gpu, here or in the stack's
// container.
type nvidiaSMI struct {
	run   CommandRunner
	argv  []string
	where string
}

var _ GPUSource = (*nvidiaSMI)(nil)

// NewNvidiaSMI is a GPU source that runs
//
//	<argv...> --query-gpu=index,name,uuid,memory.used,memory.total,utilization.gpu,power.draw,driver_version --format=csv,noheader,nounits
//
// through run, once per Sample. argv is the command before the flags
// (["nvidia-smi"], ["/opt/bin/nvidia-smi"]; empty is ["nvidia-smi"]); where
// says where it runs, for Describe: "" here, or "in container perfgate-1a2b".
func NewNvidiaSMI(run CommandRunner, argv []string, where string) GPUSource {
	if len(argv) == 0 {
		argv = []string{"nvidia-smi"}
	}
	return &nvidiaSMI{run: run, argv: slices.Clone(argv), where: where}
}

func (s *nvidiaSMI) Kind() string { return config.GPUNvidiaSMI }

// Describe is the command and where it runs: "nvidia-smi in container
// perfgate-1a2b".
func (s *nvidiaSMI) Describe() string {
	d := strings.Join(s.argv, " ")
	if s.where != "" {
		d += " " + s.where
	}
	return d
}

func (s *nvidiaSMI) Close() error { return nil }

// Sample runs the query once.
func (s *nvidiaSMI) Sample(ctx context.Context) ([]GPUSample, error) {
	rows, err := s.query(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]GPUSample, len(rows))
	for i, r := range rows {
		out[i] = r.GPUSample
	}
	return out, nil
}

// Devices runs the query, and nvidia-smi -q for the CUDA version (best
// effort: empty when it cannot be read).
func (s *nvidiaSMI) Devices(ctx context.Context) ([]result.GPU, error) {
	rows, err := s.query(ctx)
	if err != nil {
		return nil, err
	}
	cuda := ""
	if out, err := s.runBounded(ctx, append(slices.Clone(s.argv), "-q")); err == nil {
		cuda = smiCUDAVersion(out)
	}
	devices := make([]result.GPU, len(rows))
	for i, r := range rows {
		devices[i] = result.GPU{
			Index:       r.Index,
			Model:       r.name,
			UUID:        r.uuid,
			MemoryBytes: uint64(r.MemoryTotalMiB * (1 << 20)),
			Driver:      r.driver,
			CUDA:        cuda,
		}
	}
	return devices, nil
}

// smiTimeout bounds one run of nvidia-smi: it answers in well under a
// second, and one that hangs (a wedged driver) must not hold a sample up.
const smiTimeout = 10 * time.Second

// smiOutputLimit bounds what perfgate reads of nvidia-smi's output: the
// query is a line per GPU, and -q a few KiB per GPU.
const smiOutputLimit = 4 << 20

// runBounded runs argv through s.run within smiTimeout and refuses output
// larger than smiOutputLimit (a runner other than LocalCommand may have
// read more).
func (s *nvidiaSMI) runBounded(ctx context.Context, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, smiTimeout)
	defer cancel()
	out, err := s.run(ctx, argv)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer within %s: %w", smiTimeout, err)
		}
		return nil, err
	}
	if len(out) > smiOutputLimit {
		return nil, &safeio.TooLargeError{What: "its output", Limit: smiOutputLimit}
	}
	return out, nil
}

func (s *nvidiaSMI) query(ctx context.Context) ([]smiRow, error) {
	argv := append(slices.Clone(s.argv),
		"--query-gpu="+strings.Join(smiQuery, ","),
		"--format=csv,noheader,nounits")
	out, err := s.runBounded(ctx, argv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Describe(), err)
	}
	rows, err := parseSMI(out)
	if err != nil {
		return nil, fmt.Errorf("%s --query-gpu: %w", s.Describe(), err)
	}
	return rows, nil
}

// smiRow is one GPU's line of the query.
type smiRow struct {
	GPUSample
	name, uuid, driver string
}

// parseSMI reads the query's output: one GPU a line, the columns of smiQuery.
// A figure nvidia-smi cannot give ([N/A], [Not Supported]) is missing: no
// power is a nil PowerW, no utilisation is NaN, no memory total is 0. A line
// without its index or its memory in use is an error: nothing is made up.
// Errors name the line and the column.
func parseSMI(out []byte) ([]smiRow, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.TrimLeadingSpace = true
	r.LazyQuotes = true
	r.FieldsPerRecord = -1 // checked below, with a better message
	var rows []smiRow
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(smiQuery) {
			return nil, fmt.Errorf("line %d: %d columns, want %d (%s): %q",
				line, len(rec), len(smiQuery), strings.Join(smiQuery, ","), strings.Join(rec, ", "))
		}
		row, err := parseSMIRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d, %w", line, err)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, errors.New("no GPU listed")
	}
	return rows, nil
}

func parseSMIRecord(rec []string) (smiRow, error) {
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	// number reads column col; ok is false when nvidia-smi could not say.
	number := func(col int) (v float64, ok bool, err error) {
		s := rec[col]
		if smiMissing(s) {
			return 0, false, nil
		}
		v, err = strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("column %d (%s): %q is not a number", col+1, smiQuery[col], s)
		}
		return v, true, nil
	}
	required := func(col int) (float64, error) {
		v, ok, err := number(col)
		if err == nil && !ok {
			err = fmt.Errorf("column %d (%s): nvidia-smi gave no figure (%s)", col+1, smiQuery[col], rec[col])
		}
		return v, err
	}
	text := func(col int) string {
		if smiMissing(rec[col]) {
			return ""
		}
		return rec[col]
	}

	var row smiRow
	index, err := required(smiIndex)
	if err != nil {
		return row, err
	}
	if index < 0 || index != math.Trunc(index) {
		return row, fmt.Errorf("column %d (index): %q is not a GPU index", smiIndex+1, rec[smiIndex])
	}
	row.Index = int(index)
	if row.MemoryUsedMiB, err = required(smiMemoryUsed); err != nil {
		return row, err
	}
	if row.MemoryTotalMiB, _, err = number(smiMemoryTotal); err != nil {
		return row, err
	}
	util, ok, err := number(smiUtilization)
	if err != nil {
		return row, err
	}
	row.UtilizationPct = math.NaN()
	if ok {
		row.UtilizationPct = util
	}
	power, ok, err := number(smiPower)
	if err != nil {
		return row, err
	}
	if ok {
		row.PowerW = &power
	}
	row.name, row.uuid, row.driver = text(smiName), text(smiUUID), text(smiDriver)
	return row, checkGPUSample(row.GPUSample)
}

// smiMissing reports whether an nvidia-smi value stands for "cannot say":
// [N/A], [Not Supported], [Unknown Error] and the like, or nothing.
func smiMissing(s string) bool {
	return s == "" || s == "N/A" || (strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"))
}

// smiCUDAVersion reads the "CUDA Version : 12.4" line of nvidia-smi -q; empty
// when there is none (or it says "Not Found", as on some vGPU guests).
func smiCUDAVersion(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(k) != "CUDA Version" {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" || smiMissing(v) || strings.EqualFold(v, "Not Found") {
			return ""
		}
		return v
	}
	return ""
}

// localCommandWaitDelay bounds the wait for a killed command's output pipes
// (a child that outlives it holds them open).
const localCommandWaitDelay = time.Second

// localCommandOutputLimit bounds what LocalCommand keeps of a command's
// standard output; localCommandStderrLimit what it keeps of its standard
// error (only the first line is ever shown).
const (
	localCommandOutputLimit = smiOutputLimit
	localCommandStderrLimit = 64 << 10
)

// LocalCommand runs argv here and returns its standard output. A command that
// fails is an error with the first line of its standard error (or, when that
// is empty, of its standard output, where nvidia-smi says why it failed). The
// error does not repeat argv: the caller names the command. Output larger
// than 4 MiB is an error (*safeio.TooLargeError), and the command is stopped:
// nothing it writes can exhaust perfgate.
func LocalCommand(ctx context.Context, argv []string) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to run")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// Output past its limit fails the write, which closes the pipe and stops
	// the command; standard error past its limit is dropped.
	stdout := &safeio.Buffer{Limit: localCommandOutputLimit, What: "its output"}
	stderr := &safeio.Buffer{Limit: localCommandStderrLimit, Discard: true}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = localCommandWaitDelay
	err := cmd.Run()
	if stdout.Truncated() {
		return nil, &safeio.TooLargeError{What: "its output", Limit: localCommandOutputLimit}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if msg := cmp.Or(commandFirstLine(stderr.Bytes()), commandFirstLine(stdout.Bytes())); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// commandFirstLine is the first non-blank line of out, trimmed and cut to 200 bytes.
func commandFirstLine(out []byte) string {
	for line := range strings.Lines(string(out)) {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = line[:200] + "..."
			}
			return line
		}
	}
	return ""
}
