package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/safeio"
	"github.com/perfgate/perfgate/internal/sim"
	"github.com/perfgate/perfgate/internal/version"
)

func newSimCmd(stderr io.Writer) *cobra.Command {
	cfg := sim.DefaultConfig()
	var addr, truth string
	var answers []string
	var exitAfter time.Duration
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve a simulated OpenAI-compatible engine with continuous batching",
		Long: `sim serves an OpenAI-compatible streaming API (/v1/chat/completions,
/v1/completions, /v1/models, /health, /version, /metrics with vLLM's metric
names) backed by a model of a continuous-batching engine: a step loop, a batch
of running sequences each emitting one token per step, chunked prefill, a
KV-cache capacity beyond which requests wait, and seeded jitter.

It is a test double for perfgate itself: its defaults approximate a 7-8B model
on one H100 at small batch, and nothing measured on it is a GPU figure. Flags
inject regressions (--slowdown, --jitter, --stall-every/--stall, --error-rate,
--cold-start, --warm-up, --unhealthy-after, --exit-after, --drift). --truth
writes the server-side time of every token, the ground truth perfgate's own
tests measure against.

--kv-policy preempt fills the KV cache as vLLM does: a request is admitted
on its prompt, grows a token a step, and when the cache is full the most
recently admitted are preempted and recomputed (vllm:num_preemptions_total).
--max-model-len refuses longer requests with vLLM's 400, and --oom-tokens
crashes the engine as a CUDA out-of-memory would (connections cut, exit
status 1) on the prefill of a longer one: a headroom search's known limits.

--drift R makes step time drift with wall-clock time, as heat or a noisy
neighbour would: it is multiplied by 1 + R*m, m the minutes since
--drift-epoch (Unix seconds or RFC 3339; by default the simulator's start).
Every simulator given the same epoch sees the same factor at the same instant,
so give one --drift-epoch to both arms of an A/B and to a simulator started
again (swap mode); otherwise each begins a ramp of its own at 1. It exists to
show what measuring base and candidate interleaved cancels.

--answers FILE (an eval suite, repeatable) makes it answer the suite's items:
each right with probability --accuracy, drawn once per item from --seed,
otherwise wrong; any other prompt gets filler text. This exists to test
perfgate's quality gates, not models. With one seed the items right at a
lower accuracy are a subset of those right at a higher one, so two sims with
the same flags answer alike (A/A is truly A/A) and a lower accuracy only turns
right answers wrong.

It runs until interrupted (Ctrl-C or SIGTERM).`,
		Example: `  perfgate sim --addr 127.0.0.1:8000
  perfgate sim --slowdown 1.3 --error-rate 0.01 --truth truth.jsonl
  perfgate sim --answers evals/smoke.jsonl --accuracy 0.8
  perfgate sim --drift 0.3 --drift-epoch "$(date +%s)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Version = version.String()
			if cmd.Flags().Changed("accuracy") && len(answers) == 0 {
				return exit.UsageError(errors.New("--accuracy: needs --answers (the eval suites to answer)"))
			}
			if len(answers) > 0 {
				suites, err := sim.LoadAnswers(answers)
				if err != nil {
					return exit.UsageError(fmt.Errorf("--answers: %w", err))
				}
				cfg.Answers = suites
			}
			var truthFile *safeio.AtomicFile
			if truth != "" {
				// Put in place when the simulator shuts down, whole; a
				// crash (--exit-after) or a failed write leaves none.
				f, err := safeio.Create(truth, 0o644)
				if err != nil {
					return exit.UsageError(fmt.Errorf("--truth: %w", err))
				}
				defer f.Abort()
				truthFile = f
				cfg.Truth = f // the simulator buffers it and flushes on Close
			}
			if err := cfg.Validate(); err != nil {
				return exit.UsageError(err)
			}
			ctx := cmd.Context()
			s, err := sim.Start(ctx, addr, cfg)
			if err != nil {
				return exit.RunError(fmt.Errorf("start simulator: %w", err))
			}
			fmt.Fprintf(stderr, "perfgate sim: serving model %q on %s (a test double: nothing measured on it is a GPU figure)\n", cfg.Model, s.URL())
			if cfg.Drift > 0 {
				fmt.Fprintf(stderr, "perfgate sim: step time drifts +%g%% a minute from %s (give every simulator of a test or an A/B this --drift-epoch)\n",
					100*cfg.Drift, s.DriftEpoch().UTC().Format(time.RFC3339Nano))
			}
			if len(cfg.Answers) > 0 {
				n := 0
				for _, su := range cfg.Answers {
					n += len(su.Items)
				}
				seed := cfg.Seed
				if cfg.AnswerSeed != 0 {
					seed = cfg.AnswerSeed
				}
				fmt.Fprintf(stderr, "perfgate sim: answering %d eval items at accuracy %g, seed %d (to test perfgate's quality gates, not models)\n", n, cfg.Accuracy, seed)
			}
			var crash <-chan time.Time
			if exitAfter > 0 {
				crash = time.After(exitAfter)
			}
			select {
			case <-ctx.Done():
				fmt.Fprintln(stderr, "perfgate sim: shutting down")
				if err := s.Close(); err != nil {
					return err
				}
				if truthFile != nil {
					if err := truthFile.Commit(); err != nil {
						return exit.RunError(fmt.Errorf("--truth: %w", err))
					}
				}
				return nil
			case <-crash:
				// A crash: no graceful shutdown, streams cut, exit status 3.
				fmt.Fprintf(stderr, "perfgate sim: simulated crash after %s (--exit-after)\n", exitAfter)
				return exit.RunError(fmt.Errorf("simulated crash after %s", exitAfter))
			case <-s.Crashed():
				// The engine died (--oom-tokens) and has cut its
				// connections: its last line, then the exit status of a
				// Python process killed by an exception, 1, as a crashed
				// vLLM's; --truth writes none.
				fmt.Fprintln(stderr, s.CrashError())
				return exit.WithCode(1, errors.New("simulated engine crash: CUDA out of memory (--oom-tokens)"))
			}
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8000", "listen address (host:port; port 0 picks a free one)")
	cmd.Flags().DurationVar(&exitAfter, "exit-after", 0, "exit with status 3 this long after start, as a crashing engine would (duration; 0 = never)")
	cmd.Flags().StringVar(&truth, "truth", "", "write each request's server-side times as JSON lines to this file, when the simulator shuts down")
	cmd.Flags().StringSliceVar(&answers, "answers", nil, "answer the items of the eval suite `FILE` (JSONL), right with probability --accuracy, filler for other prompts (repeatable or comma-separated; for testing perfgate's quality gates, not models)")
	sim.RegisterFlags(cmd.Flags(), &cfg)
	return cmd
}
