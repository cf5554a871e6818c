package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/hostile"
	"github.com/perfgate/perfgate/internal/safeio/safeiotest"
)

// Every file perfgate writes is written whole or not at all: a write that
// fails midway (past a file size limit, as on a full disk) leaves the old
// file as it was, or no file, and never a temporary file.
func TestFailedWritesLeaveNoHalfFile(t *testing.T) {
	const old = "the old file\n"
	tests := []struct {
		name string
		file string // the file written, in the test's directory
		// setup runs in the parent and again in the child; it returns the
		// arguments, given the directory.
		setup func(t *testing.T) func(dir string) []string
		// gone says a failed write leaves no file at all: the old one is
		// removed at the start, as it would otherwise pass for this run's.
		gone     bool
		wantCode int
	}{
		{name: "export", file: "bench.txt", setup: func(t *testing.T) func(string) []string {
			return func(dir string) []string {
				return []string{"export", "--output", filepath.Join(dir, "bench.txt"), filepath.Join(dir, "in.json")}
			}
		}, wantCode: exit.Usage},
		{name: "workload synth", file: "w.jsonl", setup: func(t *testing.T) func(string) []string {
			return func(dir string) []string {
				return []string{"workload", "synth", "-n", "50", "--output", filepath.Join(dir, "w.jsonl")}
			}
		}, wantCode: exit.RunFailed},
		{name: "report html", file: "report.html", setup: func(t *testing.T) func(string) []string {
			return func(dir string) []string {
				return []string{"report", "--format", "json", "--html", filepath.Join(dir, "report.html"), filepath.Join(dir, "report.json")}
			}
		}, wantCode: exit.RunFailed},
		{name: "run records", file: "records.jsonl", gone: true, setup: func(t *testing.T) func(string) []string {
			srv := hostile.Start(t, hostile.Options{})
			conf := hostileConfig(t, srv.URL, 16)
			return func(dir string) []string {
				return []string{"run", "-q", "-c", conf, "-o", filepath.Join(dir, "result.json"), "--records", filepath.Join(dir, "records.jsonl")}
			}
		}, wantCode: exit.RunFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.setup(t)
			dir := t.TempDir()
			writeResult(t, filepath.Join(dir, "in.json"), nil, 20, 21, 20.5, 19.8, 20.2, 20.1, 20.4, 19.9)
			pass, _ := reportFiles(t)
			data, err := os.ReadFile(pass)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "report.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			got := safeiotest.WithFileSizeLimit(t, 1024, dir, func(dir string) error {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := Main(ctx, args(dir), io.Discard, io.Discard); err != nil {
					return fmt.Errorf("exit %d: %w", exit.Code(err), err)
				}
				return nil
			})
			if want := fmt.Sprintf("exit %d: ", tt.wantCode); !strings.Contains(got, "file too large") || !strings.HasPrefix(got, want) {
				t.Errorf("perfgate %s past the size limit = %q, want %q and an error saying the file is too large", tt.name, got, want)
			}
			after, err := os.ReadFile(path)
			switch {
			case tt.gone && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("after a failed write %s holds %q (%v), want no file", path, after, err)
			case !tt.gone && string(after) != old:
				t.Errorf("after a failed write %s holds %d bytes (%v), want the old %q", path, len(after), err, old)
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.Contains(e.Name(), ".tmp-") || e.Name() == "result.json" {
					t.Errorf("after a failed write %s holds %s", dir, e.Name())
				}
			}
		})
	}
}

// The simulator's --truth file is put in place when it shuts down; a crash
// (--exit-after) leaves the old file as it was, not a truncated one.
func TestSimTruthIsWrittenWhole(t *testing.T) {
	dir := t.TempDir()
	truth := filepath.Join(dir, "truth.jsonl")
	const old = "{\"request_id\":\"old\"}\n"
	if err := os.WriteFile(truth, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Main(context.Background(), []string{"sim", "--addr", "127.0.0.1:0", "--truth", truth, "--exit-after", "1ms"}, io.Discard, io.Discard)
	if exit.Code(err) != exit.RunFailed {
		t.Fatalf("perfgate sim --exit-after = %v, want exit %d", err, exit.RunFailed)
	}
	if got, err := os.ReadFile(truth); err != nil || string(got) != old {
		t.Errorf("after a crash %s holds %q (%v), want the old %q", truth, got, err, old)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // shuts down as soon as it has started
	if err := Main(ctx, []string{"sim", "--addr", "127.0.0.1:0", "--truth", truth}, io.Discard, io.Discard); err != nil {
		t.Fatalf("perfgate sim, shut down = %v, want nil", err)
	}
	if got, err := os.ReadFile(truth); err != nil || len(got) != 0 {
		t.Errorf("after a shutdown with no requests %s holds %q (%v), want an empty file", truth, got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%s holds %d files, want only truth.jsonl", dir, len(ents))
	}
}
