package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestSimAnswersUsageErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"id": "x", "prompt": "p", "scorer": "exact"}`+"\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sim", "--accuracy", "0.5"}, []string{"--accuracy", "--answers"}},
		{[]string{"sim", "--accuracy", "1"}, []string{"--accuracy", "--answers"}},
		{[]string{"sim", "--answers", missing}, []string{"--answers", "missing.jsonl"}},
		{[]string{"sim", "--answers", bad}, []string{"--answers", "bad.jsonl:1", "expected"}},
		{[]string{"sim", "--answers", bad + "," + missing}, []string{"bad.jsonl:1", "missing.jsonl"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := Main(context.Background(), append(tc.args, "--addr", "127.0.0.1:0"), &stdout, &stderr)
			require.Equal(t, exit.Usage, exit.Code(err), "exit code (err %v)", err)
			for _, w := range tc.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

func TestSimAnswersHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.NoError(t, Main(context.Background(), []string{"sim", "--help"}, &stdout, &stderr))
	help := stdout.String()
	for _, w := range []string{"--answers", "--accuracy", "not models"} {
		assert.Contains(t, help, w)
	}
}

// perfgate sim --answers a,b --answers c answers the items of all three
// suites.
func TestSimAnswersServes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, s := range []struct{ name, id, prompt, want string }{
		{"a", "qa", "Capital of Italy?", "Rome"},
		{"b", "qb", "Capital of Spain?", "Madrid"},
		{"c", "qc", "Capital of Peru?", "Lima"},
	} {
		p := filepath.Join(dir, s.name+".jsonl")
		line, err := json.Marshal(map[string]any{"id": s.id, "prompt": s.prompt, "scorer": "exact", "expected": s.want})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, append(line, '\n'), 0o644))
		paths = append(paths, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	done := make(chan error, 1)
	go func() {
		var stdout bytes.Buffer
		err := Main(ctx, []string{"sim", "--addr", "127.0.0.1:0", "--step-base", "1ms",
			"--answers", paths[0] + "," + paths[1], "--answers", paths[2], "--accuracy", "1", "--seed", "3"}, &stdout, pw)
		pw.Close()
		done <- err
	}()
	var url string
	deadline := time.After(10 * time.Second)
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("perfgate sim ended before serving: %v", <-done)
			}
			if _, rest, found := strings.Cut(l, " on http://"); found {
				url = "http://" + strings.Fields(rest)[0]
			}
		case <-deadline:
			t.Fatal("perfgate sim did not report its address")
		}
	}
	for prompt, want := range map[string]string{"Capital of Italy?": "Rome", "Capital of Spain?": "Madrid", "Capital of Peru?": "Lima"} {
		body, err := json.Marshal(map[string]any{"prompt": prompt, "max_tokens": 8})
		require.NoError(t, err)
		resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		var out struct {
			Choices []struct {
				Text         string `json:"text"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		require.Len(t, out.Choices, 1)
		assert.Equal(t, want, strings.TrimSpace(out.Choices[0].Text), "answer to %q", prompt)
		assert.Equal(t, "stop", out.Choices[0].FinishReason)
	}
	cancel()
	go func() {
		for range lines {
		}
	}()
	require.NoError(t, <-done)
}
