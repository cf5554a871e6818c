package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzReadResult: no result file makes Decode (what Read does with a file's
// bytes) panic or run long; every error is ErrInvalid, names the file and
// speaks in sentences; and a result it accepts is written and read again
// unchanged (a v1 file as v2). The seed corpus (testdata/fuzz/FuzzReadResult)
// holds hostile files: huge and negative numbers, counts that do not add up,
// deep nesting, wrong kinds, byte-order marks.
func FuzzReadResult(f *testing.F) {
	f.Add([]byte(`{"schema":"perfgate/result/v1","scenarios":[{"name":"s","slo":{"ttft":250000000},"gates":[],"repetitions":[{"index":1,"sent":2,"completed":1,"failed":1,"error_rate":0.5}]}]}`))
	f.Add([]byte(`{"schema":"perfgate/result/v2","scenarios":[{"name":"s","slo":{"ttft_ms":250},"gates":[{"metric":"ttft.p42","tolerance":"+5 bananas"}],"repetitions":[{"index":1,"sent":2,"completed":1,"failed":1,"error_rate":0.5}]}]}`))
	for _, p := range []string{"../../baselines/chat-poisson.json", "testdata/v1/quality-cost-telemetry.json"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	const name = "fuzz.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			r    *Result
			err  error
			done = make(chan struct{})
		)
		go func() { r, err = Decode(data, name); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Decode(%q) did not return within 10s", data)
		}
		if err != nil {
			if r != nil {
				t.Fatal("Decode returned a result and an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode error %q is not ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("Decode error %q does not name the file", err)
			}
			msg := quotedRe.ReplaceAllString(err.Error(), `""`)
			for _, goism := range []string{"Go struct", "Go value", "float64", "int64", "json: cannot", "%!", "<nil>", "map["} {
				if strings.Contains(msg, goism) && !bytes.Contains(data, []byte(goism)) { // unless the input says it
					t.Fatalf("Decode error %q speaks Go (%s)", err, goism)
				}
			}
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("Marshal of an accepted result: %v", err)
		}
		if _, err := Decode(b, "again.json"); err != nil {
			t.Fatalf("Decode(Marshal(Decode(x))): %v", err)
		}
	})
}

// quotedRe matches a quoted string in a message: text from the file.
var quotedRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
