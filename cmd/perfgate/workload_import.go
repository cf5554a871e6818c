package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/traceimport"
	"github.com/perfgate/perfgate/internal/workload"
)

// importOptions are the flags of `perfgate workload import`.
type importOptions struct {
	from, out, maxTokensFrom, redactKeyFile        string
	maxTokens, maxOutput, blockSize                int
	seed                                           int64
	thinkMS                                        float64
	sessions, forceOutput, skipUnsupported, models bool
	redact                                         bool
}

func newImportCmd(stdout, stderr io.Writer) *cobra.Command {
	var o importOptions
	cmd := &cobra.Command{
		Use:   "import --from FORMAT [flags] FILE",
		Short: "Convert another tool's requests or trace into a perfgate workload",
		Long: `import reads FILE in another tool's format and writes a perfgate workload
(JSONL) to --output. Formats (docs/workloads.md says what each keeps and drops):
  openai    JSONL of Chat Completions / Completions bodies, Batch API lines,
            or logged {"timestamp", "body"} lines (timestamps become arrival_ms)
  sharegpt  ShareGPT conversations (vLLM's benchmark data): the first human
            turn of each, or --sessions for whole conversations
  mooncake  Mooncake traces: prompts synthesised so shared hash blocks share text
  aiperf    AIPerf / genai-perf single-turn and multi-turn JSONL

A summary on stderr says how many requests were written and what was dropped
or skipped, and why. --redact replaces every word with keyed filler of the
same length, so a workload from private traffic can be committed.`,
		Example: `  perfgate workload import --from openai logs.jsonl -o workloads/prod.jsonl
  perfgate workload import --from sharegpt --sessions --think-time 2000 sharegpt.json -o workloads/chat.jsonl
  perfgate workload import --from mooncake --force-output trace.jsonl -o workloads/mooncake.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkImportFlags(cmd.Flags().Changed, o); err != nil {
				return err
			}
			var think *float64
			if cmd.Flags().Changed("think-time") {
				think = &o.thinkMS
			}
			return runImport(o, think, args[0], stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "source format: openai, sharegpt, mooncake, aiperf (required)")
	f.StringVarP(&o.out, "output", "o", "-", "file to write (- for stdout)")
	f.IntVar(&o.maxTokens, "max-tokens", 0, "max_tokens for a source request that has none (0: such a request is an error)")
	f.IntVar(&o.maxOutput, "max-output", traceimport.DefaultMaxOutput, "sharegpt: the largest max_tokens a recorded reply gives")
	f.StringVar(&o.maxTokensFrom, "max-tokens-from", "reply", "sharegpt: reply (the recorded answer's length in words) or fixed:N")
	f.BoolVar(&o.sessions, "sessions", false, "sharegpt: import whole conversations as sessions")
	f.Float64Var(&o.thinkMS, "think-time", 0, "sharegpt --sessions: think_ms of every later turn (unset: none)")
	f.IntVar(&o.blockSize, "block-size", traceimport.DefaultBlockSize, "mooncake: tokens (words) per hash id")
	f.Int64Var(&o.seed, "seed", 1, "mooncake: seed of the synthesised block text")
	f.BoolVar(&o.forceOutput, "force-output", false, "set min_tokens = max_tokens and ignore_eos, so engines generate the recorded length")
	f.BoolVar(&o.models, "models", false, "openai: keep each body's model as the request's (the adapters of a multi-LoRA deployment); without it, model is ignored and the target's is sent")
	f.BoolVar(&o.skipUnsupported, "skip-unsupported", false, "skip (and count) requests with image, audio or other non-text content instead of failing")
	f.BoolVar(&o.redact, "redact", false, "replace every word of all text with keyed same-length filler, and source ids with <format>-<n>")
	f.StringVar(&o.redactKeyFile, "redact-key-file", "", "--redact with this key (a file of at least 16 bytes) instead of a random one, for reproducible redaction")
	addAliases(cmd, alias{Old: "out", To: "output"})
	return cmd
}

// importFlagFormat names the flags that belong to one format: given with
// another, they would do nothing, so they are refused.
var importFlagFormat = []struct{ flag, format string }{
	{"sessions", "sharegpt"}, {"max-tokens-from", "sharegpt"}, {"max-output", "sharegpt"},
	{"block-size", "mooncake"}, {"seed", "mooncake"}, {"models", "openai"},
}

// checkImportFlags refuses, as a usage error, a flag given (changed
// reports which were) that does nothing with o's format or o's other
// flags. An unknown or missing --from is left to runImport to report.
func checkImportFlags(changed func(name string) bool, o importOptions) error {
	if !slices.Contains(traceimport.Formats, o.from) {
		return nil
	}
	for _, f := range importFlagFormat {
		if changed(f.flag) && o.from != f.format {
			return exit.UsageError(fmt.Errorf("--%s: only with --from %s, not %s", f.flag, f.format, o.from))
		}
	}
	if changed("think-time") && !o.sessions {
		return exit.UsageError(errors.New("--think-time: only with --sessions (--from sharegpt)"))
	}
	if changed("redact-key-file") && !o.redact {
		return exit.UsageError(errors.New("--redact-key-file: only with --redact"))
	}
	return nil
}

// runImport imports path and writes the workload and the summary.
func runImport(o importOptions, think *float64, path string, stdout, stderr io.Writer) error {
	if o.from == "" {
		return exit.UsageError(fmt.Errorf("--from: required; want one of openai, sharegpt, mooncake, aiperf"))
	}
	opts := traceimport.Options{
		MaxTokens: o.maxTokens, MaxOutput: o.maxOutput, MaxTokensFrom: o.maxTokensFrom,
		Sessions: o.sessions, ThinkMS: think, BlockSize: o.blockSize, Seed: o.seed,
		ForceOutput: o.forceOutput, SkipUnsupported: o.skipUnsupported, KeepModels: o.models,
	}
	keyNote := ""
	switch {
	case o.redactKeyFile != "" && !o.redact:
		return exit.UsageError(errors.New("--redact-key-file: only with --redact"))
	case o.redactKeyFile != "":
		key, err := safeio.ReadFile(o.redactKeyFile, 1<<20)
		if err != nil {
			return exit.UsageError(fmt.Errorf("--redact-key-file: %w", err))
		}
		if opts.Redact, err = traceimport.NewRedactor(key); err != nil {
			return exit.UsageError(fmt.Errorf("--redact-key-file %s: %w", o.redactKeyFile, err))
		}
		keyNote = "redacted with the key in " + o.redactKeyFile
	case o.redact:
		opts.Redact = traceimport.NewRandomRedactor()
		keyNote = "redacted with a random key, now forgotten"
	}
	f, err := safeio.OpenRegular(path)
	if err != nil {
		return exit.UsageError(fmt.Errorf("import: %w", err))
	}
	defer f.Close()
	res, err := traceimport.Import(f, path, o.from, opts)
	if err != nil {
		return exit.UsageError(err)
	}
	if err := writeWorkload(o.out, res.Requests, stdout); err != nil {
		return err
	}
	for _, l := range res.Summary.Lines() {
		fmt.Fprintf(stderr, "import: %s\n", l)
	}
	if keyNote != "" {
		fmt.Fprintf(stderr, "import: %s\n", keyNote)
	}
	return nil
}

// writeWorkload writes reqs to out ("-": stdout), whole or not at all.
func writeWorkload(out string, reqs []workload.Request, stdout io.Writer) error {
	if out == "-" {
		if err := workload.Write(stdout, reqs); err != nil {
			return exit.RunError(fmt.Errorf("write workload: %w", err))
		}
		return nil
	}
	f, err := safeio.Create(out, 0o644)
	if err != nil {
		return exit.UsageError(fmt.Errorf("--output: %w", err))
	}
	defer f.Abort()
	if err := workload.Write(f, reqs); err != nil {
		return exit.RunError(fmt.Errorf("write workload: %w", err))
	}
	if err := f.Commit(); err != nil {
		return exit.RunError(fmt.Errorf("write workload: %w", err))
	}
	return nil
}
