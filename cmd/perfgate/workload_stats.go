package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/result"
	"github.com/perfgate/perfgate/internal/workload"
)

// statsFormats are the formats `perfgate workload stats --format` writes.
var statsFormats = []string{"text", "json", "markdown"}

func newStatsCmd(stdout, stderr io.Writer) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "stats FILE...",
		Short: "Summarise a workload's shape: lengths, arrivals, prefix sharing, sessions",
		Long: `stats loads each workload file (validating it as a run does) and prints
what it asks of a server: the number of requests and their API (chat or
completions); prompt lengths in words (perfgate's unit without a tokenizer:
its simulator counts one token a word) and max_tokens, as p50/p90/p99/max;
the prefix-sharing ratio (the share of all prompt words that repeat a prefix
an earlier request in the file began with) and the number of distinct shared
prefixes of 32 words or more; sessions (turns per session, think times, and
the prefix sharing once each later turn carries its history); arrivals when
the file has arrival_ms (span, mean rate, burstiness: the coefficient of
variation of the gaps, 0 when even, 1 for Poisson, above 1 bursty; the peak
in one second); tags, sampling parameters, response_format and tools.

Every result keeps the same summary for each scenario (workload_shape), and
the reports show it in one line. --format json writes one JSON object a file
(a line each): {"file", "workload_hash", "shape"}.`,
		Example: `  perfgate workload stats examples/workloads/chat.jsonl
  perfgate workload stats --format json workloads/*.jsonl | jq .shape.prefix_sharing.ratio`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(args, format, stdout)
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: "+strings.Join(statsFormats, ", "))
	return cmd
}

// fileStats is one file's summary, as --format json writes it.
type fileStats struct {
	File         string               `json:"file"`
	WorkloadHash string               `json:"workload_hash"`
	Shape        result.WorkloadShape `json:"shape"`
}

// runStats loads every file (reporting every bad one) before it writes
// anything, then writes one block a file.
func runStats(paths []string, format string, stdout io.Writer) error {
	if !slices.Contains(statsFormats, format) {
		return exit.UsageError(fmt.Errorf("--format: want one of %s, got %q", strings.Join(statsFormats, ", "), format))
	}
	var all []fileStats
	var errs []error
	for _, p := range paths {
		w, err := workload.Load(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all = append(all, fileStats{File: p, WorkloadHash: w.Hash, Shape: workload.Stats(w.Requests)})
	}
	if len(errs) > 0 {
		return exit.UsageError(errors.Join(errs...))
	}
	var b strings.Builder
	for i, fs := range all {
		switch format {
		case "json":
			line, err := json.Marshal(fs)
			if err != nil {
				return exit.RunError(fmt.Errorf("encode stats of %s: %w", fs.File, err))
			}
			b.Write(line)
			b.WriteByte('\n')
		case "markdown":
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "### Workload `%s`\n\n`%s`\n\n| | |\n|---|---|\n", fs.File, fs.WorkloadHash)
			for _, r := range shapeRows(&fs.Shape) {
				fmt.Fprintf(&b, "| %s | %s |\n", r[0], strings.ReplaceAll(r[1], "|", `\|`))
			}
		default:
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "workload %s  %s\n", fs.File, fs.WorkloadHash)
			for _, r := range shapeRows(&fs.Shape) {
				fmt.Fprintf(&b, "  %-16s %s\n", r[0], r[1])
			}
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return exit.RunError(fmt.Errorf("write stats: %w", err))
	}
	return nil
}

// shapeRows are the figures of s as (name, value) rows, for the text and
// markdown tables; a part the workload does not have (sessions, arrivals,
// tags, ...) has no row.
func shapeRows(s *result.WorkloadShape) [][2]string {
	lengths := func(l result.Lengths, unit string) string {
		return fmt.Sprintf("p50 %d  p90 %d  p99 %d  max %d%s", l.P50, l.P90, l.P99, l.Max, unit)
	}
	ps := s.PrefixSharing
	rows := [][2]string{
		{"requests", fmt.Sprintf("%d (chat %d, completions %d)", s.Requests, s.Chat, s.Completions)},
		{"prompt words", lengths(s.PromptWords, "")},
		{"max_tokens", lengths(s.MaxTokens, "")},
		{"prefix sharing", fmt.Sprintf("%s of %d words (%d shared); %d distinct shared prefixes of >= %d words",
			statsPercent(ps.Ratio), ps.Words, ps.SharedWords, ps.Prefixes32, workload.SharedPrefixMinWords)},
	}
	if ss := s.Sessions; ss != nil {
		v := fmt.Sprintf("%d (%d requests); turns %d to %d (p50 %d); prefix sharing with history %s",
			ss.Count, ss.Requests, ss.TurnsMin, ss.TurnsMax, ss.TurnsP50, statsPercent(ss.PrefixSharingWithHistory))
		if th := ss.ThinkMS; th != nil {
			v += fmt.Sprintf("; think_ms on %d turn%s, p50 %s, p90 %s", th.Count, plural(th.Count), statsNum(th.P50), statsNum(th.P90))
		}
		rows = append(rows, [2]string{"sessions", v})
	}
	if a := s.Arrivals; a != nil {
		rows = append(rows, [2]string{"arrivals", fmt.Sprintf("%d over %s s: %s req/s, burstiness %s, peak %d in 1 s",
			a.Requests, statsNum(float64(a.Span)), statsNum(a.MeanRate), statsNum(a.Burstiness), a.PeakPerSecond)})
	}
	if len(s.Tags) > 0 {
		parts := make([]string, len(s.Tags))
		for i, t := range s.Tags {
			parts[i] = fmt.Sprintf("%s %d", t.Tag, t.Requests)
		}
		v := strings.Join(parts, ", ")
		if more := s.DistinctTags - len(s.Tags); more > 0 {
			v += fmt.Sprintf(" (and %d more)", more)
		}
		rows = append(rows, [2]string{"tags", v})
	}
	if len(s.Sampling) > 0 {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(s.Sampling)) {
			n := s.Sampling[name]
			parts = append(parts, fmt.Sprintf("%s on %d request%s", name, n, plural(n)))
		}
		rows = append(rows, [2]string{"sampling", strings.Join(parts, ", ")})
	}
	if s.ResponseFormat > 0 {
		rows = append(rows, [2]string{"response_format", fmt.Sprintf("%d request%s", s.ResponseFormat, plural(s.ResponseFormat))})
	}
	if s.Tools > 0 {
		rows = append(rows, [2]string{"tools", fmt.Sprintf("%d request%s", s.Tools, plural(s.Tools))})
	}
	return rows
}

// statsPercent is a ratio as a percentage with one decimal ("12.3%").
func statsPercent(r float64) string { return strconv.FormatFloat(100*r, 'f', 1, 64) + "%" }

// statsNum is x with at most two decimals, trailing zeros dropped ("2.1", "1500").
func statsNum(x float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(x, 'f', 2, 64), "0"), ".")
}
