package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/workload"
)

func newWorkloadCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Work with workload files (request traces)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSynthCmd(stdout, stderr))
	cmd.AddCommand(newImportCmd(stdout, stderr))
	cmd.AddCommand(newStatsCmd(stdout, stderr))
	return cmd
}

type synthOptions struct {
	requests               int
	input, output          string
	prefixCount, prefixLen int
	prefixRate             float64
	api, models            string
	seed                   int64
	out                    string
}

func newSynthCmd(stdout, stderr io.Writer) *cobra.Command {
	var o synthOptions
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Write a synthetic workload from distributions of input and output length",
		Long: `synth writes a workload (JSONL) of --requests requests whose prompt lengths
(in words: perfgate's simulator counts one token per word; real tokenizers
differ) follow --input-tokens and whose max_tokens follow --output-tokens.
The same flags and seed always write the same file.

A distribution is TYPE[:PARAM=VALUE,...]:
  fixed:128                                  always 128
  uniform:min=16,max=512                     integers in [min, max]
  normal:mean=256,stddev=64                  clamped to >= 1
  lognormal:mean=512,stddev=400,max=4096     mean and stddev of the lengths themselves
  empirical:file=lengths.txt                 one length a line, drawn uniformly
Every type also takes min and max, which clamp.

--prefix-count N --prefix-length L --prefix-rate R starts a share R of the
requests with one of N shared prefixes of L words, to exercise prefix caching.

--models NAME:WEIGHT,... makes each request name a model drawn by weight (a
multi-LoRA deployment's adapters: sql-lora:0.6,chat-lora:0.3,base:0.1); the
lengths and texts are those the same flags give without it.`,
		Example: `  perfgate workload synth --requests 500 --input-tokens lognormal:mean=600,stddev=500,max=4000 \
      --output-tokens uniform:min=64,max=384 --seed 7 -o workloads/synth.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSynth(o, stdout)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.requests, "requests", "n", 100, "number of requests")
	f.StringVar(&o.input, "input-tokens", "lognormal:mean=512,stddev=384,min=8,max=8192", "prompt length distribution (words)")
	f.StringVar(&o.output, "output-tokens", "lognormal:mean=192,stddev=128,min=8,max=1024", "max_tokens distribution")
	f.IntVar(&o.prefixCount, "prefix-count", 0, "number of distinct shared prefixes (0: none)")
	f.IntVar(&o.prefixLen, "prefix-length", 0, "words in each shared prefix")
	f.Float64Var(&o.prefixRate, "prefix-rate", 0, "share of requests that start with a shared prefix, in (0,1]")
	f.StringVar(&o.api, "api", "chat", "request kind: chat (messages) or completions (prompt)")
	f.StringVar(&o.models, "models", "", "mix of models (adapters) by weight, NAME:WEIGHT comma-separated; each request names one (default: none, the target's)")
	f.Int64Var(&o.seed, "seed", 1, "random seed")
	f.StringVarP(&o.out, "output", "o", "-", "file to write (- for stdout)")
	addAliases(cmd, alias{Old: "out", To: "output"})
	return cmd
}

func runSynth(o synthOptions, stdout io.Writer) error {
	spec := workload.SynthSpec{Requests: o.requests, API: o.api}
	var errs []error
	var err error
	if spec.Input, err = workload.ParseDist(o.input); err != nil {
		errs = append(errs, fmt.Errorf("--input-tokens: %w", err))
	}
	if spec.Output, err = workload.ParseDist(o.output); err != nil {
		errs = append(errs, fmt.Errorf("--output-tokens: %w", err))
	}
	if o.models != "" {
		if spec.Models, err = workload.ParseModels(o.models); err != nil {
			errs = append(errs, fmt.Errorf("--models: %w", err))
		}
	}
	if o.prefixCount != 0 || o.prefixLen != 0 || o.prefixRate != 0 {
		spec.Prefix = &workload.PrefixSpec{Count: o.prefixCount, Length: o.prefixLen, Rate: o.prefixRate}
	}
	if len(errs) == 0 {
		for _, p := range spec.Problems() {
			errs = append(errs, errors.New(flagFor(p.Field)+": "+p.Msg))
		}
	}
	if len(errs) > 0 {
		return exit.UsageError(errors.Join(errs...))
	}
	reqs, err := workload.Synthesize(spec, ".", o.seed)
	if err != nil {
		return exit.UsageError(err)
	}
	// Written whole or not at all: a failed write leaves the old file.
	return writeWorkload(o.out, reqs, stdout)
}

// flagFor names the flag behind a SynthSpec field path.
func flagFor(field string) string {
	for prefix, flag := range map[string]string{
		"input":        "--input-tokens",
		"output":       "--output-tokens",
		"prefix.count": "--prefix-count", "prefix.length": "--prefix-length", "prefix.rate": "--prefix-rate",
		"requests": "--requests", "api": "--api", "models": "--models",
	} {
		if field == prefix || strings.HasPrefix(field, prefix+".") || strings.HasPrefix(field, prefix+"[") {
			return flag + " (" + field + ")"
		}
	}
	return field
}
