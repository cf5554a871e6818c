package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/ab"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/safeio"
)

// What a command does with its output files beyond writing them: clearing
// an older run's before it starts, and, for an A/B that did not finish,
// saying what it kept.

// removeOld removes the files at paths (an empty one is skipped) that a
// run is about to write, so that a run that fails leaves none of an older
// run's for a later step to mistake for its own.
func removeOld(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := safeio.RemoveOld(p); err != nil {
			return exit.UsageError(fmt.Errorf("remove the old %s: %w", p, err))
		}
	}
	return nil
}

// writePartial writes what an A/B that failed measured (ab.Outcome's
// WritePartial) and says so. Its error, when it could not write one, has
// the exit code of a failed run, as the A/B's own has.
func writePartial(stderr io.Writer, o *abOptions, res *ab.Outcome) error {
	written, rounds, err := res.WritePartial(o.output, o.baseOutput)
	if len(written) > 0 {
		plural := "s"
		if rounds == 1 {
			plural = ""
		}
		fmt.Fprintf(stderr, "the A/B did not finish: wrote what it measured (%d complete round%s) to %s, marked incomplete; no verdict, and compare, gate, baseline promote and export refuse them\n",
			rounds, plural, strings.Join(written, " and "))
	}
	if err != nil {
		return exit.RunError(err)
	}
	return nil
}
